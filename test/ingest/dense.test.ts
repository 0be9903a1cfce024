/**
 * Ingestion over a dense chain (issue 13): 40,000 ERC-721 mints, 10,000 per block, read through a recording
 * JSON-RPC proxy in front of anvil. The index must come out exact and complete (token ids beyond 2^64), while
 * the ranges read adapt to the density (one dense block at a time once it is known, and before that where the
 * headers' blooms show it), and an answer beyond the size cap is cut off and read again in pieces rather than held
 * whole.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkActivity } from "../../src/demo/activity.js";
import { deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { startJsonRpcProxy } from "../upstreams/jsonrpc.js";

const EVENTS = 40_000;
const PER_BLOCK = 10_000;
const dir = join(tmpdir(), `chainmail-dense-${process.pid}`);

let anvil: DevChain;
let mints: [number, number];

beforeAll(async () => {
  anvil = await startAnvil();
  const deployed = await deployAll(anvil.rpcUrl);
  // Empty blocks before the dense ones: the range grows over them and then meets 10,000 logs per block.
  await fetch(anvil.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_mine", params: ["0x40"] }),
  });
  mints = (await createBulkActivity(anvil.rpcUrl, deployed, EVENTS, PER_BLOCK)).blocks;
});

afterAll(async () => {
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("ingestion over dense blocks", () => {
  it("indexes every mint exactly, reading about one dense block per range", async () => {
    const proxy = await startJsonRpcProxy(anvil.rpcUrl);
    const db = join(dir, "dense.sqlite");
    try {
      const result = await indexChain({ rpcUrl: proxy.url, dbPath: db, follow: false });
      expect(result.records).toBe(EVENTS);
      expect(result.unknownLogs).toBe(0);

      const store = await IndexStore.open(db);
      try {
        expect(await store.count()).toBe(EVENTS);
        const rows = await store.page({ direction: "asc", limit: 1000, fromBlock: mints[0] });
        // The bulk minter numbers tokens from (block + 1) << 64: exact decimal strings, consecutive.
        const first = BigInt(rows[0]!.token_id);
        expect(first).toBeGreaterThan(2n ** 64n);
        expect(rows.map((r) => r.token_id)).toEqual(rows.map((_, i) => (first + BigInt(i)).toString()));
        expect(rows.map((r) => r.log_index)).toEqual(rows.map((_, i) => i));
      } finally {
        await store.close();
      }

      // Ranges planned over the empty blocks before the density was known may span several dense blocks (those
      // beyond the cap are cut off); once it is known, a range is one dense block. So few answers hold more than
      // one dense block, and the logs the node answered in all (cut ones included) stay near the chain's.
      const several = proxy.answers.filter((a) => a.logs > PER_BLOCK);
      expect(several.length).toBeLessThanOrEqual(8);
      expect(proxy.answers.reduce((sum, a) => sum + a.logs, 0)).toBeLessThanOrEqual(3 * EVENTS);
      expect(proxy.answers.filter((a) => a.blocks === 1 && a.logs === PER_BLOCK).length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it("asks no range beyond the size cap where the headers' blooms show the dense blocks coming", async () => {
    // One range at a time doubles over the 64 empty blocks and would then span all four dense ones (~22 MB of
    // logs); the full bloom of its last block splits it before the logs are asked for.
    const proxy = await startJsonRpcProxy(anvil.rpcUrl);
    const db = join(dir, "bloom.sqlite");
    try {
      const result = await indexChain({ rpcUrl: proxy.url, dbPath: db, follow: false, concurrency: 1 });
      expect(result.records).toBe(EVENTS);
      expect(proxy.answers.filter((a) => a.bytes > 8 * 2 ** 20)).toEqual([]);
      expect(proxy.answers.filter((a) => a.logs > 0).every((a) => a.blocks === 1 && a.logs === PER_BLOCK)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("cuts off an answer beyond the size cap and reads its range again in pieces", async () => {
    // Without blooms in the headers, the range grown over the 64 empty blocks spans all four dense ones: ~22 MB
    // of logs, beyond the 8 MiB cap.
    const proxy = await startJsonRpcProxy(anvil.rpcUrl, { withoutBloom: true });
    const db = join(dir, "cut.sqlite");
    try {
      const result = await indexChain({ rpcUrl: proxy.url, dbPath: db, follow: false, concurrency: 1 });
      expect(result.records).toBe(EVENTS);
      const cut = proxy.answers.filter((a) => a.bytes > 8 * 2 ** 20);
      expect(cut.length).toBeGreaterThan(0);
      expect(cut.every((a) => a.blocks > 1)).toBe(true);
    } finally {
      await proxy.close();
    }
  });
});
