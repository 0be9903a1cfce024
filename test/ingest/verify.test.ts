/**
 * Making sure near the head (`chainmail index --verify-head`, `--verify-rpc`), through a real JSON-RPC proxy in
 * front of anvil (test/upstreams/faulty-rpc.ts) whose backend is part-way through a fresh block: it answers only
 * the first 2 of the block's 300 logs, by range and by block hash alike. Each run is compared with the index built
 * straight from anvil, and its exit status asserted:
 * - without verification the block's 298 other records are lost, exit 0: the documented limit, shown as it is;
 * - with --verify-head, nothing is lost (the block's receipts hold its logs), also where the node takes
 *   `eth_getBlockReceipts` by block number only;
 * - with --verify-rpc, nothing is lost: the block is read again until the two endpoints agree, and where they never
 *   do, the run stops naming the block, nothing of it stored; a second endpoint that is down stops the run, named.
 * - following the head with the library's `verifyHead`, a fresh block answered in part is indexed whole as it arrives;
 * - receipts asked by number that are of another block than the header's are taken as the chain moving.
 * And the extra calls each option costs, counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../src/chain/rpc.js";
import { loadConfig } from "../../src/core/config.js";
import { createActivity, createBulkActivity } from "../../src/demo/activity.js";
import { type Deployed, deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { type Header, readReceipts, Watch } from "../../src/ingest/completeness.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";
import { allRows, FAST_RETRIES as FAST } from "../support/faults-chain.js";
import { runCli, testConfig } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Faults, startFaultyRpc } from "../upstreams/faulty-rpc.js";
import { startJsonRpcProxy } from "../upstreams/jsonrpc.js";

let anvil: DevChain;
let backend: IndexBackend;
let baseline: ActivityRow[];
let deployed: Deployed;
let options: { seaport: string[]; ethTokens: string[]; priceFeed: string };
let flags: string[];
/** The block the faulty backend is part-way through: 300 mints in one transaction. */
let partialBlock: number;
/** A block of 1,200 mints in one transaction. */
let capBlock: number;
let head: number;

beforeAll(async () => {
  backend = await openBackend("verify");
  anvil = await startAnvil();
  deployed = await deployAll(anvil.rpcUrl);
  await createActivity(anvil.rpcUrl, deployed);
  // Two blocks of 300 mints, one transaction each: the first is the partial one.
  partialBlock = (await createBulkActivity(anvil.rpcUrl, deployed, 600, 300)).blocks[0];
  // A block of 1,200: past a cap of 1,000, where only its receipts tell.
  capBlock = (await createBulkActivity(anvil.rpcUrl, deployed, 1_200, 1_200)).blocks[0];
  options = { seaport: [deployed.seaport], ethTokens: [deployed.weth], priceFeed: deployed.priceFeed };
  flags = ["--seaport", deployed.seaport, "--eth-tokens", deployed.weth, "--price-feed", deployed.priceFeed];
  const db = await backend.target("baseline");
  head = (await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, ...options })).lastBlock;
  baseline = await allRows(db);
}, 180_000);

afterAll(async () => {
  await anvil?.stop();
  await backend?.close();
});

/** Only the first 2 of the partial block's 300 logs, by range and by hash (for ever unless `ms` is given). */
const partial = (ms?: number): Faults => ({ partialBlock: { block: partialBlock, keep: 2, ...(ms ? { ms } : {}) } });

/** `chainmail index --once` through a faulty proxy, with these flags; its exit, output and the index it built. */
async function indexThrough(name: string, faults: Faults, extra: (proxy: string) => string[], env = FAST) {
  const proxy = await startFaultyRpc(anvil.rpcUrl, faults);
  const db = await backend.target(name);
  try {
    const args = ["index", "--once", "--rpc", proxy.url, "--db", db, ...flags, ...extra(proxy.url)];
    const run = await runCli(args, { env });
    return { ...run, rows: await allRows(db), struck: proxy.struck };
  } finally {
    await proxy.close();
  }
}

const inBlock = (rows: ActivityRow[], block: number) => rows.filter((r) => r.block_number === block);

