/**
 * The SQLite engine on its two drivers (src/db/sqlite-driver.ts), node:sqlite against better-sqlite3, on the same
 * Node (run it on one that has both: Node 22.13 or later with better-sqlite3 built for it):
 * 1. ingestion: `chainmail index --once` over the 100,000-mint chain of index.bench.ts into a new file, one process
 *    per round and driver (CHAINMAIL_SQLITE_DRIVER), rounds interleaved, medians of wall time, CPU and peak RSS;
 * 2. the store: BENCH_INDEX_ROWS (default 1,000,000) synthetic records inserted through the index store, then
 *    p50/p99 of 50-record pages by contract, by token and for the whole chain (index-store.bench.ts's cases).
 * BENCH_DRIVER_EVENTS sets the chain's size, BENCH_DRIVER_ROUNDS the ingestion rounds (default 5).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { loadSqliteDriver, SQLITE_DRIVERS, type SqliteDriverName } from "../src/db/sqlite-driver.js";
import { closeIndexSources } from "../src/sources/index/source.js";
import { chainOf } from "./index.bench.js";
import { fill, latencies } from "./index-store.bench.js";
import { interleaved, loadAverage, median, type ProcessRun, runProcess } from "./measure.js";

const EVENTS = Number(process.env.BENCH_DRIVER_EVENTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_DRIVER_ROUNDS ?? 5);
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const dir = join(import.meta.dirname, "..", ".bench-tmp", "sqlite-drivers");

export default async function bench(): Promise<void> {
  const drivers: SqliteDriverName[] = [];
  for (const name of SQLITE_DRIVERS) if (await loadSqliteDriver(name)) drivers.push(name);
  console.log(`drivers that load on Node ${process.version}: ${drivers.join(", ") || "none"}`);
  if (drivers.length === 0) return;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const chain = await chainOf(EVENTS);
  const before = process.env.CHAINMAIL_SQLITE_DRIVER;
  try {
    const contenders = Object.fromEntries(
      drivers.map((driver) => [
        driver,
        () => {
          const db = join(dir, `ingest-${driver}.sqlite`);
          for (const suffix of ["", "-wal", "-shm", "-index.lock"]) rmSync(db + suffix, { force: true });
          return runProcess([process.execPath, MAIN, "index", "--once", "--rpc", chain.rpcUrl, "--db", db], {
            env: { CHAINMAIL_SQLITE_DRIVER: driver },
            count: `"records":${EVENTS}`,
          });
        },
      ]),
    ) as Record<SqliteDriverName, () => Promise<ProcessRun>>;
    const runs = await interleaved(ROUNDS, contenders);
    console.log(
      `ingestion, chainmail index --once, ${EVENTS} mints, median of ${ROUNDS} (load ${await loadAverage()}):`,
    );
    for (const driver of drivers) {
      const list = runs[driver];
      if (list.some((r) => r.counted !== 1)) console.log(`  ${driver}: a run did not report ${EVENTS} records`);
      const ms = median(list.map((r) => r.ms));
      console.log(
        `  ${driver.padEnd(15)} ${(ms / 1000).toFixed(2)} s wall, ${(median(list.map((r) => r.cpuMs)) / 1000).toFixed(2)} s CPU, ` +
          `${median(list.map((r) => r.rssMiB)).toFixed(0)} MiB peak RSS, ${Math.round(EVENTS / (ms / 1000))} records/s`,
      );
    }
    // The store: each driver fills its own file (the driver is chosen when a database is opened), then reads it.
    for (const driver of drivers) {
      process.env.CHAINMAIL_SQLITE_DRIVER = driver;
      const db = join(dir, `store-${driver}.sqlite`);
      await fill(db, `store, ${driver}`);
      await latencies(db, `store, ${driver}`);
      await closeIndexSources();
    }
  } finally {
    if (before === undefined) delete process.env.CHAINMAIL_SQLITE_DRIVER;
    else process.env.CHAINMAIL_SQLITE_DRIVER = before;
    await closeIndexSources();
    await chain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
