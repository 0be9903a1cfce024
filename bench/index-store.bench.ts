/**
 * The own index's store on SQLite and on PostgreSQL, side by side in one run:
 * 1. 1,000,000 synthetic records inserted directly into each engine; p50/p99 latency of a 50-record page by
 *    contract, by token and for the whole chain (first pages and pages deep behind a continuation), through the
 *    index source as the retriever nodes read them, each page followed by the same SQL statement run by hand
 *    with the bare driver (the store's SQLite library, node:sqlite or better-sqlite3, with a statement prepared once;
 *    `pg`'s client): the raw query's p50/p99;
 * 2. the HTTP service on the PostgreSQL index: requests/s of one `chainmail serve` process against two, each
 *    replica its own process on the same database (by-token pages of a random token of the busiest contract).
 *
 * BENCH_INDEX_ROWS scales it down; TEST_POSTGRES_URL points at the server (default
 * postgres://postgres@127.0.0.1:5432/test), where a database with a random name is created and dropped.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import pg from "pg";
import { loadConfig } from "../src/core/config.js";
import type { RunContext } from "../src/core/node.js";
import { closeIndexSources, indexSource } from "../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../src/sources/own-index/store.js";
import type { RetrieverOutcome } from "../src/sources/types.js";
import { CLI } from "../test/support/helpers.js";
import { scratchDatabase } from "../test/support/index-backend.js";

const ROWS = Number(process.env.BENCH_INDEX_ROWS ?? 1_000_000);
/** BENCH_INDEX_REPLICAS=0 leaves out the HTTP service part. */
const REPLICAS = process.env.BENCH_INDEX_REPLICAS !== "0";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 16;
const dir = join(import.meta.dirname, "..", ".bench-tmp", "index-store");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let postgres: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  try {
    postgres = await scratchDatabase("chainmail_bench");
  } catch (err) {
    console.log(`PostgreSQL not reachable (${(err as Error).message}): its figures are skipped`);
  }
  try {
    const sqlite = join(dir, "query.sqlite");
    await fill(sqlite, "SQLite");
    if (postgres) await fill(postgres.url, "PostgreSQL");
    const figures: [string, Record<string, string[]>][] = [["SQLite", await latencies(sqlite, "SQLite")]];
    if (postgres) figures.push(["PostgreSQL", await latencies(postgres.url, "PostgreSQL")]);
    await closeIndexSources();
    console.log(
      `\n50-record pages on ${ROWS} records, p50 / p99 ms, then the raw SQL's p50 / p99 and the p99 ratio (goal: p99 ≤ 5 ms and ≤ 1.5× the raw query's):`,
    );
    for (const name of Object.keys(figures[0]![1])) {
      console.log(
        `  ${name.padEnd(24)} ${figures
          .map(([engine, f]) => {
            const [p50, p99, r50, r99, x] = f[name]!;
            return `${engine} ${p50} / ${p99} (raw ${r50} / ${r99}, p99 ${x})`;
          })
          .join("   ")}`,
      );
    }
    if (postgres && REPLICAS) await replicas(postgres.url);
  } finally {
    await closeIndexSources();
    await postgres?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const CONTRACTS = 1000;
const TOKENS_PER_CONTRACT = 1000;
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const addr = (n: number) => `0x${hex(n, 40)}`;
/** Deterministic pseudo-random numbers, so every run builds the same index. */
export function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

export function syntheticRow(i: number, random: () => number): ActivityRow {
  // A tenth of all rows belong to contract 0 (a busy collection); the rest spread over 999 contracts.
  const contract = random() < 0.1 ? 0 : 1 + Math.floor(random() * (CONTRACTS - 1));
  const token = Math.floor(random() * TOKENS_PER_CONTRACT);
  const kind = (["transfer", "mint", "burn", "sale", "transfer"] as const)[i % 5]!;
  const block = 15_000_000 + Math.floor(i / 5);
  return {
    block_number: block,
    log_index: i % 5,
    batch_index: 0,
    kind,
    contract: addr(contract + 1),
    token_id: String(token),
    from_addr: addr(100_000 + (i % 7919)),
    to_addr: addr(200_000 + (i % 7907)),
    quantity: "1",
    tx_hash: `0x${hex(i, 64)}`,
    block_hash: `0x${hex(block, 64)}`,
    timestamp: 1_650_000_000 + (block - 15_000_000) * 12,
    contract_type: "ERC721",
    marketplace: kind === "sale" ? "opensea" : null,
    currency: null,
    price: kind === "sale" ? "0.125" : null,
    price_usd: kind === "sale" ? "375.5" : null,
  };
}

/** Fills an empty index with ROWS synthetic records; prints how long it took and the size. */
async function fill(db: string, label: string): Promise<void> {
  const store = await IndexStore.open(db);
  const random = rng(42);
  const started = Date.now();
  const chunk: ActivityRow[] = [];
  for (let i = 0; i < ROWS; i++) {
    chunk.push(syntheticRow(i, random));
    if (chunk.length === 20_000 || i === ROWS - 1) {
      await store.insertRows(chunk);
      chunk.length = 0;
    }
  }
  const insertSeconds = (Date.now() - started) / 1000;
  let mb: number;
  if (store.db.engine === "sqlite") {
    await store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    mb = statSync(db).size / 1e6;
  } else {
    await store.db.exec("VACUUM ANALYZE activity");
    const [size] = await store.db.query<{ bytes: number }>("SELECT pg_database_size(current_database()) AS bytes");
    mb = size!.bytes / 1e6;
  }
  await store.close();
  console.log(
    `${label}: ${ROWS} synthetic records inserted in ${insertSeconds.toFixed(1)} s (${Math.round(ROWS / insertSeconds)} rows/s, 3 indexes), ${mb.toFixed(0)} MB`,
  );
}

/** p50/p99 of 50-record pages through the index source, as the retriever nodes read them. */
async function latencies(db: string, label: string): Promise<Record<string, string[]>> {
  const figures: Record<string, string[]> = {};
  const raw = await rawDriver(db);
  const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: db });
  const source = await indexSource(config);
  const ctx: RunContext = { config };
  const params = { api_key: "unused" };
  const pick = rng(7);
  const lastBlock = 15_000_000 + Math.floor((ROWS - 1) / 5);

  const cases: [string, (continuation?: string) => Promise<RetrieverOutcome>][] = [];
  const contractOf = () => addr((pick() < 0.5 ? 0 : Math.floor(pick() * CONTRACTS)) + 1);
  cases.push([
    "by contract",
    (() => {
      let contract = contractOf();
      return (continuation?: string) => {
        if (!continuation) contract = contractOf();
        return source.transactionsByContract({ contract_address: contract, page_size: 50, continuation }, params, ctx);
      };
    })(),
  ]);
  cases.push([
    "by token",
    (() => {
      let contract = addr(1);
      let token = "0";
      return (continuation?: string) => {
        if (!continuation) {
          // The busy contract's tokens have ~100 records each: two full pages and a short one.
          contract = addr(1);
          token = String(Math.floor(pick() * TOKENS_PER_CONTRACT));
        }
        return source.transactionsByToken(
          { contract_address: contract, token_id: token, page_size: 50, continuation },
          params,
          ctx,
        );
      };
    })(),
  ]);
  cases.push([
    "whole chain",
    (() => {
      let from = 15_000_000;
      return (continuation?: string) => {
        if (!continuation) from = 15_000_000 + Math.floor(pick() * (lastBlock - 15_000_000));
        return source.transactionsOnChain({ from_block: from, page_size: 50, continuation }, params, ctx);
      };
    })(),
  ]);
  cases.push([
    "whole chain, sales only",
    (() => {
      let from = 15_000_000;
      return (continuation?: string) => {
        if (!continuation) from = 15_000_000 + Math.floor(pick() * (lastBlock - 15_000_000));
        return source.transactionsOnChain(
          { from_block: from, page_size: 50, type: ["sale"], continuation },
          params,
          ctx,
        );
      };
    })(),
  ]);

  for (const [, page] of cases) for (let i = 0; i < 50; i++) await page(); // warm up JIT and page cache
  for (const [name, page] of cases) {
    const first: number[] = [];
    const deep: number[] = [];
    const bare: number[] = [];
    let records = 0;
    for (let run = 0; run < 300; run++) {
      let continuation: string | undefined;
      // A first page, then up to four pages behind its continuation.
      for (let n = 0; n < 5; n++) {
        captured.length = 0;
        const t = process.hrtime.bigint();
        const outcome = await page(continuation);
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (outcome.error) throw new Error(outcome.error.error);
        (n === 0 ? first : deep).push(ms);
        // The same statement(s), by hand with the bare driver.
        const statements = [...captured];
        const r = process.hrtime.bigint();
        let rows = 0;
        for (const [sql, args] of statements) rows += (await raw.query(sql, args)).length;
        bare.push(Number(process.hrtime.bigint() - r) / 1e6);
        if (rows < outcome.data.transactions.length) throw new Error(`${name}: the raw query found fewer rows`);
        records += outcome.data.transactions.length;
        continuation = outcome.data.continuation || undefined;
        if (!continuation) break;
      }
    }
    const all = [...first, ...deep];
    const p99Ratio = (Number(pct(all, 99)) / Number(pct(bare, 99))).toFixed(2);
    figures[name] = [pct(all, 50), pct(all, 99), pct(bare, 50), pct(bare, 99), `${p99Ratio}×`];
    console.log(
      `${label}, page of 50, ${name}: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms over ${all.length} pages ` +
        `(first pages p50 ${pct(first, 50)} / p99 ${pct(first, 99)} ms; continued p50 ${pct(deep, 50)} / p99 ${pct(deep, 99)} ms; ` +
        `${(records / all.length).toFixed(1)} records/page, records mapped and the JSON body written); ` +
        `the raw SQL: p50 ${pct(bare, 50)} ms, p99 ${pct(bare, 99)} ms (p99 ${p99Ratio}×)`,
    );
  }
  await raw.close();
  return figures;
}

