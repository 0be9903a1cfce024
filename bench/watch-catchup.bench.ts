/**
 * chainmail watch catching up (issue 12): one rule by contract with `start_block` at the start of an index that
 * holds N sales of that contract, mode digest (500 records an email, outbox transport), one `watch --once` run that
 * takes and mails them all. Side by side for two N: the seconds it takes and the heap it keeps reachable above
 * where it started (sampled every 50 ms right after a forced GC: `npm run bench` runs node with --expose-gc), which
 * should not grow with N.
 * BENCH_CATCHUP_RECORDS sets the larger N (default 50,000; the smaller is a tenth of it).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { closeIndexSources } from "../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../src/sources/own-index/store.js";
import { listOutbox } from "../src/transports/outbox/store.js";
import { watch } from "../src/watch/watch.js";

const LARGE = Number(process.env.BENCH_CATCHUP_RECORDS ?? 50_000);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "watch-catchup");
const CONTRACT = `0x${"c0ffee".padStart(40, "0")}`;
const FIRST_BLOCK = 15_000_000;
const PER_BLOCK = 10;

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  try {
    console.log("| records | digests | seconds | records/s | peak heap above start |");
    console.log("|---|---|---|---|---|");
    for (const records of [Math.round(LARGE / 10), LARGE]) {
      const { seconds, peakMiB, digests } = await run(records);
      console.log(
        `| ${records} | ${digests} | ${seconds.toFixed(1)} | ${Math.round(records / seconds)} | ${peakMiB.toFixed(1)} MiB |`,
      );
    }
  } finally {
    await closeIndexSources();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sale(i: number): ActivityRow {
  const block = FIRST_BLOCK + Math.floor(i / PER_BLOCK);
  const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
  return {
    block_number: block,
    log_index: i % PER_BLOCK,
    batch_index: 0,
    kind: "sale",
    contract: CONTRACT,
    token_id: String(i),
    from_addr: `0x${hex(100_000 + (i % 7919), 40)}`,
    to_addr: `0x${hex(200_000 + (i % 7907), 40)}`,
    quantity: "1",
    tx_hash: `0x${hex(i + 1, 64)}`,
    block_hash: `0x${hex(block, 64)}`,
    timestamp: 1_650_000_000 + (block - FIRST_BLOCK) * 12,
    contract_type: "ERC721",
    marketplace: "opensea",
    currency: null,
    price: "0.125",
    price_usd: "375.5",
  };
}

async function run(records: number): Promise<{ seconds: number; peakMiB: number; digests: number }> {
  const db = join(dir, `${records}.sqlite`);
  const outbox = join(dir, `${records}-outbox`);
  const store = await IndexStore.open(db);
  for (let i = 0; i < records; i += 10_000) {
    await store.insertRows(Array.from({ length: Math.min(10_000, records - i) }, (_, j) => sale(i + j)));
  }
  const last = FIRST_BLOCK + Math.ceil(records / PER_BLOCK) - 1;
  await store.setMeta("last_block", String(last));
  await store.noteHead(last);
  await store.close();

  globalThis.gc?.();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  // What stays reachable: a full GC before each sample (garbage alone would grow with time between collections).
  const sampler = setInterval(() => {
    globalThis.gc?.();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 50);
  const started = performance.now();
  try {
    await watch({
      config: {
        source: "index",
        from: { Email: "bench@chainmail.test" },
        rules: [
          {
            id: `catchup-${records}`,
            contract_address: CONTRACT,
            start_block: FIRST_BLOCK,
            mode: "digest",
            digest: { records: 1 },
            mail: { to: [{ Email: "desk@example.com" }] },
          },
        ],
      },
      env: { NFT_SOURCE: "index", INDEX_DB: db, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox },
      once: true,
    });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  await closeIndexSources();
  const digests = (await listOutbox(outbox)).length;
  if (digests !== Math.ceil(records / 500)) throw new Error(`${records} records gave ${digests} digests`);
  return { seconds, peakMiB: (peak - base) / 2 ** 20, digests };
}
