/**
 * The bloom check's hashing on its own (src/sources/index/keccak.ts, bloom.ts) and the at-cap verdict it decides
 * (completeness.ts `settle`): Keccak-256 read straight from hex text equals viem's, a bloom knows when it is full,
 * and a single block's answer at a cap stands when its items make the header's bloom, a full one included. Fixed
 * seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { keccak256 as viemKeccak } from "viem";
import { describe, expect, it } from "vitest";
import { BloomBuilder, isFull } from "../src/sources/index/bloom.js";
import { type Header, keepingItems, settle, Watch } from "../src/sources/index/completeness.js";
import { TOPIC } from "../src/sources/index/decode.js";
import { keccak256Hex, portableKeccak256Hex } from "../src/sources/index/keccak.js";
import { RpcClient } from "../src/sources/index/rpc.js";
import { testConfig } from "./helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 23);
const options = { numRuns: RUNS, seed: SEED };
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString("hex")}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

// keccak256Hex is Node's own Keccak-256 where the running Node has one (26), the portable permutation elsewhere.
describe.each([
  ["the index's", keccak256Hex],
  ["the portable", portableKeccak256Hex],
])("%s Keccak-256 of hex text", (_, keccak) => {
  it("equals viem's on any bytes, in either case, and is undefined for anything not even-length hex", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, upper) => {
        const text = hex(bytes);
        const hash = keccak(upper ? `0x${text.slice(2).toUpperCase()}` : text);
        expect(hash && hex(hash)).toBe(viemKeccak(bytes));
      }),
      options,
    );
    for (const bad of ["", "0x1", "12", "0xzz", "0x0g", "0x0a0g", "0x0a 1", "0xg0"]) {
      expect(keccak(bad)).toBeUndefined();
    }
  });

  it("is undefined for any text that is not even-length hex", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.nat(),
        fc.string({ minLength: 1, maxLength: 2 }),
        (bytes, at, junk) => {
          const text = hex(bytes);
          const i = 2 + (at % (text.length - 1));
          const mangled = text.slice(0, i) + junk + text.slice(i);
          const valid = mangled.length % 2 === 0 && /^0x[0-9a-fA-F]*$/.test(mangled);
          expect(keccak(mangled) === undefined).toBe(!valid);
        },
      ),
      options,
    );
  });
});

/** The mint logs of one dense block: every log watched, one distinct token id each. */
const mints = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    address: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    topics: [TOPIC.transfer, word(0), word(0xb0b), word(i)],
  }));

function bloomOf(logs: { address: string; topics: string[] }[]): string {
  const bloom = new BloomBuilder();
  for (const log of logs) bloom.addLog(log);
  return bloom.hex();
}

/** `settle`'s verdict on one block's answer at a cap whose items are `items` (no call is made when it stands). */
function atCap(bloom: string, logs: { address: string; topics: string[] }[]) {
  const header: Header = { number: "0x7", hash: word(7), parentHash: word(6), timestamp: "0x1", logsBloom: bloom };
  const items: unknown[] = [];
  for (const _ of keepingItems([logs], items)) {
    // the decoder would read the slice here
  }
  const config = testConfig();
  // Unreachable: a verdict that needed the node would fail, not pass.
  const rpc = new RpcClient("http://127.0.0.1:9", { pool: config.pool, timeoutMs: 500, retry: config.indexRpc.retry });
  const watch = new Watch([TOPIC.transfer], undefined);
  return settle(rpc, watch, { kind: "at cap", block: 7 }, new Map([[7, header]]), logs.length, items);
}

describe("the at-cap check of a single block", () => {
  it("stands when the answer's items make the header's bloom, and knows a full bloom", async () => {
    const few = mints(1_000);
    expect(isFull(bloomOf(few))).toBe(false);
    expect(await atCap(bloomOf(few), few)).toBeUndefined();
    const many = mints(10_000);
    const full = bloomOf(many);
    expect(isFull(full)).toBe(true);
    expect(full).toBe(`0x${"f".repeat(512)}`);
    expect(await atCap(full, many)).toBeUndefined();
  });

  it("reads the block again when the answer's items do not make the header's bloom", async () => {
    const answer = mints(1_000);
    const header = bloomOf(mints(1_001));
    // The block has a log the answer lacks: the node is asked for the whole block (here unreachable).
    await expect(atCap(header, answer)).rejects.toThrow();
  });
});
