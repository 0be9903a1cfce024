/**
 * `chainmail index` through a hosted provider's faults (test/upstreams/faulty-rpc.ts, a real JSON-RPC proxy in
 * front of anvil): for each fault, the index built through the proxy must hold exactly the records of the index
 * built straight from anvil — none lost, duplicated, added or changed — and the command must exit 0, or, where the
 * provider never shows a block complete, stop with a message naming the block and exit non-zero.
 *
 * The chain: the demo's marketplace activity (sales in ETH and WETH, transfers, burns, ERC-1155 batches, the ETH/USD
 * feed) and 8,000 ERC-721 mints, 200 a block: some 60 blocks, all near the head, and answers long enough to be cut.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { createBulkActivity, createLiveSale } from "../../src/demo/activity.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";
import { allRows, buildFaultChain, FAST_RETRIES as FAST, type FaultChain } from "../support/faults-chain.js";
import { runCli } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Faults, startFaultyRpc } from "../upstreams/faulty-rpc.js";

let chain: FaultChain;
let backend: IndexBackend;
let baseline: ActivityRow[];
let head: number;

beforeAll(async () => {
  backend = await openBackend("faults");
  chain = await buildFaultChain(await backend.target("baseline"));
  ({ baseline, head } = chain);
}, 180_000);

afterAll(async () => {
  await chain?.anvil.stop();
  await backend?.close();
});

/** `chainmail index --once` through a proxy with these faults; its exit, output and the index it built. */
async function indexThrough(name: string, faults: Faults, env: Record<string, string> = FAST) {
  const proxy = await startFaultyRpc(chain.anvil.rpcUrl, faults);
  const db = await backend.target(name);
  try {
    const run = await runCli(["index", "--once", "--rpc", proxy.url, "--db", db, ...chain.flags], { env });
    return { ...run, rows: await allRows(db), struck: proxy.struck };
  } finally {
    await proxy.close();
  }
}

