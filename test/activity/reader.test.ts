/**
 * src/activity/reader.ts on its own: the window rule (a read's horizon from the floor, the newest record read and
 * the reorg depth), which side of a bound a record lies, and the read itself against a loopback NFTPort: the first
 * record, and every record from the horizon on, oldest first, in batches of whole blocks; by contract and by token
 * (newest first upstream, read again deepest first when long) and on the whole chain (oldest first from the
 * horizon block). Pages that move between the two passes end the read with PagesMoved.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  firstRecord,
  floorOfStart,
  horizonOf,
  isAfter,
  isBefore,
  NO_FLOOR,
  PagesMoved,
  type ReadBatch,
  type ReaderContext,
  type ReadTarget,
  readBatches,
} from "../../src/activity/reader.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../upstreams/nftport.js";

const CONTRACT = "0x5555555555555555555555555555555555555555";
const MOVING = "0x6666666666666666666666666666666666666666";
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const dateOf = (block: number) => new Date(Date.UTC(2023, 0, 1) + block * 12_000).toISOString().slice(0, 19);
const transfer = (contract: string, block: number, n = 0): Rec => ({
  type: "transfer",
  transfer_from: "0x00000000000000000000000000000000000000a0",
  transfer_to: "0x00000000000000000000000000000000000000b0",
  contract_address: contract,
  token_id: String(block % 7),
  quantity: 1,
  transaction_hash: hash(block * 10 + n),
  block_hash: hash(block * 11),
  block_number: block,
  transaction_date: dateOf(block),
});
const at = (block: number | undefined, date = "") =>
  ({ block_number: block, transaction_date: date }) as unknown as TransactionRecord;

/** Blocks 100 to 119, one record each, and a second record in block 110. */
const HISTORY = [...Array.from({ length: 20 }, (_, i) => transfer(CONTRACT, 100 + i)), transfer(CONTRACT, 110, 1)];

let server: NftportServer;
let waits = 0;
let ctx: ReaderContext;

beforeAll(async () => {
  server = await startNftport({
    byContract: new Map([
      [CONTRACT, HISTORY],
      [MOVING, Array.from({ length: 20 }, (_, i) => transfer(MOVING, 300 + i))],
    ]),
  });
  ctx = {
    run: { config: testConfig({ NFTPORT_BASE_URL: server.url, NFTPORT_API_KEY: VALID_KEY }) },
    pageSize: 4,
    pacer: {
      wait: async () => {
        waits++;
      },
    },
  };
});
afterAll(() => server.close());

async function readAll(target: ReadTarget, horizon: { block: number | undefined; date: string }, size: number) {
  const batches: ReadBatch[] = [];
  for await (const batch of readBatches(target, horizon, ctx, size)) batches.push(batch);
  return batches;
}
const blocksOf = (records: readonly TransactionRecord[]) =>
  records.map((r) => (r as unknown as Rec).block_number as number);

describe("the window rule", () => {
  it("reads from the floor's next block when nothing was read, from the chain's start without a floor", () => {
    expect(horizonOf(NO_FLOOR, undefined, 12)).toEqual({ block: 0, date: "" });
    expect(horizonOf(floorOfStart(100), undefined, 12)).toEqual({ block: 100, date: "" });
    expect(floorOfStart(100, "2026-01-01T00:00:00")).toEqual({ block: 99, date: "2026-01-01T00:00:00" });
  });

  it("reads from the newest record read less the reorg depth (in blocks, and in 12-second slots), never below the floor", () => {
    const read = { block: 200, date: "2026-01-01T01:00:00" };
    expect(horizonOf(NO_FLOOR, read, 12)).toEqual({ block: 188, date: "2026-01-01T00:57:36" });
    expect(horizonOf(floorOfStart(195), read, 12)).toEqual({ block: 195, date: "2026-01-01T00:57:36" });
    expect(horizonOf(NO_FLOOR, { block: 5, date: "" }, 12)).toEqual({ block: 0, date: "" });
    const lateFloor = { block: undefined, date: "2026-01-01T00:59:00" };
    expect(horizonOf(lateFloor, read, 12)).toEqual({ block: 188, date: "2026-01-01T00:59:00" });
  });

  it("bounds by date alone when neither the floor nor the newest record read has a block", () => {
    const listing = { block: undefined, date: "2026-01-01T01:00:00" };
    expect(horizonOf(NO_FLOOR, listing, 10)).toEqual({ block: undefined, date: "2026-01-01T00:58:00" });
    expect(horizonOf({ block: undefined, date: "2026-01-01T00:00:00" }, undefined, 10)).toEqual({
      block: undefined,
      date: "2026-01-01T00:00:00",
    });
  });

  it("reads a record before or after a bound by block when both have one, by date otherwise", () => {
    const horizon = { block: 50, date: "2026-01-01T00:00:00" };
    expect(isBefore(at(49, "2027-01-01T00:00:00"), horizon)).toBe(true);
    expect(isBefore(at(50, "2020-01-01T00:00:00"), horizon)).toBe(false);
    expect(isBefore(at(undefined, "2025-12-31T23:59:59"), horizon)).toBe(true);
    expect(isBefore(at(49), { block: undefined, date: "2026-01-01T00:00:00" })).toBe(true);
    expect(isAfter(at(51), floorOfStart(51))).toBe(true);
    expect(isAfter(at(50), floorOfStart(51))).toBe(false);
    expect(isAfter(at(undefined, "2026-01-01T00:00:00"), horizon)).toBe(false);
    expect(isAfter(at(undefined, "2026-01-01T00:00:01"), horizon)).toBe(true);
  });
});

