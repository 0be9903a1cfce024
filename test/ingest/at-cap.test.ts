/**
 * A single block whose `eth_getLogs` answer sits at a provider's cap (hosted-providers.md): through a node that
 * answers only the first 10,000 logs of any `eth_getLogs`, a block of 12,000 mints must still be indexed whole
 * (its bloom is full, so only its receipts can tell), and a block of exactly 10,000 stands as read. Compared with
 * the index built straight from anvil: nothing lost, duplicated, added or changed, exit 0.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkActivity } from "../../src/demo/activity.js";
import { deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";
import { allRows, FAST_RETRIES } from "../support/faults-chain.js";
import { runCli } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Faults, startFaultyRpc } from "../upstreams/faulty-rpc.js";

let anvil: DevChain;
let backend: IndexBackend;
let baseline: ActivityRow[];

beforeAll(async () => {
  backend = await openBackend("at-cap");
  anvil = await startAnvil();
  const deployed = await deployAll(anvil.rpcUrl);
  // One transaction a block: 12,000 mints (past the cap), then 10,000 (exactly at it).
  await createBulkActivity(anvil.rpcUrl, deployed, 12_000, 12_000);
  await createBulkActivity(anvil.rpcUrl, deployed, 10_000, 10_000);
  const db = await backend.target("baseline");
  await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false });
  baseline = await allRows(db);
}, 180_000);

afterAll(async () => {
  await anvil?.stop();
  await backend?.close();
});

async function indexThrough(name: string, faults: Faults) {
  const proxy = await startFaultyRpc(anvil.rpcUrl, faults);
  const db = await backend.target(name);
  try {
    const run = await runCli(["index", "--once", "--rpc", proxy.url, "--db", db], { env: FAST_RETRIES });
    return { ...run, rows: await allRows(db), struck: proxy.struck };
  } finally {
    await proxy.close();
  }
}

describe("a single block whose answer sits at a cap", () => {
  it("holds a block of 12,000 mints and one of 10,000 (the baseline)", () => {
    const perBlock = new Map<number, number>();
    for (const row of baseline) perBlock.set(row.block_number, (perBlock.get(row.block_number) ?? 0) + 1);
    expect([...perBlock.values()].sort()).toEqual([10_000, 12_000]);
  });

  const cases: [string, Faults][] = [
    ["read from the block's receipts", { truncateAt: 10_000 }],
    [
      "read from each transaction's receipt where the node lacks eth_getBlockReceipts",
      { truncateAt: 10_000, refuseMethods: ["eth_getBlockReceipts"] },
    ],
  ];
  for (const [name, faults] of cases) {
    it(`loses nothing through a node that answers only the first 10,000 logs: ${name}`, async () => {
      const run = await indexThrough(name.replace(/\W+/g, "_").slice(0, 40), faults);
      expect(run.code, run.stderr).toBe(0);
      expect(run.struck.truncated, "the cap struck").toBeGreaterThan(0);
      if (faults.refuseMethods) expect(run.struck["no eth_getBlockReceipts"]).toBeGreaterThan(0);
      expect(JSON.parse(run.stdout.trim())).toMatchObject({ records: baseline.length });
      expect(run.rows).toEqual(baseline);
    });
  }
});
