/**
 * The own index (issue 5):
 * 1. ingestion records/s: `indexChain` over a local anvil holding ≥100,000 ERC-721 mint events (src/demo bulk
 *    minter), the whole chain, no address filter;
 * 2. p50/p99 latency of a 50-record page by contract, by token and for the whole chain on an index of 1,000,000
 *    synthetic records inserted directly (first pages and pages deep behind a continuation).
 *
 * BENCH_INDEX_EVENTS and BENCH_INDEX_ROWS scale it down for a quick look.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../src/core/config.js";
import type { RunContext } from "../src/core/node.js";
import { createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { startAnvil } from "../src/demo/devchain.js";
import { indexChain } from "../src/sources/index/indexer.js";
import { closeIndexSources, indexSource } from "../src/sources/index/source.js";
import { type ActivityRow, IndexStore } from "../src/sources/index/store.js";
import type { RetrieverOutcome } from "../src/sources/types.js";

const EVENTS = Number(process.env.BENCH_INDEX_EVENTS ?? 100_000);
const ROWS = Number(process.env.BENCH_INDEX_ROWS ?? 1_000_000);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "index");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    await ingestion();
    await queries();
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

const CONTRACTS = 1000;
const TOKENS_PER_CONTRACT = 1000;
const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const addr = (n: number) => `0x${hex(n, 40)}`;
/** Deterministic pseudo-random numbers, so every run builds the same index. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function syntheticRow(i: number, random: () => number): ActivityRow {
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

async function queries(): Promise<void> {
  const db = join(dir, "query.sqlite");
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
  await store.db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  await store.close();
  const mb = statSync(db).size / 1e6;
  console.log(
    `index: ${ROWS} synthetic records inserted in ${insertSeconds.toFixed(1)} s (${Math.round(ROWS / insertSeconds)} rows/s, 3 indexes, WAL), ${mb.toFixed(0)} MB`,
  );

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
    let records = 0;
    for (let run = 0; run < 300; run++) {
      let continuation: string | undefined;
      // A first page, then up to four pages behind its continuation.
      for (let n = 0; n < 5; n++) {
        const t = process.hrtime.bigint();
        const outcome = await page(continuation);
        const ms = Number(process.hrtime.bigint() - t) / 1e6;
        if (outcome.error) throw new Error(outcome.error.error);
        (n === 0 ? first : deep).push(ms);
        records += outcome.data.transactions.length;
        continuation = outcome.data.continuation || undefined;
        if (!continuation) break;
      }
    }
    const all = [...first, ...deep];
    console.log(
      `page of 50, ${name}: p50 ${pct(all, 50)} ms, p99 ${pct(all, 99)} ms over ${all.length} pages ` +
        `(first pages p50 ${pct(first, 50)} / p99 ${pct(first, 99)} ms; continued p50 ${pct(deep, 50)} / p99 ${pct(deep, 99)} ms; ` +
        `${(records / all.length).toFixed(1)} records/page, records mapped and the JSON body written)`,
    );
  }
}

function pct(values: number[], p: number): string {
  if (values.length === 0) return "-";
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!.toFixed(2);
}
