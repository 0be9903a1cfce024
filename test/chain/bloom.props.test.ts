/**
 * Properties of what the completeness checks read from a provider: Keccak-256 equals viem's on any input, a bloom
 * built from items holds each of them, and the bloom of a block's logs equals the header's anvil wrote (checked in
 * test/ingest/faults.test.ts); the readers of providers' words and of answers never throw on hostile input. Fixed seed
 * (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { keccak256 as viemKeccak } from "viem";
import { describe, expect, it } from "vitest";
import { BloomBuilder, bloomBits, bloomHas, keccak256 } from "../../src/chain/bloom.js";
import { rangeRefusal, suggestedBlocks } from "../../src/chain/provider-errors.js";
import { Watch } from "../../src/ingest/completeness.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 19);
const options = { numRuns: RUNS, seed: SEED };
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;

describe("Keccak-256 and blooms", () => {
  it("hash as viem's Keccak-256, across block boundaries", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        expect(hex(keccak256(bytes))).toBe(viemKeccak(bytes));
      }),
      options,
    );
  });

  it("a bloom holds every item added to it, and a watch sees a block holding a watched topic", () => {
    const item = fc.uint8Array({ minLength: 20, maxLength: 32 }).map(hex);
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 50 }), (items) => {
        const bloom = new BloomBuilder();
        for (const i of items) bloom.add(i);
        const text = bloom.hex();
        for (const i of items) expect(bloomHas(text, bloomBits(i))).toBe(true);
        const watch = new Watch([items[0]!], undefined);
        expect(watch.mayHold({ number: "0x1", hash: "0x", parentHash: "0x", timestamp: "0x", logsBloom: text })).toBe(
          true,
        );
      }),
      options,
    );
  });
});

describe("hostile provider answers", () => {
  it("never throw and yield a positive size or nothing", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 5_000 }), fc.integer(), fc.anything(), (message, code, data) => {
        const refusal = rangeRefusal({ code, message, data }, 100, 1_000_000);
        if (refusal?.blocks !== undefined) expect(refusal.blocks).toBeGreaterThan(0);
        const blocks = suggestedBlocks(message, 100);
        if (blocks !== undefined) expect(Number.isSafeInteger(blocks) && blocks > 0).toBe(true);
      }),
      options,
    );
  });

  it("read only the first 1,000 characters of a message (a megabyte of digits would take the patterns hours)", () => {
    expect(suggestedBlocks(`${"1".repeat(1_000_000)} blocks`, 0)).toBeUndefined();
    expect(suggestedBlocks(`max range: 3000 ${"9,".repeat(500_000)}`, 0)).toBe(3000);
    expect(
      rangeRefusal({ code: -32000, message: `${"x".repeat(1_000)} limited to a 10 range` }, 0, 100),
    ).toBeUndefined();
  });

  it("a log of any shape adds to a bloom or is left out, never throws", () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), (address, topics) => {
        new BloomBuilder().addLog({ address, topics });
        new Watch(["0x01"], ["0x02"]).matches({ address, topics } as never);
      }),
      options,
    );
  });
});
