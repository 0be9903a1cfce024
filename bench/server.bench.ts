/**
 * The HTTP service under load (autocannon, 16 connections): `POST /nodes/nft-transactions-by-token` for the real
 * 50-record page of contract 0xa49a…efc8 token 11, through `chainmail serve` as it runs by default (validation,
 * bearer tokens, metrics, a JSON log line per request, here into a file), side by side with the same route written
 * by hand (bench/peers/fastify-proxy.mjs: Fastify + undici, nothing else). Each server is a process of its own, and
 * so is the local NFTPort server; the load comes from this process.
 *
 * Rounds are interleaved (the order rotates); req/s and p99 are medians, each ratio is the median of the rounds' own
 * ratios, with its range. A second `chainmail serve` of the same build runs as a contender of its own (A/A): the
 * ratio between the two is the noise of the machine. BENCH_SERVE_OTHERS=name=<dist/cli/main.js of another
 * build>,… adds those builds as contenders too (before/after).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";
import { VALID_KEY } from "../test/upstreams/nftport.js";
import { interleaved, loadAverage, median, startUpstream } from "./measure.js";
import { REAL_CONTRACT, REAL_TOKEN } from "./upstream.js";

const CONNECTIONS = 16;
/** Linux's USER_HZ: the unit of the CPU times in /proc/<pid>/stat. */
const TICKS_PER_SECOND = 100;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const PEER = join(import.meta.dirname, "peers", "fastify-proxy.mjs");
const TOKEN = "bench-token-0123456789abcdef";
const ROUTE = "/nodes/nft-transactions-by-token";
const BODY = JSON.stringify({
  query: { contract_address: REAL_CONTRACT, token_id: REAL_TOKEN },
  params: { api_key: VALID_KEY },
});

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
  /** CPU time of the server process per answered request, in µs: what load on the machine sways far less. */
  cpuUs: number;
}

interface Server {
  url: string;
  /** CPU time the process has used so far, in ms (user + system, from /proc). */
  cpuMs(): number;
  close(): Promise<void>;
}

/** Starts a server process and waits for the line that says where it listens. */
async function startProcess(argv: string[], env: Record<string, string>, logFile: string): Promise<Server> {
  const log = openSync(logFile, "w");
  const child: ChildProcess = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", log, "pipe"],
  });
  closeSync(log);
  // Each says where it listens on stderr (`… listening on http://…`).
  const lines = createInterface({ input: child.stderr! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      const found = /listening on (http:\/\/\S+)/.exec(line);
      if (found) resolve(found[1]!);
    });
    child.once("exit", (code) => reject(new Error(`${argv.join(" ")} exited ${code} before it listened`)));
  });
  child.stderr!.resume();
  return {
    url,
    cpuMs: () => {
      const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
    },
    close: async () => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const headers = { "content-type": "application/json", authorization: `Bearer ${TOKEN}` };

async function load(server: Server): Promise<Figures> {
  const cpuBefore = server.cpuMs();
  const result = await autocannon({
    url: `${server.url}${ROUTE}`,
    method: "POST",
    headers,
    body: BODY,
    connections: CONNECTIONS,
    duration: SECONDS,
  });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors + result.timeouts,
    cpuUs: ((server.cpuMs() - cpuBefore) * 1000) / result.requests.total,
  };
}

/** One answer of each server: all must carry the same 50 records (the continuation differs from call to call). */
async function sameRecords(servers: Record<string, Server>): Promise<void> {
  const pages: string[] = [];
  for (const [name, server] of Object.entries(servers)) {
    const res = await fetch(`${server.url}${ROUTE}`, { method: "POST", headers, body: BODY });
    const out = (await res.json()) as { data?: { transactions: unknown[] }; response?: { body: string } };
    if (res.status !== 200 || out.data?.transactions.length !== 50) throw new Error(`${name}: not a page of 50`);
    pages.push(JSON.stringify([out.data.transactions, JSON.parse(out.response!.body).transactions]));
  }
  if (pages.some((p) => p !== pages[0])) throw new Error("the servers answered different records");
}

/**
 * The reply's serialisation alone, in this process, which the machine's load sways far less: the node's output
 * for the real page written by `stringifyOutput` (the page spliced as NFTPort's text) and by `stringifyJson`
 * (what the service did before), next to the peer's `JSON.stringify` of its own answer. µs per reply, medians of
 * interleaved rounds of 200.
 */