describe("a backend part-way through a fresh block (2 of its 300 logs, by range and by hash)", () => {
  it("is a block of 300 mints near the head in the baseline", () => {
    expect(inBlock(baseline, partialBlock)).toHaveLength(300);
    expect(head - partialBlock).toBeLessThan(64);
  });

  it("without verification, loses the block's other 298 records and exits 0 (the documented limit)", async () => {
    const run = await indexThrough("unverified", partial(), () => []);
    expect(run.code, run.stderr).toBe(0);
    expect(run.struck["partial block"]).toBeGreaterThan(0);
    // The gap, as it is: the block's first 2 records only, everything else as the baseline.
    const kept = inBlock(baseline, partialBlock).slice(0, 2);
    const expected = baseline.filter((r) => r.block_number !== partialBlock || kept.includes(r));
    expect(expected).toHaveLength(baseline.length - 298);
    expect(run.rows).toEqual(expected);
  });

  it("with --verify-head, loses nothing: the block's receipts hold its 300 logs (exit 0)", async () => {
    const run = await indexThrough("verify_head", partial(), () => ["--verify-head"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.struck["partial block"]).toBeGreaterThan(0);
    expect(run.stderr).toMatch(new RegExp(`block ${partialBlock}: the logs answer held 2 of the 300 watched logs`));
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ last_block: head, records: baseline.length });
    expect(run.rows).toEqual(baseline);
  });

  it("with --verify-head through a node that takes eth_getBlockReceipts by number only: complete, exit 0", async () => {
    const run = await indexThrough("by_number", { ...partial(), receiptsByNumberOnly: true }, () => ["--verify-head"]);
    expect(run.code, run.stderr).toBe(0);
    // Refused by hash once (the reads meanwhile wait for it); every later block is asked by number at once.
    expect(run.struck["receipts by hash refused"]).toBe(1);
    expect(new Set(baseline.map((r) => r.block_number)).size).toBeGreaterThan(8);
    expect(run.rows).toEqual(baseline);
  });

  it("with --verify-rpc, reads the block again until the two endpoints agree, and loses nothing (exit 0)", async () => {
    const run = await indexThrough("verify_rpc", partial(1_500), () => ["--verify-rpc", anvil.rpcUrl]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.struck["partial block"]).toBeGreaterThan(0);
    expect(run.stderr).toMatch(
      new RegExp(`block ${partialBlock} is not complete .*the second endpoint \\(--verify-rpc\\) at .* answered 300`),
    );
    expect(run.rows).toEqual(baseline);
  });

  it("with --verify-rpc, never stores a block the two endpoints keep disagreeing on: stops naming it", async () => {
    const run = await indexThrough("disagree", partial(), () => ["--verify-rpc", anvil.rpcUrl], {
      ...FAST,
      INDEX_RPC_LAG_BUDGET_MS: "2000",
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(new RegExp(`has not shown the logs of block ${partialBlock} complete`));
    expect(run.stderr).toMatch(/the second endpoint \(--verify-rpc\)/);
    const upTo = Number(/complete up to block (\d+)/.exec(run.stderr)![1]);
    expect(upTo).toBeLessThan(partialBlock);
    expect(run.rows).toEqual(baseline.filter((r) => r.block_number <= upTo));
  });

  it("stops naming the second endpoint when it is down, never skipping it", async () => {
    const down = await startJsonRpcProxy(anvil.rpcUrl);
    const url = down.url;
    await down.close();
    const run = await indexThrough("second_down", {}, () => ["--verify-rpc", url]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(`The second JSON-RPC endpoint \\(--verify-rpc\\) at ${new URL(url).origin} could not be read`),
    );
    // Nothing near the head was kept unchecked: the whole demo chain is within the head window.
    expect(run.rows).toEqual([]);
  });
});

describe("a node that takes eth_getBlockReceipts by block number only", () => {
  it("does not stop the index where a block's answer sits at a cap: its receipts are read by number (exit 0)", async () => {
    const run = await indexThrough("at_cap_by_number", { truncateAt: 1_000, receiptsByNumberOnly: true }, () => []);
    expect(run.code, run.stderr).toBe(0);
    expect(run.struck).toMatchObject({ truncated: expect.any(Number), "receipts by hash refused": 1 });
    expect(inBlock(run.rows, capBlock)).toHaveLength(1_200);
    expect(run.rows).toEqual(baseline);
  });

  it("takes receipts of another block than the header's, asked by number, as the chain moved: read again", async () => {
    const proxy = await startFaultyRpc(anvil.rpcUrl, { receiptsByNumberOnly: true });
    try {
      const config = testConfig();
      const rpc = new RpcClient(proxy.url, { pool: config.pool, timeoutMs: 5_000, retry: config.indexRpc.retry });
      const header = await rpc.call<Header>("eth_getBlockByNumber", [`0x${capBlock.toString(16)}`, false]);
      const watch = new Watch([TOPIC.transfer], undefined);
      expect(await readReceipts(rpc, header, watch)).toMatchObject({ logs: { length: 1_200 } });
      // The header read before a reorg replaced the block: its receipts, asked by number, are the new block's.
      const replaced = { ...header, hash: `0x${"ab".repeat(32)}` };
      expect(await readReceipts(rpc, replaced, watch)).toEqual({
        incomplete: `asked by number, it answered receipts of block ${header.hash}, not of the header's ${replaced.hash}: the chain moved under the read`,
      });
      // Learnt at the first read: the second is asked by number at once.
      expect(proxy.struck["receipts by hash refused"]).toBe(1);
    } finally {
      await proxy.close();
    }
  });

  it("stops naming the block where the node serves its receipts no way at all, keeping every block before it", async () => {
    const refuseMethods = ["eth_getBlockReceipts", "eth_getTransactionReceipt"];
    const run = await indexThrough("no_receipts", { truncateAt: 1_000, refuseMethods }, () => []);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(new RegExp(`refused the receipts of block ${capBlock}: eth_getTransactionReceipt`));
    expect(run.rows).toEqual(baseline.filter((r) => r.block_number < capBlock));
  });
});

describe("what --verify-head and --verify-rpc cost", () => {
  /** Calls by method of a clean `--once` run through a counting proxy. */
  async function calls(name: string, extra: string[], through = anvil.rpcUrl) {
    const counter = await startJsonRpcProxy(through);
    try {
      const db = await backend.target(name);
      // One range at a time: the same reads in the same order, run after run.
      const args = ["index", "--once", "--concurrency", "1", "--rpc", counter.url, "--db", db, ...flags, ...extra];
      const run = await runCli(args, { env: FAST });
      expect(run.code, run.stderr).toBe(0);
      expect(await allRows(db)).toEqual(baseline);
      const byMethod: Record<string, number> = {};
      for (const request of counter.requests)
        for (const method of request.methods) byMethod[method] = (byMethod[method] ?? 0) + 1;
      return byMethod;
    } finally {
      await counter.close();
    }
  }

  it("--verify-head: one eth_getBlockReceipts per head-window block that may hold a watched log, nothing else", async () => {
    const plain = await calls("cost_plain", []);
    const verified = await calls("cost_head", ["--verify-head"]);
    const blocksWithRecords = new Set(baseline.map((r) => r.block_number)).size;
    const receipts = verified.eth_getBlockReceipts ?? 0;
    // Every block with a record is checked; blocks without one only where their bloom may hold a watched log.
    expect(receipts).toBeGreaterThanOrEqual(blocksWithRecords);
    expect(receipts).toBeLessThanOrEqual(head + 1);
    const { eth_getBlockReceipts: _, ...others } = verified;
    expect(others).toEqual(plain);
  });

  it("--verify-rpc: one eth_getLogs at the second endpoint per range read near the head, nothing more at the first", async () => {
    const second = await startJsonRpcProxy(anvil.rpcUrl);
    try {
      const plain = await calls("cost_plain_2", []);
      const verified = await calls("cost_rpc", ["--verify-rpc", second.url]);
      expect(verified).toEqual(plain);
      const asked = second.requests.flatMap((r) => r.methods);
      expect(new Set(asked)).toEqual(new Set(["eth_getLogs"]));
      // One per range (the first endpoint's other eth_getLogs read a suspect block by hash).
      expect(asked.length).toBeGreaterThan(0);
      expect(asked.length).toBeLessThanOrEqual(plain.eth_getLogs!);
    } finally {
      await second.close();
    }
  });
});

describe("--verify-rpc at the command line", () => {
  it("is refused at start unless an absolute http(s) URL other than --rpc, naming the flag, never the value", async () => {
    for (const bad of ["not a url", "ftp://127.0.0.1:1/", "127.0.0.1:8545", "http://127.0.0.1:1/key-abc123 x"]) {
      const run = await runCli(["index", "--once", "--rpc", "http://127.0.0.1:1/", "--verify-rpc", bad]);
      expect(run.code, bad).toBe(2);
      expect(run.stderr).toMatch(/--verify-rpc is invalid: must be an absolute http:\/\/ or https:\/\/ URL/);
      expect(run.stderr).not.toContain(bad);
    }
    const same = await runCli([
      "index",
      "--once",
      "--rpc",
      "http://127.0.0.1:1/",
      "--verify-rpc",
      "http://127.0.0.1:1/",
    ]);
    expect(same.code).toBe(2);
    expect(same.stderr).toMatch(/--verify-rpc is invalid: names the endpoint being indexed/);
  });
});

// Last: it adds a block to the chain.
describe("following the head with the library's verifyHead", () => {
  it("indexes a fresh block whose logs a backend answers in part whole, as it arrives", async () => {
    const next = head + 1;
    const proxy = await startFaultyRpc(anvil.rpcUrl, { partialBlock: { block: next, keep: 2 } });
    const db = await backend.target("follow");
    const stop = new AbortController();
    let reached = -1;
    const follower = indexChain({
      rpcUrl: proxy.url,
      dbPath: db,
      follow: true,
      pollIntervalMs: 100,
      signal: stop.signal,
      config: loadConfig(FAST),
      verifyHead: true,
      onProgress: (p) => {
        reached = Math.max(reached, p.block);
      },
      ...options,
    });
    const until = async (block: number) => {
      for (let i = 0; i < 600 && reached < block; i++) await new Promise((r) => setTimeout(r, 50));
      expect(reached).toBeGreaterThanOrEqual(block);
    };
    try {
      await until(head);
      expect((await createBulkActivity(anvil.rpcUrl, deployed, 300, 300)).blocks[0]).toBe(next);
      await until(next);
    } finally {
      stop.abort();
      await follower;
      await proxy.close();
    }
    const straight = await backend.target("follow_baseline");
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: straight, follow: false, ...options });
    const expected = await allRows(straight);
    expect(inBlock(expected, next)).toHaveLength(300);
    expect(proxy.struck["partial block"]).toBeGreaterThan(0);
    expect((await allRows(db)).filter((r) => r.block_number <= next)).toEqual(expected);
  });
});
