/**
 * The service under many clients (issue 36, item 2): 500 connections for BENCH_SECONDS (default 20) against
 * `chainmail serve` over a 1,000,000-record own index (BENCH_INDEX_ROWS), SQLite and PostgreSQL, bearer token on,
 * a mix of pages: by contract (half the busy contract, half any), by token (the busy contract's) and the whole chain
 * from a random block, 50 records each.
 *
 * Contenders, each a process of its own, rounds interleaved: this build (default limits), this build with
 * CHAINMAIL_MAX_EVENT_LOOP_DELAY_MS=100 and, with
 * BENCH_SERVICE_BASELINE=<dist/cli/main.js of another build>, that build (before/after); BENCH_SERVICE_SETTINGS adds
 * this build with other settings ("name|NAME=value,NAME=value;name|…"). Figures per run: answered
 * (200) requests/s, their p50/p99/max latency measured per request by the client, refusals (503 with Retry-After)
 * per second and how fast they came, other failures.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { IndexStore } from "../src/sources/own-index/store.js";
import { scratchDatabase } from "../test/support/index-backend.js";
import { rng, syntheticRow } from "./index-store.bench.js";
import { interleaved, loadAverage, median } from "./measure.js";

const ROWS = Number(process.env.BENCH_INDEX_ROWS ?? 1_000_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 500);
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const TOKEN = "bench-token-0123456789abcdef";
const dir = join(import.meta.dirname, "..", ".bench-tmp", "service-load");
const addr = (n: number) => `0x${n.toString(16).padStart(40, "0")}`;
const FIRST_BLOCK = 15_000_000;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  shedPerSecond: number;
  shedP99: number;
  withoutRetryAfter: number;
  failed: number;
  /** The slowest answered request: when it was sent (ms into the run) and which request of its connection it was. */
  slowest: { sentAtMs: number; nth: number };
  /** Answered requests the service itself timed over 1 s (its /metrics histogram), to tell its wait from the socket's. */
  serverOver1s: number;
  /** CPU the service process spent per request it answered or refused (µs), and the cores it and this load used. */
  serviceCpuPerRequestUs: number;
  serviceCores: number;
  clientCores: number;
}

/** Clock ticks a second, for /proc/<pid>/stat. */
const TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds (user + system) a process on this machine and its children (CHAINMAIL_WORKERS) have spent, from /proc. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  return (
    (Number(fields[11]) + Number(fields[12])) / TICKS + children.reduce((sum, child) => sum + cpuSecondsOf(child), 0)
  );
}

