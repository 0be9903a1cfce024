/**
 * pollActivity, what the workflow packages' triggers call: each new record once across polls, the cursor plain
 * JSON (it survives a restart as text), late records inside the reorg window still found, nothing before the
 * first poll emitted for a contract or a token, the whole chain from its start block.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRecordFilter } from "../../src/activity/filter.js";
import {
  type ActivityCursor,
  type ActivityTarget,
  POLL_INTERVAL_SECONDS,
  pollActivity,
  pollInterval,
} from "../../src/activity/poll.js";
import type { RunContext } from "../../src/core/node.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";

const CONTRACT = "0x5555555555555555555555555555555555555555";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const transfer = (block: number, tokenId: string, n = 0): Rec => ({
  type: "transfer",
  transfer_from: "0x00000000000000000000000000000000000000a0",
  transfer_to: "0x00000000000000000000000000000000000000b0",
  contract_address: CONTRACT,
  token_id: tokenId,
  quantity: 1,
  transaction_hash: hash(block * 10 + n),
  block_hash: hash(block * 11),
  block_number: block,
  transaction_date: new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19),
});

let server: NftportServer;
let ctx: RunContext;

beforeAll(async () => {
  // 130 records of history: more than two pages.
  server = await startNftport({
    byContract: new Map([[CONTRACT, Array.from({ length: 130 }, (_, i) => transfer(2000 + i, String(i % 9)))]]),
  });
  ctx = { config: testConfig({ NFTPORT_BASE_URL: server.url, NFTPORT_API_KEY: VALID_KEY }) };
});
afterAll(() => server.close());

/** A cursor as a host keeps it: written out as text and read back. */
const kept = (cursor: ActivityCursor): ActivityCursor => JSON.parse(JSON.stringify(cursor));
const hashes = (records: unknown[]) => records.map((r) => (r as Rec).transaction_hash);

describe("pollActivity", () => {
  it("by contract: nothing on the first poll, then each new record once, oldest first, late ones in the window too", async () => {
    const target: ActivityTarget = { kind: "contract", contract_address: CONTRACT };
    const first = await pollActivity(target, undefined, ctx);
    expect(first.records).toEqual([]);
    expect(first.cursor.at?.block).toBe(2129);

    const quiet = await pollActivity(target, kept(first.cursor), ctx);
    expect(quiet.records).toEqual([]);

    server.add(CONTRACT, [transfer(2130, "1"), transfer(2131, "2")]);
    const second = await pollActivity(target, kept(quiet.cursor), ctx);
    expect(hashes(second.records)).toEqual([hash(21300), hash(21310)]);

    // A record of a block already read arrives late (within the reorg window), and one more block after it.
    server.add(CONTRACT, [transfer(2125, "3", 5), transfer(2132, "4")]);
    const third = await pollActivity(target, kept(second.cursor), ctx);
    expect(hashes(third.records)).toEqual([hash(21255), hash(21320)]);

    const again = await pollActivity(target, kept(third.cursor), ctx);
    expect(again.records).toEqual([]);
  });

  it("a cursor of another target starts over (nothing emitted), and the type filter is part of the target", async () => {
    const contract = await pollActivity({ kind: "contract", contract_address: CONTRACT }, undefined, ctx);
    const sales = await pollActivity(
      { kind: "contract", contract_address: CONTRACT, type: ["sale"] },
      kept(contract.cursor),
      ctx,
    );
    expect(sales.records).toEqual([]);
    expect(sales.cursor.target).not.toBe(contract.cursor.target);
  });

  it("by token: only that token's new records", async () => {
    const target: ActivityTarget = { kind: "token", contract_address: CONTRACT, token_id: "7" };
    const first = await pollActivity(target, undefined, ctx);
    server.add(CONTRACT, [transfer(2140, "7"), transfer(2141, "8")]);
    const next = await pollActivity(target, kept(first.cursor), ctx);
    expect(hashes(next.records)).toEqual([hash(21400)]);
  });

  it("the whole chain: from the start block on, then only what is new", async () => {
    const target: ActivityTarget = { kind: "chain", start_block: 2120 };
    const first = await pollActivity(target, undefined, ctx);
    const blocks = first.records.map((r) => (r as Rec).block_number!);
    expect(blocks[0]).toBe(2120);
    expect(blocks).toEqual([...blocks].sort((a, b) => a - b));
    expect(new Set(hashes(first.records)).size).toBe(first.records.length);
    server.add(CONTRACT, [transfer(2150, "5")]);
    const next = await pollActivity(target, kept(first.cursor), ctx);
    expect(hashes(next.records)).toEqual([hash(21500)]);
    expect((await pollActivity(target, kept(next.cursor), ctx)).records).toEqual([]);
  });

  it("the whole chain: nothing before the start block, ever, the re-read window included", async () => {
    // The newest record is 2150: a start 3 blocks before it puts the next poll's window (12 blocks back) below it.
    const target: ActivityTarget = { kind: "chain", start_block: 2148 };
    const first = await pollActivity(target, undefined, ctx);
    expect(first.records.map((r) => (r as Rec).block_number)).toEqual([2150]);
    server.add(CONTRACT, [transfer(2151, "6")]);
    const polls = [first];
    for (let i = 0; i < 3; i++) polls.push(await pollActivity(target, kept(polls.at(-1)!.cursor), ctx));
    expect(polls.slice(1).map((p) => hashes(p.records))).toEqual([[hash(21510)], [], []]);
    // A cursor of the same target kept from before the start block moved up: still nothing before it.
    const moved = await pollActivity({ kind: "chain", start_block: 2151 }, kept(first.cursor), ctx);
    expect(moved.records.map((r) => (r as Rec).block_number)).toEqual([2151]);
  });

  it("a contract with a start block: everything from it on is new on the first poll, nothing before it ever", async () => {
    const contract = "0x7777777777777777777777777777777777777777";
    server.add(
      contract,
      [3000, 3001, 3002, 3003].map((block) => ({ ...transfer(block, "1"), contract_address: contract })),
    );
    const target: ActivityTarget = { kind: "contract", contract_address: contract, start_block: 3002 };
    const first = await pollActivity(target, undefined, ctx);
    expect(first.records.map((r) => (r as Rec).block_number)).toEqual([3002, 3003]);
    // Late records before the start, inside the window the next polls read again, and one after it.
    const late = [2995, 3001, 3004].map((block) => ({ ...transfer(block, "2", 1), contract_address: contract }));
    server.add(contract, late);
    const polls = [first];
    for (let i = 0; i < 3; i++) polls.push(await pollActivity(target, kept(polls.at(-1)!.cursor), ctx));
    expect(polls.slice(1).map((p) => p.records.map((r) => (r as Rec).block_number))).toEqual([[3004], [], []]);
  });

  it("a filter keeps the emitted records to its contracts, wallets and quantity; the cursor reads the same", async () => {
    const [kept1, other] = ["0x7e", "0x7f"].map((p) => p.padEnd(42, "0"));
    const at = (block: number, contract: string, to: string, quantity = 1) => ({
      ...transfer(block, "1"),
      contract_address: contract,
      transfer_to: to.padEnd(42, "0"),
      quantity,
    });
    server.add(kept1!, [at(4000, kept1!, "0xc1"), at(4001, kept1!, "0xc2"), at(4002, kept1!, "0xc1", 3)]);
    server.add(other!, [at(4000, other!, "0xc1")]);
    const target: ActivityTarget = { kind: "chain", start_block: 4000 };
    const filter = { contracts: [kept1!], wallets: ["0xc1".padEnd(42, "0")], side: "to" as const, min_quantity: 2 };
    const first = await pollActivity(target, undefined, ctx, { filter });
    expect(first.records.map((r) => (r as Rec).block_number)).toEqual([4002]);
    expect((await pollActivity(target, kept(first.cursor), ctx, { filter })).records).toEqual([]);
  });

  it("the whole chain without a start block is invalid_input naming start_block", async () => {
    await expect(pollActivity({ kind: "chain" }, undefined, ctx)).rejects.toMatchObject({
      code: "invalid_input",
      details: { violations: [{ field: "start_block" }] },
    });
  });

  it("a failing upstream throws the node's error (the cursor the host keeps stays as it was)", async () => {
    const bad = { config: testConfig({ NFTPORT_BASE_URL: server.url, NFTPORT_API_KEY: "not-a-key" }) };
    await expect(pollActivity({ kind: "contract", contract_address: CONTRACT }, undefined, bad)).rejects.toMatchObject({
      code: "upstream_auth",
    });
  });
});

