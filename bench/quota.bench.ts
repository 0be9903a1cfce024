/**
 * Upstream quotas shared (issue 36, item 3): 50 clients ask overlapping pages (the first by-token page of one of 6
 * tokens, 50 records each) through one service, in front of an NFTPort that allows its key 2 requests a second
 * (NFTPort's 429 past them, test/upstreams/nftport.ts). Contenders: `chainmail serve` with
 * CHAINMAIL_CACHE_TTL_MS=5000 (identical reads in flight shared, repeats answered for 5 s), the same with the cache
 * off (sharing in flight only), and the hand-written Fastify + undici proxy (bench/peers/fastify-proxy.mjs). Each
 * run starts its server afresh (an empty cache); rounds interleaved.
 *
 * Figures: answers/s that carry a page (`"response":"OK"`), the other answers, the oldest page answered (from the
 * upstream's `x-served-at` stamp to the client receiving it; must stay under the TTL), chainmail's upstream reads and
 * the 429s it met (its /metrics).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import autocannon from "autocannon";
import { VALID_KEY } from "../test/upstreams/nftport.js";
import { interleaved, loadAverage, median, startUpstream } from "./measure.js";

const CLIENTS = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TTL_MS = 5_000;
const QUOTA = 2;
const TOKENS = 6;
const CONTRACT = "0x5151515151515151515151515151515151515151";
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const PEER = join(import.meta.dirname, "peers", "fastify-proxy.mjs");
const ROUTE = "/nodes/nft-transactions-by-token";

interface Figures {
  okPerSecond: number;
  other: number;
  oldestMs: number;
  upstreamReads?: number;
  upstream429?: number;
}

interface Server {
  url: string;
  close(): Promise<void>;
}

async function startProcess(argv: string[], env: Record<string, string>): Promise<Server> {
  const child: ChildProcess = spawn(process.execPath, argv, {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
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
    close: async () => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** One value of chainmail's /metrics. */
async function metric(url: string, sample: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith(sample))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

async function load(server: Server): Promise<Figures> {
  let ok = 0;
  let other = 0;
  let oldestMs = 0;
  let n = 0;
  const result = await autocannon({
    url: `${server.url}${ROUTE}`,
    connections: CLIENTS,
    duration: SECONDS,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({
            query: { contract_address: CONTRACT, token_id: String(n++ % TOKENS), page_size: 50 },
            params: { api_key: VALID_KEY },
          }),
        }),
        onResponse: (status, body) => {
          if (status !== 200 || !body.includes('"response":"OK"')) {
            other++;
            return;
          }
          ok++;
          const servedAt = /"x-served-at":"(\d+)"/.exec(body)?.[1];
          if (servedAt) oldestMs = Math.max(oldestMs, Date.now() - Number(servedAt));
        },
      },
    ],
  });
  return { okPerSecond: ok / SECONDS, other: other + result.errors + result.timeouts, oldestMs };
}

export default async function quotaBench(): Promise<void> {
  const upstream = await startUpstream("nftport", {
    paged: { [CONTRACT]: 7 },
    requestsPerSecond: QUOTA,
    stampServedAt: true,
  });
  const chainmail = (ttl: number) => async (): Promise<Figures> => {
    const server = await startProcess([MAIN, "serve", "--port", "0"], {
      NFTPORT_BASE_URL: upstream.url,
      CHAINMAIL_CACHE_TTL_MS: String(ttl),
    });
    try {
      const figures = await load(server);
      figures.upstreamReads = await metric(server.url, 'chainmail_upstream_reads_total{how="upstream"}');
      figures.upstream429 = await metric(
        server.url,
        'chainmail_upstream_attempts_total{node="nft-transactions-by-token",upstream="NFTPort",outcome="429"}',
      );
      return figures;
    } finally {
      await server.close();
    }
  };
  const peer = async (): Promise<Figures> => {
    const server = await startProcess([PEER, upstream.url], {});
    try {
      return await load(server);
    } finally {
      await server.close();
    }
  };
  try {
    const before = await loadAverage();
    const runs = await interleaved(ROUNDS, {
      [`chainmail, cache ${TTL_MS} ms`]: chainmail(TTL_MS),
      "chainmail, cache off": chainmail(0),
      peer,
    } as Record<string, () => Promise<Figures>>);
    console.log(
      `${CLIENTS} clients, ${SECONDS} s per run, first by-token pages of ${TOKENS} tokens, upstream quota ${QUOTA} requests/s; ` +
        `${ROUNDS} interleaved rounds, medians (load ${before} before, ${await loadAverage()} after):`,
    );
    const peerOk = runs.peer!.map((f) => f.okPerSecond);
    for (const [name, figures] of Object.entries(runs)) {
      const ratios = figures.map((f, i) => f.okPerSecond / Math.max(peerOk[i]!, 1e-9));
      console.log(
        `  ${name.padEnd(26)} ${median(figures.map((f) => f.okPerSecond)).toFixed(1)} answers/s with a page` +
          `   other answers ${median(figures.map((f) => f.other))}` +
          `   oldest page ${Math.max(...figures.map((f) => f.oldestMs))} ms` +
          (figures[0]!.upstreamReads === undefined
            ? ""
            : `   upstream reads ${median(figures.map((f) => f.upstreamReads!))}, 429s met ${median(figures.map((f) => f.upstream429!))}`) +
          (name === "peer"
            ? ""
            : `   of the peer: ${median(ratios).toFixed(1)}× (rounds ${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)})`),
      );
    }
    console.log(`  goal: ≥ 20× the peer's answers/s, every answer younger than the TTL (${TTL_MS} ms)`);
  } finally {
    await upstream.close();
  }
}