/** The statements the index store runs, with their parameters, while `captured` is being filled. */
const captured: [string, unknown[]][] = [];
const originalPage = IndexStore.prototype.page;
IndexStore.prototype.page = function capturingPage(this: IndexStore, query) {
  const { db } = this;
  const spy = {
    engine: db.engine,
    query: (sql: string, args: unknown[]) => {
      captured.push([sql, args]);
      return db.query(sql, args);
    },
    // Pages read their rows as arrays; the raw driver runs the same statement the way a user would (objects).
    queryValues: (sql: string, args: unknown[]) => {
      captured.push([sql, args]);
      return db.queryValues(sql, args);
    },
  };
  return originalPage.call(Object.create(this, { db: { value: spy } }) as IndexStore, query);
};

/** The same database through the bare driver, as a user would query it by hand. */
async function rawDriver(db: string): Promise<{
  query(sql: string, args: unknown[]): Promise<unknown[]>;
  close(): Promise<void>;
}> {
  if (db.startsWith("postgres")) {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    return {
      query: async (sql, args) => (await client.query(sql, args)).rows,
      close: () => client.end(),
    };
  }
  // The driver the store runs on: node:sqlite where this Node has it (better-sqlite3, built for Node 20, does not
  // load on Node 26), else better-sqlite3.
  type Connection = { prepare(sql: string): { all(params: object): unknown[] }; close(): void };
  const nodeSqlite = process.getBuiltinModule?.("node:sqlite") as
    | { DatabaseSync: new (path: string, options: { readOnly: boolean }) => Connection }
    | undefined;
  const sqlite: Connection = nodeSqlite
    ? new nodeSqlite.DatabaseSync(db, { readOnly: true })
    : new (await import("better-sqlite3")).default(db, { readonly: true });
  const statements = new Map<string, { all(params: object): unknown[] }>();
  return {
    query: async (sql, args) => {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      // `$1, $2…` are named parameters to SQLite: bound from an object keyed 1, 2….
      return statement.all(Object.fromEntries(args.map((value, i) => [i + 1, value])));
    },
    close: async () => {
      sqlite.close();
    },
  };
}
function pct(values: number[], p: number): string {
  if (values.length === 0) return "-";
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(2);
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** By-token pages of a random token of the busiest contract, from `connections` connections to one URL. */
async function load(url: string, connections: number): Promise<Load> {
  const pick = rng(99);
  const result = await autocannon({
    url: `${url}/nodes/nft-transactions-by-token`,
    connections,
    duration: SECONDS,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({
            query: { contract_address: addr(1), token_id: String(Math.floor(pick() * TOKENS_PER_CONTRACT)) },
          }),
        }),
      },
    ],
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** A `chainmail serve` process on the index; resolves once it listens. */
async function serve(db: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", NFT_SOURCE: "index", INDEX_DB: db },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  for (let i = 0; i < 400; i++) {
    const url = /listening on (http:\/\/\S+) /.exec(stderr)?.[1];
    if (url) return { url, child };
    await sleep(25);
  }
  child.kill();
  throw new Error(`chainmail serve did not start: ${stderr}`);
}

async function replicas(db: string): Promise<void> {
  const servers = [await serve(db), await serve(db)];
  try {
    for (const s of servers) await load(s.url, 2); // warm up each replica's pool and JIT
    const one = await load(servers[0]!.url, CONNECTIONS);
    const both = await Promise.all(servers.map((s) => load(s.url, CONNECTIONS / 2)));
    const two: Load = {
      rps: both.reduce((sum, l) => sum + l.rps, 0),
      p50: Math.max(...both.map((l) => l.p50)),
      p99: Math.max(...both.map((l) => l.p99)),
      errors: both.reduce((sum, l) => sum + l.errors, 0),
    };
    const show = (name: string, l: Load) =>
      console.log(
        `${name}: ${l.rps.toFixed(0)} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms, errors ${l.errors} (${CONNECTIONS} connections, ${SECONDS} s)`,
      );
    console.log("\nHTTP service on the PostgreSQL index, POST /nodes/nft-transactions-by-token, 50-record pages:");
    show("  1 replica ", one);
    show("  2 replicas", two);
    console.log(`  2 replicas / 1: ${(two.rps / one.rps).toFixed(2)}× the requests per second`);
  } finally {
    for (const s of servers) s.child.kill("SIGTERM");
  }
}