async function fill(db: string): Promise<void> {
  const store = await IndexStore.open(db);
  const random = rng(42);
  const started = Date.now();
  const chunk = [];
  for (let i = 0; i < ROWS; i++) {
    chunk.push(syntheticRow(i, random));
    if (chunk.length === 20_000 || i === ROWS - 1) {
      await store.insertRows(chunk);
      chunk.length = 0;
    }
  }
  if (store.db.engine === "sqlite") await store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  else await store.db.exec("VACUUM ANALYZE activity");
  await store.close();
  console.log(`${store.db.engine}: ${ROWS} records in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function serve(
  main: string,
  db: string,
  settings: Record<string, string>,
): Promise<{ url: string; pid: number; close(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, [main, "serve", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", NFT_SOURCE: "index", INDEX_DB: db, CHAINMAIL_TOKENS: TOKEN, ...settings },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines = createInterface({ input: child.stderr! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      const found = /listening on (http:\/\/\S+)/.exec(line);
      if (found) resolve(found[1]!);
    });
    child.once("exit", (code) => reject(new Error(`chainmail serve exited ${code} before it listened`)));
  });
  child.stderr!.resume();
  return {
    url,
    pid: child.pid!,
    close: async () => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The next page asked: by contract, by token, or the whole chain, in turn. */
function pages(): () => { route: string; body: string } {
  const pick = rng(99);
  const lastBlock = FIRST_BLOCK + Math.floor((ROWS - 1) / 5);
  let n = 0;
  return () => {
    const kind = n++ % 3;
    if (kind === 0) {
      const contract = addr((pick() < 0.5 ? 0 : Math.floor(pick() * 1000)) + 1);
      return { route: "nft-transactions-by-contract", body: `{"query":{"contract_address":"${contract}"}}` };
    }
    if (kind === 1) {
      const token = Math.floor(pick() * 1000);
      return {
        route: "nft-transactions-by-token",
        body: `{"query":{"contract_address":"${addr(1)}","token_id":"${token}"}}`,
      };
    }
    const from = FIRST_BLOCK + Math.floor(pick() * (lastBlock - FIRST_BLOCK));
    return { route: "nft-transactions-on-chain", body: `{"query":{"from_block":${from}}}` };
  };
}

const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function load(url: string, pid: number): Promise<Figures> {
  const next = pages();
  const serviceCpu = cpuSecondsOf(pid);
  const clientCpu = process.cpuUsage();
  const answered: number[] = [];
  const shed: number[] = [];
  let withoutRetryAfter = 0;
  let failed = 0;
  const began = performance.now();
  let slowest = { ms: -1, sentAtMs: 0, nth: 0 };
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 120,
    requests: [
      {
        method: "POST",
        setupRequest: (request, context) => {
          const page = next();
          const state = context as { sent?: number; nth?: number };
          state.sent = performance.now();
          state.nth = (state.nth ?? 0) + 1;
          return {
            ...request,
            path: `/nodes/${page.route}`,
            headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
            body: page.body,
          };
        },
        onResponse: (status, _body, context, headers) => {
          const state = context as { sent?: number; nth?: number };
          const ms = performance.now() - (state.sent ?? Number.NaN);
          if (status === 200) {
            answered.push(ms);
            if (ms > slowest.ms) slowest = { ms, sentAtMs: (state.sent ?? 0) - began, nth: state.nth ?? 0 };
          } else if (status === 503) {
            shed.push(ms);
            if (!(headers as Record<string, string>)["retry-after"]) withoutRetryAfter++;
          } else failed++;
        },
      },
    ],
  });
  const serviceSeconds = cpuSecondsOf(pid) - serviceCpu;
  const { user, system } = process.cpuUsage(clientCpu);
  answered.sort((a, b) => a - b);
  shed.sort((a, b) => a - b);
  return {
    rps: answered.length / SECONDS,
    p50: pct(answered, 50),
    p99: pct(answered, 99),
    max: answered.at(-1) ?? 0,
    shedPerSecond: shed.length / SECONDS,
    shedP99: pct(shed, 99),
    withoutRetryAfter,
    failed: failed + result.errors + result.timeouts,
    slowest: { sentAtMs: slowest.sentAtMs, nth: slowest.nth },
    serverOver1s: await answeredOver1s(url),
    serviceCpuPerRequestUs: (serviceSeconds * 1e6) / Math.max(1, answered.length + shed.length),
    serviceCores: serviceSeconds / SECONDS,
    clientCores: (user + system) / 1e6 / SECONDS,
  };
}

/** Answered (200) node requests the service timed at over 1 s, from its latency histogram. */
async function answeredOver1s(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
  let total = 0;
  let within1s = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("chainmail_http_request_duration_seconds_bucket{") || !line.includes('status="200"')) continue;
    if (!line.includes('route="/nodes/')) continue;
    const count = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (line.includes('le="+Inf"')) total += count;
    else if (line.includes('le="1"')) within1s += count;
  }
  return total - within1s;
}

export default async function serviceLoadBench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // name: [the build's CLI, extra settings]
  const builds: Record<string, [string, Record<string, string>]> = {
    after: [MAIN, {}],
    "after, loop 100 ms": [MAIN, { CHAINMAIL_MAX_EVENT_LOOP_DELAY_MS: "100" }],
  };
  if (process.env.BENCH_SERVICE_BASELINE) builds.before = [process.env.BENCH_SERVICE_BASELINE, {}];
  // BENCH_SERVICE_SETTINGS="name|NAME=value,NAME=value;name|…": more contenders, this build with other settings.
  for (const contender of (process.env.BENCH_SERVICE_SETTINGS ?? "").split(";").filter(Boolean)) {
    const [name, pairs = ""] = contender.split("|");
    builds[name!] = [
      MAIN,
      Object.fromEntries(
        pairs
          .split(",")
          .filter(Boolean)
          .map((pair) => pair.split("=", 2)),
      ),
    ];
  }
  let postgres: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  try {
    postgres = await scratchDatabase("chainmail_service_load");
  } catch (err) {
    console.log(`PostgreSQL not reachable (${(err as Error).message}): its figures are skipped`);
  }
  try {
    const engines: Record<string, string> = { SQLite: join(dir, "index.sqlite") };
    if (postgres) engines.PostgreSQL = postgres.url;
    for (const db of Object.values(engines)) await fill(db);
    for (const [engine, db] of Object.entries(engines)) {
      const before = await loadAverage();
      const runs = await interleaved(
        ROUNDS,
        Object.fromEntries(
          Object.entries(builds).map(([name, [main, env]]) => [
            name,
            async () => {
              const server = await serve(main, db, env);
              try {
                await autocannon({ url: `${server.url}/healthz`, connections: 4, duration: 1 }); // warm-up
                return await load(server.url, server.pid);
              } finally {
                await server.close();
              }
            },
          ]),
        ) as Record<string, () => Promise<Figures>>,
      );
      console.log(
        `\n${engine}, ${ROWS} records, ${CONNECTIONS} connections for ${SECONDS} s, mixed 50-record pages, bearer token; ` +
          `${ROUNDS} interleaved rounds (load ${before} before, ${await loadAverage()} after):`,
      );
      for (const [name, figures] of Object.entries(runs)) {
        for (const [i, f] of figures.entries()) {
          console.log(
            `  ${name.padEnd(18)} round ${i + 1}: answered ${f.rps.toFixed(0)} req/s, p50 ${f.p50.toFixed(0)} ms, ` +
              `p99 ${f.p99.toFixed(0)} ms, max ${f.max.toFixed(0)} ms; shed ${f.shedPerSecond.toFixed(0)}/s ` +
              `(p99 ${f.shedP99.toFixed(0)} ms, ${f.withoutRetryAfter} without Retry-After); failed ${f.failed}; ` +
              `slowest sent ${f.slowest.sentAtMs.toFixed(0)} ms in, request ${f.slowest.nth} of its connection; ` +
              `${f.serverOver1s} over 1 s by the service's clock; service CPU ${f.serviceCpuPerRequestUs.toFixed(0)} µs a ` +
              `request, cores used: service ${f.serviceCores.toFixed(2)}, load generator ${f.clientCores.toFixed(2)}`,
          );
        }
        console.log(
          `  ${name.padEnd(18)} median: ${median(figures.map((f) => f.rps)).toFixed(0)} req/s answered, p99 ` +
            `${median(figures.map((f) => f.p99)).toFixed(0)} ms, max ${Math.max(...figures.map((f) => f.max)).toFixed(0)} ms`,
        );
      }
    }
    console.log("  goal: answered p99 ≤ 250 ms and max ≤ 1 s; 503 + Retry-After beyond capacity; ≥ 2× the req/s");
  } finally {
    await postgres?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
