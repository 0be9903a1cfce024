/**
 * Parallel backfill: `indexChain` over a local JSON-RPC proxy (test/upstreams/jsonrpc.ts) that adds 100 ms to
 * every call and serves at most 10 blocks per `eth_getLogs` (refusing larger ranges with Alchemy's hint, as a
 * provider's 10,000-log cap does on mainnet, where a block carries about 1,000 Transfer logs), in front of anvil
 * holding 100,000 ERC-721 mint events, 100 per block. Records/s with `concurrency` 1, 4, 8 and 16 on SQLite and on
 * PostgreSQL, and the speedup over 1 (the goal, issue 24: at least 6× at 8; 8× is the limit).
 *
 * BENCH_BACKFILL_EVENTS scales it down, BENCH_BACKFILL_CONCURRENCY picks the concurrencies (e.g. `1,8`); TEST_POSTGRES_URL as in index-store.bench.ts.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { startAnvil } from "../src/demo/devchain.js";
import { indexChain } from "../src/ingest/indexer.js";
import { scratchDatabase } from "../test/support/index-backend.js";
import { startJsonRpcProxy } from "../test/upstreams/jsonrpc.js";
import { measure } from "./measure.js";

const EVENTS = Number(process.env.BENCH_BACKFILL_EVENTS ?? 100_000);
const PER_BLOCK = 100;
const LATENCY_MS = 100;
const MAX_BLOCKS = 10;
const CONCURRENCY = (process.env.BENCH_BACKFILL_CONCURRENCY ?? "1,4,8,16").split(",").map(Number);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "index-backfill");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const chain = await startAnvil();
  try {
    const deployed = await deployAll(chain.rpcUrl);
    const made = Date.now();
    const { blocks } = await createBulkActivity(chain.rpcUrl, deployed, EVENTS, PER_BLOCK);
    console.log(
      `chain: ${EVENTS} ERC-721 mint events in blocks ${blocks[0]}-${blocks[1]}, created in ${((Date.now() - made) / 1000).toFixed(1)} s; ` +
        `proxy: +${LATENCY_MS} ms per call, eth_getLogs over ${MAX_BLOCKS} blocks refused`,
    );
    let postgres = true;
    try {
      await (await scratchDatabase("chainmail_bench")).drop();
    } catch (err) {
      postgres = false;
      console.log(`PostgreSQL not reachable (${(err as Error).message}): its figures are skipped`);
    }
    for (const engine of postgres ? (["SQLite", "PostgreSQL"] as const) : (["SQLite"] as const)) {
      let sequential = 0;
      for (const concurrency of CONCURRENCY) {
        const proxy = await startJsonRpcProxy(chain.rpcUrl, {
          latencyMs: LATENCY_MS,
          maxBlocks: MAX_BLOCKS,
          refusal: "hint",
        });
        const database = engine === "PostgreSQL" ? await scratchDatabase("chainmail_bench") : undefined;
        try {
          const db = database?.url ?? join(dir, `backfill-${concurrency}.sqlite`);
          const run = await measure(() => indexChain({ rpcUrl: proxy.url, dbPath: db, follow: false, concurrency }));
          const { records } = run.value;
          if (records < EVENTS) throw new Error(`expected ${EVENTS} records, indexed ${records}`);
          const perSecond = records / (run.wall / 1000);
          if (concurrency === 1) sequential = perSecond;
          console.log(
            `${engine.padEnd(10)} concurrency ${String(concurrency).padStart(2)}: ${(run.wall / 1000).toFixed(1).padStart(5)} s, ` +
              `${Math.round(perSecond).toString().padStart(6)} records/s, ${(perSecond / sequential).toFixed(2)}× sequential, ` +
              `${proxy.requests.length} calls (${proxy.refused} refused), peak RSS ${run.rss}`,
          );
        } finally {
          await proxy.close();
          await database?.drop();
        }
      }
    }
    console.log("goal (issue 24): at concurrency 8, at least 6× the records/s of concurrency 1 (8× is the limit)");
  } finally {
    await chain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