describe("firstRecord", () => {
  it("reads a contract's newest record, and the whole chain's first from a block on, one record asked for", async () => {
    const from = server.requests.length;
    expect(blocksOf([(await firstRecord({ kind: "by-contract", contract_address: CONTRACT }, ctx))!])).toEqual([119]);
    expect(blocksOf([(await firstRecord({ kind: "on-chain" }, ctx, 115))!])).toEqual([115]);
    expect(await firstRecord({ kind: "on-chain" }, ctx, 10_000)).toBeUndefined();
    expect(server.requests.slice(from).map((r) => r.query.get("page_size"))).toEqual(["1", "1", "1"]);
  });
});

describe("readBatches", () => {
  it("reads a contract from the horizon on, oldest first, in one batch when it fits, asking the pacer before each page", async () => {
    const before = waits;
    const requests = server.requests.length;
    const batches = await readAll({ kind: "by-contract", contract_address: CONTRACT }, { block: 112, date: "" }, 100);
    expect(batches).toHaveLength(1);
    expect(batches[0]!.through).toBeUndefined();
    expect(blocksOf(batches[0]!.records)).toEqual([112, 113, 114, 115, 116, 117, 118, 119]);
    expect(waits - before).toBe(server.requests.length - requests);
  });

  it("reads a long read in batches of whole blocks, each saying the newest block it covers, the last one none", async () => {
    const batches = await readAll({ kind: "by-contract", contract_address: CONTRACT }, { block: 105, date: "" }, 5);
    const blocks = batches.map((b) => blocksOf(b.records));
    expect(blocks.flat()).toEqual([105, 106, 107, 108, 109, 110, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119]);
    for (const [i, batch] of batches.entries()) {
      expect(batch.records.length).toBeLessThanOrEqual(5);
      expect(batch.through).toBe(i === batches.length - 1 ? undefined : Math.max(...blocks[i]!));
    }
    // Block 110 holds two records: it is never split between batches.
    expect(blocks.filter((b) => b.includes(110))).toHaveLength(1);
    expect(new Set(batches[0]!.records.map((r) => (r as unknown as Rec).transaction_hash)).size).toBe(5);
  });

  it("reads the whole chain oldest first from the horizon block, the block asked of the upstream", async () => {
    const requests = server.requests.length;
    const batches = await readAll({ kind: "on-chain" }, { block: 117, date: "" }, 100);
    expect(blocksOf(batches.flatMap((b) => b.records))).toEqual([
      117, 118, 119, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316, 317, 318, 319,
    ]);
    expect(server.requests[requests]!.query.get("from_block")).toBe("117");
  });

  it("reads a block larger than a batch as a batch of its own, the blocks after it in the next", async () => {
    const BIG = "0x8888888888888888888888888888888888888888";
    // Pages of 4 from block 500: [500 ×4], [500 ×2, 501, 502], [503].
    server.add(BIG, [
      ...Array.from({ length: 6 }, (_, n) => transfer(BIG, 500, n)),
      ...[501, 502, 503].map((b) => transfer(BIG, b)),
    ]);
    const batches = await readAll({ kind: "on-chain" }, { block: 500, date: "" }, 5);
    expect(batches.map((b) => [blocksOf(b.records), b.through])).toEqual([
      [[500, 500, 500, 500, 500, 500], 500],
      [[501, 502, 503], undefined],
    ]);
  });

  it("does not take a record before the horizon block from an upstream that answers one", async () => {
    const page = { response: "OK", transactions: [transfer(CONTRACT, 116), transfer(CONTRACT, 117)] };
    server.fault({ status: 200, body: JSON.stringify(page) });
    const batches = await readAll({ kind: "on-chain" }, { block: 117, date: "" }, 100);
    expect(blocksOf(batches.flatMap((b) => b.records))).toEqual([117]);
  });

  it("ends a long read with PagesMoved when the pages moved between its two passes, after the batches already read", async () => {
    const read = readBatches({ kind: "by-contract", contract_address: MOVING }, { block: 300, date: "" }, ctx, 5);
    const first = await read.next();
    expect(blocksOf((first.value as ReadBatch).records)).toEqual([300, 301, 302, 303, 304]);
    // New records on top: the upstream's continuations count rows, so the pages read again hold others.
    server.add(MOVING, [transfer(MOVING, 400), transfer(MOVING, 401)]);
    let error: unknown;
    try {
      for (;;) if ((await read.next()).done) break;
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PagesMoved);
  });
});
