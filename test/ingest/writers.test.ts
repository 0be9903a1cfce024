/**
 * Several processes on one index, as real `chainmail` processes: three `chainmail index` on the same index (one
 * writes, the others wait; `kill -9` of the writer hands over within seconds, nothing lost or duplicated), and
 * two `chainmail serve` replicas reading it, whose /healthz and /metrics report the index. SQLite here,
 * PostgreSQL under `npm run test:services`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { stringifyJson } from "../../src/core/json.js";
import { buildApp } from "../../src/server/app.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { CLI } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, erc721Transfer, installEmitters, startAnvil } from "../support/index-helpers.js";
import { type JsonRpcProxy, startJsonRpcProxy } from "../upstreams/jsonrpc.js";

const NFT = address(0x721);
const ALICE = address(0xa11ce);
const ZERO = address(0);
const MINTS = 80;

let anvil: Anvil;
let proxy: JsonRpcProxy;
let backend: IndexBackend;
let db: string;
const children = new Set<ChildProcess>();

interface Running {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}

function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", INDEX_RPC_MAX_RETRIES: "2", CHAINMAIL_RETRY_BASE_MS: "20", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let stderr = "";
  let stdout = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdout!.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stderr: () => stderr, stdout: () => stdout, exited };
}

async function until<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  ms = 30_000,
) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function lastBlock(): Promise<number> {
  const store = await IndexStore.open(db);
  try {
    return (await store.lastBlock()) ?? -1;
  } finally {
    await store.close();
  }
}

const head = async () => Number(await anvil.rpc<string>("eth_blockNumber"));

beforeAll(async () => {
  backend = await openBackend("writers");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  for (let id = 1; id <= MINTS; id++) await erc721Transfer(anvil, NFT, ZERO, ALICE, id);
  // A provider that takes 100 ms per call and serves at most two blocks per eth_getLogs: the backfill takes
  // several seconds, long enough to kill its writer midway.
  proxy = await startJsonRpcProxy(anvil.rpcUrl, { latencyMs: 100, maxBlocks: 2, refusal: "hint" });
  db = await backend.target("shared");
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill("SIGKILL");
  await closeIndexSources();
  await proxy?.close();
  await anvil?.stop();
  await backend?.close();
});

describe("several chainmail index processes on one index", () => {
  it("exactly one writes; after kill -9 another takes over within seconds, resuming with nothing lost or twice", async () => {
    const indexer = () => start(["index", "--rpc", proxy.url, "--db", db, "--concurrency", "2"]);
    const all = [indexer(), indexer(), indexer()];
    const [first, ...others] = await until(() => {
      const waiting = all.filter((p) => p.stderr().includes("waiting to take over"));
      return waiting.length === 2 && [...all.filter((p) => !waiting.includes(p)), ...waiting];
    }, "two indexers to wait for the third");
    await until(async () => (await lastBlock()) >= 2, "the writer to commit");
    expect(first!.stderr()).not.toContain("waiting");

    const before = await lastBlock();
    expect(before).toBeLessThan(await head()); // killed mid-backfill
    first!.child.kill("SIGKILL");
    await first!.exited;
    const killedAt = Date.now();
    const next = await until(() => others.find((p) => p.stderr().includes("took over writing")), "a takeover");
    const takeoverMs = Date.now() - killedAt;
    expect(takeoverMs).toBeLessThan(5_000);
    const waiting = others.find((p) => p !== next)!;
    await until(async () => (await lastBlock()) === (await head()), "the new writer to reach the head");
    expect(waiting.stderr()).not.toContain("took over");

    // The chain grows; the writer follows it; then it dies too and the last one takes over.
    await erc721Transfer(anvil, NFT, ZERO, ALICE, MINTS + 1);
    await until(async () => (await lastBlock()) === (await head()), "the writer to follow the head");
    next.child.kill("SIGKILL");
    await until(() => waiting.stderr().includes("took over writing"), "the last takeover");
    await erc721Transfer(anvil, NFT, ZERO, ALICE, MINTS + 2);
    await until(async () => (await lastBlock()) === (await head()), "the last writer to follow the head");

    const store = await IndexStore.open(db);
    try {
      const rows = await store.page({ direction: "asc", limit: 1000 });
      expect(rows.map((r) => r.token_id)).toEqual(Array.from({ length: MINTS + 2 }, (_, i) => String(i + 1)));
      expect(await store.count()).toBe(MINTS + 2);
    } finally {
      await store.close();
    }
    waiting.child.kill("SIGTERM");
    expect(await waiting.exited).toBe(0);
  });
});

describe("several chainmail serve replicas on one index", () => {
  it("answer the same pages, and report the index's last block, lag and rows on /healthz and /metrics", async () => {
    const env = { NFT_SOURCE: "index", INDEX_DB: db };
    const replicas = [start(["serve", "--port", "0"], env), start(["serve", "--port", "0"], env)];
    const urls = await Promise.all(
      replicas.map((r) =>
        until(() => /listening on (http:\/\/\S+) /.exec(r.stderr())?.[1], "a replica to listen").then(String),
      ),
    );
    const tip = await head();
    const page = async (url: string, continuation?: string) => {
      const res = await fetch(`${url}/nodes/nft-transactions-by-contract`, {
        method: "POST",
        body: stringifyJson({
          query: { contract_address: NFT, page_size: 7, ...(continuation ? { continuation } : {}) },
        }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { data: { transactions: { token_id: string }[]; continuation: string } };
    };
    // Pages alternate between the replicas: a continuation from one is good on the other.
    const tokens: string[] = [];
    let continuation: string | undefined;
    for (let i = 0; ; i++) {
      const out = await page(urls[i % 2]!, continuation);
      tokens.push(...out.data.transactions.map((t) => t.token_id));
      continuation = out.data.continuation || undefined;
      if (!continuation) break;
    }
    expect(tokens).toEqual(Array.from({ length: MINTS + 2 }, (_, i) => String(MINTS + 2 - i)));

    for (const url of urls) {
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as { status: string; index: Record<string, unknown> };
      expect(body).toEqual({
        status: "ok",
        index: {
          last_block: tip,
          head_block: tip,
          lag_blocks: 0,
          head_seen_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
          records: MINTS + 2,
        },
      });
      const metrics = await (await fetch(`${url}/metrics`)).text();
      expect(metrics).toContain(`chainmail_index_last_block ${tip}`);
      expect(metrics).toContain(`chainmail_index_head_block ${tip}`);
      expect(metrics).toContain("chainmail_index_lag_blocks 0");
      expect(metrics).toContain(`chainmail_index_rows ${MINTS + 2}`);
      expect(metrics).toContain("chainmail_index_up 1");
    }
    for (const r of replicas) r.child.kill("SIGTERM");
    await Promise.all(replicas.map((r) => r.exited));
  });

  it("/healthz reports the lag while the index is behind, and 503 when the index cannot be read", async () => {
    const store = await IndexStore.open(db);
    try {
      await store.noteHead((await head()) + 5); // the writer saw a head 5 blocks further
    } finally {
      await store.close();
    }
    const app = await buildApp({ config: loadConfig({ NFT_SOURCE: "index", INDEX_DB: db }) });
    try {
      const health = await app.inject({ method: "GET", url: "/healthz" });
      expect(health.json()).toMatchObject({ status: "ok", index: { lag_blocks: 5 } });
      expect((await app.inject({ method: "GET", url: "/metrics" })).body).toContain("chainmail_index_lag_blocks 5");
    } finally {
      await app.close();
    }
    const unreadable =
      backend.engine === "sqlite" ? `${backend.dir}/shared.sqlite/not-a-dir/x.sqlite` : db.replace(/:\d+\//, ":1/");
    const broken = await buildApp({ config: loadConfig({ NFT_SOURCE: "index", INDEX_DB: unreadable }) });
    try {
      const health = await broken.inject({ method: "GET", url: "/healthz" });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({
        status: "unavailable",
        index: { error: { details: { code: "storage_error" } } },
      });
      expect((await broken.inject({ method: "GET", url: "/metrics" })).body).toContain("chainmail_index_up 0");
    } finally {
      await broken.close();
    }
  });
});