describe("parseRecordFilter: a trigger's filter from its host's fields", () => {
  it("names every bad field at once", () => {
    let error: unknown;
    try {
      parseRecordFilter({ contracts: ["0x1"], wallets: [], side: "owner", min_quantity: 0, extra: 1 });
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: "invalid_input" });
    const fields = (error as { details: { violations: { field: string }[] } }).details.violations.map((v) => v.field);
    expect(fields.sort()).toEqual(
      ["filter.extra", "filter.contracts[0]", "filter.wallets", "filter.side", "filter.min_quantity"].sort(),
    );
    expect(() => parseRecordFilter({ side: "buyer" })).toThrow(/filter.side is only used with wallets/);
  });

  it("never throws anything but invalid_input, whatever it is given", () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 4 }), (given) => {
        try {
          parseRecordFilter(given);
        } catch (err) {
          expect(err).toMatchObject({ code: "invalid_input" });
        }
      }),
      { numRuns: 300, seed: 33 },
    );
  });
});

describe("pollInterval: the Node-RED activity node's wait between polls", () => {
  /** The longest wait a Node timer keeps: past it, Node waits 1 ms instead. */
  const TIMER_MAX = 2 ** 31 - 1;

  it("takes seconds as a number or its text, bounded to what a timer can wait", () => {
    expect(pollInterval(60)).toBe(60_000);
    expect(pollInterval("5")).toBe(5_000);
    expect(pollInterval(" 2.5 ")).toBe(2_500);
    expect(pollInterval(0)).toBe(1_000);
    expect(pollInterval(-3)).toBe(1_000);
    expect(pollInterval(1e12)).toBe(POLL_INTERVAL_SECONDS.max * 1000);
    expect(pollInterval("1e300")).toBe(POLL_INTERVAL_SECONDS.max * 1000);
    expect(pollInterval(Number.POSITIVE_INFINITY)).toBe(POLL_INTERVAL_SECONDS.max * 1000);
    expect(POLL_INTERVAL_SECONDS.max * 1000).toBeLessThanOrEqual(TIMER_MAX);
    for (const notANumber of [undefined, null, "", "soon", Number.NaN, {}, [], true]) {
      expect(pollInterval(notANumber)).toBe(60_000);
    }
  });

  it("is a wait a timer keeps for any input whatsoever", () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.double(), fc.float(), fc.integer().map(String), fc.string()), (given) => {
        const ms = pollInterval(given);
        expect(Number.isSafeInteger(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(1_000);
        expect(ms).toBeLessThanOrEqual(TIMER_MAX);
      }),
    );
  });
});
