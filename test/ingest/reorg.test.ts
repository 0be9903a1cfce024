/**
 * Chain reorganisations (anvil_reorg), following the head, the safe depth, and the service reading the database
 * while `indexChain` writes it.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { runNode } from "../../src/core/node.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { nftTransactionsOnChain } from "../../src/nodes/index.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import {
  type Anvil,
  address,
  emitTx,
  erc721Transfer,
  installEmitters,
  startAnvil,
  topic,
} from "../support/index-helpers.js";

const NFT = address(0x721);
const ALICE = address(0xa11ce);
const BOB = address(0xb0b);
const ZERO = address(0);

let anvil: Anvil;
let backend: IndexBackend;
const dbPath = (name: string) => backend.target(name);

beforeAll(async () => {
  backend = await openBackend("reorg");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

const rows = async (db: string): Promise<ActivityRow[]> => {
  const store = await IndexStore.open(db);
  try {
    return await store.page({ direction: "asc", limit: 100_000 });
  } finally {
    await store.close();
  }
};
const key = (r: ActivityRow) => `${r.block_number}/${r.log_index}/${r.token_id}/${r.block_hash}`;
const head = async () => Number(await anvil.rpc<string>("eth_blockNumber"));
const mintTx = (tokenId: number) => emitTx(NFT, [TOPIC.transfer, topic(ZERO), topic(BOB), topic(tokenId)]);

/** A fresh index of the chain as it is now: what every other index must equal. */
async function truth(name: string): Promise<string[]> {
  const db = await dbPath(name);
  await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false });
  return (await rows(db)).map(key);
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("reorgs", () => {
  it("rolls back records of dropped blocks when re-run after anvil_reorg", async () => {
    for (let id = 1; id <= 6; id++) await erc721Transfer(anvil, NFT, ZERO, ALICE, id);
    const db = await dbPath("between-runs");
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false });
    const before = await rows(db);
    expect(before).toHaveLength(6);
    const tip = await head();

    // Replace the last three blocks: tokens 4..6 vanish, token 100 appears in the new second block.
    await anvil.rpc("anvil_reorg", [3, [[mintTx(100), 1]]]);
    expect(await head()).toBe(tip);
    const result = await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false });
    expect(result.lastBlock).toBe(tip);
    const after = await rows(db);
    expect(after.map((r) => r.token_id)).toEqual(["1", "2", "3", "100"]);
    const dropped = new Set(before.slice(3).map((r) => r.block_hash));
    expect(after.filter((r) => dropped.has(r.block_hash))).toEqual([]);
    expect(after.map(key)).toEqual(await truth("truth-1"));
  });

  it("follows the head and rolls back a reorg while running, also when the chain grows past it", async () => {
    const db = await dbPath("follow");
    const stop = new AbortController();
    let progressed = 0;
    const running = indexChain({
      rpcUrl: anvil.rpcUrl,
      dbPath: db,
      follow: true,
      pollIntervalMs: 20,
      signal: stop.signal,
      onProgress: () => {
        progressed++;
      },
    });
    try {
      const tokens = async () => (await rows(db)).map((r) => r.token_id);
      await until(async () => (await tokens()).includes("100"), "the existing chain");
      await erc721Transfer(anvil, NFT, ZERO, ALICE, 200);
      await until(async () => (await tokens()).includes("200"), "a new block");
      await anvil.rpc("anvil_reorg", [2, [[mintTx(300), 0]]]);
      await until(async () => {
        const now = await tokens();
        return now.includes("300") && !now.includes("200");
      }, "the reorg rolled back");
      // A deeper reorg followed by more blocks before the indexer looks again.
      await anvil.rpc("anvil_reorg", [4, [[mintTx(400), 2]]]);
      await erc721Transfer(anvil, NFT, ZERO, ALICE, 500);
      await until(async () => (await tokens()).includes("500"), "the chain after the second reorg");
    } finally {
      stop.abort();
    }
    const result = await running;
    expect(result.lastBlock).toBeGreaterThan(0);
    expect(progressed).toBeGreaterThan(0);
    expect((await rows(db)).map(key)).toEqual(await truth("truth-2"));
  });

  it("stays safeDepth blocks behind the head", async () => {
    const db = await dbPath("safe-depth");
    const tip = await head();
    const result = await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, safeDepth: 3 });
    expect(result.lastBlock).toBe(tip - 3);
    const all = await rows(db);
    expect(all.length).toBeGreaterThan(0);
    expect(Math.max(...all.map((r) => r.block_number))).toBeLessThanOrEqual(tip - 3);
  });

  it("serves from the database while the indexer writes to it", async () => {
    const db = await dbPath("shared");
    const stop = new AbortController();
    const running = indexChain({
      rpcUrl: anvil.rpcUrl,
      dbPath: db,
      follow: true,
      pollIntervalMs: 10,
      signal: stop.signal,
    });
    const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: db });
    try {
      // Readers never create the index: until the indexer has, they are told there is none.
      await until(async () => {
        const out = await runNode(nftTransactionsOnChain, { query: { page_size: 5 }, params: {} }, { config });
        if (out.error) expect(out.error.details).toMatchObject({ code: "storage_error", index: "missing" });
        return out.error === undefined;
      }, "the indexer to create the index");
      for (let i = 0; i < 20; i++) {
        if (i % 4 === 0) await erc721Transfer(anvil, NFT, ALICE, BOB, 1);
        const out = await runNode(nftTransactionsOnChain, { query: { page_size: 5 }, params: {} }, { config });
        expect(out.error).toBeUndefined();
      }
      const tip = await head();
      await until(async () => {
        const out = await runNode(nftTransactionsOnChain, { query: { from_block: tip }, params: {} }, { config });
        return out.data!.transactions.length === 1;
      }, "the service to see the newest block");
    } finally {
      stop.abort();
    }
    await running;
    expect((await rows(db)).map(key)).toEqual(await truth("truth-3"));
  });
});