// Throttling is waited out at the pace it settles on (a burst of 429s slows every call for a while): longer than the
// default limit on a loaded machine.
describe("the index through a hosted provider's faults", { timeout: 90_000 }, () => {
  it("holds records of every kind over some 60 blocks (the baseline)", () => {
    expect(baseline.length).toBeGreaterThan(8_000);
    expect(new Set(baseline.map((r) => r.kind))).toEqual(new Set(["mint", "transfer", "burn", "sale"]));
    expect(head).toBeGreaterThan(40);
  });

  const cases: [string, Faults][] = [
    ["a lagging backend answering [] for the newest blocks", { lag: { blocks: 30, ms: 1_500, answer: "[]" } }],
    ["a lagging backend answering null", { lag: { blocks: 30, ms: 1_500, answer: "null" } }],
    ["a node answering only the first 1,000 logs of a range", { truncateAt: 1_000 }],
    ["Alchemy's 429 inside a 200 batch answer, for some items", { itemThrottle: 0.3 }],
    ["answers cut in half", { brokenBody: { chance: 0.15, how: "cut" } }],
    ["connections dropped half-way through the answer", { brokenBody: { chance: 0.15, how: "reset" } }],
    ["an HTML 504 for log ranges over 4 blocks", { gateway504Over: 4 }],
    ["an endpoint refusing batches (413, batch size exceeded)", { refuseBatches: true }],
    ["a 3-second burst of 429 without Retry-After", { throttleBurst: { ms: 3_000 } }],
    ["Alchemy's range cap", { rangeCap: { provider: "alchemy", blocks: 3 } }],
    ["Infura's range cap", { rangeCap: { provider: "infura", blocks: 3 } }],
    ["QuickNode's range cap (-32614, HTTP 413)", { rangeCap: { provider: "quicknode", blocks: 3 } }],
    ["a geth-based node's range cap", { rangeCap: { provider: "geth", blocks: 3 } }],
  ];
  for (const [name, faults] of cases) {
    it(`loses, duplicates, adds and changes nothing: ${name}`, async () => {
      const run = await indexThrough(name.replace(/\W+/g, "_").slice(0, 40), faults);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/Error|failed/);
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ last_block: head, records: baseline.length });
      expect(Object.keys(run.struck).length, "the fault struck").toBeGreaterThan(0);
      expect(run.rows).toEqual(baseline);
    });
  }

  it("says what the provider did, in its words, while it waits", async () => {
    const run = await indexThrough("notices", { throttleBurst: { ms: 1_500 } });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/is throttling \(HTTP 429: .*Too Many Requests.*; no Retry-After\): waiting/);
    expect(run.stderr).toMatch(/serves again after \d+/);
    expect(run.stderr).not.toMatch(/--rpc/);
    expect(run.rows).toEqual(baseline);
  });

  // Apart from the throttling above: once paced slowly, the headers read ahead go in pieces of one, never a batch.
  it("says in the provider's words that it refuses batches, and goes on one request at a time", async () => {
    const run = await indexThrough("batches", { refuseBatches: true });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /refuses batch requests \(HTTP 413: .*batch size exceeded.*\): calling it one request at a time/,
    );
    expect(run.rows).toEqual(baseline);
  });

  it("stops with a message naming the block when no backend has it, and keeps every block before it", async () => {
    const run = await indexThrough(
      "never",
      { lag: { blocks: 5, ms: 3_600_000, answer: "[]", share: 1 } },
      { ...FAST, INDEX_RPC_LAG_BUDGET_MS: "2000" },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/has not shown the logs of block \d+ complete in \d+ s/);
    expect(run.stderr).toMatch(/--safe-depth|INDEX_RPC_LAG_BUDGET_MS/);
    const block = Number(/block (\d+) complete/.exec(run.stderr)![1]);
    const upTo = Number(/complete up to block (\d+)/.exec(run.stderr)![1]);
    expect(block).toBeGreaterThan(head - 5);
    expect(upTo).toBeLessThan(block);
    expect(run.rows).toEqual(baseline.filter((r) => r.block_number <= upTo));
  });

  it("stops on throttling that outlasts the budget with --once, saying how long it waited", async () => {
    const run = await indexThrough(
      "throttled",
      { throttleBurst: { ms: 3_600_000 } },
      { ...FAST, INDEX_RPC_THROTTLE_BUDGET_MS: "1500" },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/kept throttling for \d+ s \(\d+ answers, the last: HTTP 429/);
    expect(run.stderr).toMatch(/INDEX_RPC_THROTTLE_BUDGET_MS/);
    expect(run.stderr).not.toMatch(/Check the --rpc/);
  });

  // Last: it adds blocks to the chain.
  it("follows the head through a lagging, throttling, cutting provider while sales arrive, and loses nothing", async () => {
    const proxy = await startFaultyRpc(chain.anvil.rpcUrl, {
      lag: { blocks: 3, ms: 1_000, answer: "[]" },
      itemThrottle: 0.1,
      // Often enough that a cut body strikes in every run: a follower woken by new heads makes few calls.
      brokenBody: { chance: 0.15, how: "cut" },
      seed: 7,
    });
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
      onProgress: (p) => {
        reached = Math.max(reached, p.block);
      },
      ...chain.options,
    });
    try {
      const until = async (block: number) => {
        for (let i = 0; i < 600 && reached < block; i++) await new Promise((r) => setTimeout(r, 50));
        expect(reached).toBeGreaterThanOrEqual(block);
      };
      await until(head);
      // Live activity, a block at a time, while the follower reads the head through the faults.
      let last = head;
      for (let i = 0; i < 3; i++) {
        last = (await createLiveSale(chain.anvil.rpcUrl, chain.deployed, { tokenId: 9_000n + BigInt(i) })).blockNumber;
        last = (await createBulkActivity(chain.anvil.rpcUrl, chain.deployed, 300, 150)).blocks[1];
      }
      await until(last);
    } finally {
      stop.abort();
      await follower;
      await proxy.close();
    }
    const straight = await backend.target("follow_baseline");
    await indexChain({ rpcUrl: chain.anvil.rpcUrl, dbPath: straight, follow: false, ...chain.options });
    const expected = await allRows(straight);
    expect(expected.length).toBeGreaterThan(baseline.length + 900);
    expect((await allRows(db)).filter((r) => r.block_number <= expected.at(-1)!.block_number)).toEqual(expected);
    expect(Object.keys(proxy.struck)).toEqual(expect.arrayContaining(["item 429", "body cut"]));
  });
});
