/**
 * pollActivity, what the workflow packages' triggers call: each new record once across polls, the cursor plain
 * JSON (it survives a restart as text), late records inside the reorg window still found, nothing before the
 * first poll emitted for a contract or a token, the whole chain from its start block.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActivityCursor, type ActivityTarget, pollActivity } from "../src/activity/poll.js";
import type { RunContext } from "../src/core/node.js";
import { testConfig } from "./helpers.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "./upstreams/nftport.js";

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
