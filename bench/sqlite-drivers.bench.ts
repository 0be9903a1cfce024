/**
 * The SQLite engine on its two drivers (src/db/sqlite-driver.ts), node:sqlite against better-sqlite3, on the same
 * Node (run it on one that has both: Node 22.13 or later with better-sqlite3 built for it):
 * 1. ingestion: `chainmail index --once` over the 100,000-mint chain of index.bench.ts into a new file, one process
 *    per round and driver (CHAINMAIL_SQLITE_DRIVER), rounds interleaved, medians of wall time, CPU and peak RSS;
 * 2. the store: BENCH_DRIVER_ROWS (default 200,000) of index-store.bench.ts's synthetic records inserted through
 *    the index store into one file per driver, 20,000 at a time, the drivers taking turns; then p50/p99 of
 *    50-record pages (`IndexStore.page`: by contract, by token, the whole chain from a block), the drivers taking
 *    turns page by page, so that a machine whose load drifts weighs on both alike.
 * BENCH_DRIVER_EVENTS sets the chain's size, BENCH_DRIVER_ROUNDS the ingestion rounds (default 5).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { SQLITE_DRIVERS } from "../src/core/env.js";
import { loadSqliteDriver, type SqliteDriverName } from "../src/db/sqlite-driver.js";
import { type ActivityRow, IndexStore, type PageQuery } from "../src/sources/own-index/store.js";
import { chainOf } from "./index.bench.js";
import { rng, syntheticRow } from "./index-store.bench.js";
import { interleaved, loadAverage, median, type ProcessRun, runProcess } from "./measure.js";

const EVENTS = Number(process.env.BENCH_DRIVER_EVENTS ?? 100_000);
const ROWS = Number(process.env.BENCH_DRIVER_ROWS ?? 200_000);
const PAGES = 1000;
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
    await store(drivers);
  } finally {
    if (before === undefined) delete process.env.CHAINMAIL_SQLITE_DRIVER;
    else process.env.CHAINMAIL_SQLITE_DRIVER = before;
    await chain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Inserts and pages on one store per driver, the drivers taking turns. */
async function store(drivers: SqliteDriverName[]): Promise<void> {
  const stores: IndexStore[] = [];
  for (const driver of drivers) {
    // The driver is chosen when a database is opened.
    process.env.CHAINMAIL_SQLITE_DRIVER = driver;
    stores.push(await IndexStore.open(join(dir, `store-${driver}.sqlite`)));
  }
  try {
    const insertMs = drivers.map(() => 0);
    const random = rng(42);
    for (let start = 0; start < ROWS; start += 20_000) {
      const chunk: ActivityRow[] = [];
      for (let i = start; i < Math.min(ROWS, start + 20_000); i++) chunk.push(syntheticRow(i, random));
      for (const d of turns(drivers.length, start / 20_000)) {
        const t = performance.now();
        await stores[d]!.insertRows(chunk);
        insertMs[d]! += performance.now() - t;
      }
    }
    console.log(`store: ${ROWS} synthetic records inserted 20,000 at a time (load ${await loadAverage()}):`);
    drivers.forEach((driver, d) => {
      console.log(`  ${driver.padEnd(15)} ${Math.round(ROWS / (insertMs[d]! / 1000))} rows/s`);
    });
    const pick = rng(7);
    const lastBlock = 15_000_000 + Math.floor((ROWS - 1) / 5);
    const contract = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
    const cases: [string, () => PageQuery][] = [
      ["by contract", () => ({ contract: contract(1 + Math.floor(pick() * 1000)), direction: "desc", limit: 50 })],
      [
        "by token",
        () => ({ contract: contract(1), tokenId: String(Math.floor(pick() * 1000)), direction: "desc", limit: 50 }),
      ],
      [
        "whole chain",
        () => ({ fromBlock: 15_000_000 + Math.floor(pick() * (lastBlock - 15_000_000)), direction: "asc", limit: 50 }),
      ],
    ];
    console.log(`store: 50-record pages on ${ROWS} records, p50 / p99 ms over ${PAGES} pages each:`);
    for (const [name, query] of cases) {
      const ms: number[][] = drivers.map(() => []);
      for (let i = 0; i < PAGES + 50; i++) {
        const q = query();
        for (const d of turns(drivers.length, i)) {
          const t = performance.now();
          await stores[d]!.page(q);
          // The first 50 warm up the JIT and the page cache.
          if (i >= 50) ms[d]!.push(performance.now() - t);
        }
      }
      console.log(
        `  ${name.padEnd(12)} ${drivers.map((driver, d) => `${driver} ${pct(ms[d]!, 50)} / ${pct(ms[d]!, 99)}`).join("   ")}`,
      );
    }
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}

/** The drivers' indexes in the order of this turn: who goes first rotates. */
const turns = (n: number, turn: number): number[] => Array.from({ length: n }, (_, i) => (turn + i) % n);

function pct(values: number[], p: number): string {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(2);
}