async function serialisation(upstreamUrl: string): Promise<void> {
  const dist = (path: string) => pathToFileURL(join(import.meta.dirname, "..", "dist", path)).href;
  const lib: typeof import("../src/index.js") = await import(dist("index.js"));
  const { stringifyOutput }: typeof import("../src/server/output-body.js") = await import(
    dist("server/output-body.js")
  );
  const output = await lib.runNode(lib.nftTransactionsByToken, JSON.parse(BODY), {
    config: lib.loadConfig({ NFTPORT_BASE_URL: upstreamUrl }),
  });
  const body = (output.response as { body: string }).body;
  const page = JSON.parse(body);
  const peerAnswer = {
    data: { response: page.response, transactions: page.transactions, continuation: page.continuation ?? "" },
    response: output.response,
  };
  const perCall = (write: () => string) => () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) write();
    return Number(process.hrtime.bigint() - start) / 200 / 1000;
  };
  const contenders = {
    stringifyOutput: perCall(() => stringifyOutput(output)),
    stringifyJson: perCall(() => lib.stringifyJson(output)),
    peer: perCall(() => JSON.stringify(peerAnswer)),
  };
  for (const run of Object.values(contenders)) run(); // warm-up
  const runs = await interleaved(15, {
    stringifyOutput: async () => contenders.stringifyOutput(),
    stringifyJson: async () => contenders.stringifyJson(),
    peer: async () => contenders.peer(),
  });
  const us = (name: keyof typeof runs) => median(runs[name]).toFixed(0);
  console.log(
    `  the reply's serialisation, µs (15 interleaved rounds of 200): spliced ${us("stringifyOutput")}, ` +
      `serialised whole ${us("stringifyJson")} (spliced of it: ${median(runs.stringifyOutput.map((x, i) => x / runs.stringifyJson[i]!)).toFixed(2)}×), ` +
      `the peer's JSON.stringify ${us("peer")}`,
  );
}

const range = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

export default async function serverBench(): Promise<void> {
  const upstream = await startUpstream("nftport");
  const dir = mkdtempSync(join(tmpdir(), "chainmail-serve-bench-"));
  const serveEnv = { NFTPORT_BASE_URL: upstream.url, CHAINMAIL_TOKENS: TOKEN };
  const serve = (main: string, name: string) => startProcess([main, "serve", "--port", "0"], serveEnv, join(dir, name));
  const servers: Record<string, Server> = {};
  try {
    servers.chainmail = await serve(MAIN, "chainmail.log");
    servers["chainmail (A/A)"] = await serve(MAIN, "chainmail-aa.log");
    servers.peer = await startProcess([PEER, upstream.url], {}, join(dir, "peer.log"));
    for (const other of (process.env.BENCH_SERVE_OTHERS ?? "").split(",").filter(Boolean)) {
      const [name, main] = other.includes("=") ? other.split("=") : ["baseline", other];
      servers[name!] = await serve(main!, `${name}.log`);
    }
    await sameRecords(servers);
    for (const server of Object.values(servers)) {
      await autocannon({ url: `${server.url}${ROUTE}`, method: "POST", headers, body: BODY, duration: 2 }); // warm-up
    }
    const before = await loadAverage();
    const runs = await interleaved(
      ROUNDS,
      Object.fromEntries(Object.entries(servers).map(([name, s]) => [name, () => load(s)])) as Record<
        string,
        () => Promise<Figures>
      >,
    );
    console.log(
      `${CONNECTIONS} connections, ${SECONDS} s per run, one real 50-record page per request; ${ROUNDS} interleaved ` +
        `rounds, medians (load ${before} before, ${await loadAverage()} after):`,
    );
    const peer = runs.peer!;
    for (const [name, figures] of Object.entries(runs)) {
      const bad = figures.reduce((sum, f) => sum + f.bad, 0);
      const vsPeer = figures.map((f, i) => f.rps / peer[i]!.rps);
      const p99s = figures.map((f, i) => f.p99 / peer[i]!.p99);
      const cpu = figures.map((f, i) => f.cpuUs / peer[i]!.cpuUs);
      console.log(
        `  ${name.padEnd(16)} ${median(figures.map((f) => f.rps))
          .toFixed(0)
          .padStart(
            6,
          )} req/s   p50 ${median(figures.map((f) => f.p50))} ms   p99 ${median(figures.map((f) => f.p99))} ms` +
          `   CPU ${median(figures.map((f) => f.cpuUs)).toFixed(0)} µs/req` +
          (name === "peer"
            ? ""
            : `   of the peer: req/s ${median(vsPeer).toFixed(2)}× (rounds ${range(vsPeer)}), p99 ${median(p99s).toFixed(2)}× (${range(p99s)}), CPU/req ${median(cpu).toFixed(2)}× (${range(cpu)})`) +
          (bad ? `   ${bad} failed` : ""),
      );
    }
    const aa = runs.chainmail!.map((f, i) => f.rps / runs["chainmail (A/A)"]![i]!.rps);
    const aaCpu = runs.chainmail!.map((f, i) => f.cpuUs / runs["chainmail (A/A)"]![i]!.cpuUs);
    console.log(
      `  A/A (same build twice): req/s ${median(aa).toFixed(2)}× (rounds ${range(aa)}), CPU/req ${median(aaCpu).toFixed(2)}× (${range(aaCpu)})`,
    );
    console.log("  goal: req/s ≥ 1.10× the peer's, p99 ≤ the peer's");
    await serialisation(upstream.url);
  } finally {
    for (const server of Object.values(servers)) await server.close();
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
