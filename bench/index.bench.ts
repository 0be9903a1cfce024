/**
 * The own index (issue 5): ingestion records/s: `indexChain` over a local anvil holding ≥100,000 ERC-721 mint
 * events (src/demo bulk minter), the whole chain, no address filter. Page latency on 1,000,000 records (SQLite
 * and PostgreSQL) is in index-store.bench.ts, parallel backfill in index-backfill.bench.ts.
 *
 * BENCH_INDEX_EVENTS scales it down for a quick look.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { startAnvil } from "../src/demo/devchain.js";
import { indexChain } from "../src/sources/index/indexer.js";
import { closeIndexSources } from "../src/sources/index/source.js";

const EVENTS = Number(process.env.BENCH_INDEX_EVENTS ?? 100_000);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "index");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    await ingestion();
  } finally {
    await closeIndexSources();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function ingestion(): Promise<void> {
  const chain = await startAnvil();
  try {
    const deployed = await deployAll(chain.rpcUrl);
    const made = Date.now();
    await createBulkActivity(chain.rpcUrl, deployed, EVENTS);
    console.log(`chain: ${EVENTS} ERC-721 mint events created in ${((Date.now() - made) / 1000).toFixed(1)} s`);
    const db = join(dir, "ingest.sqlite");
    const started = process.hrtime.bigint();
    const result = await indexChain({ rpcUrl: chain.rpcUrl, dbPath: db, follow: false });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(
      `ingestion: ${result.records} records up to block ${result.lastBlock} in ${seconds.toFixed(2)} s = ` +
        `${Math.round(result.records / seconds)} records/s (whole chain, no address filter, one process)`,
    );
    if (result.records < EVENTS) throw new Error(`expected ${EVENTS} records, indexed ${result.records}`);
  } finally {
    await chain.stop();
  }
}
