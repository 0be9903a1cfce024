/**
 * The OpenSea source's cost, against the local OpenSea server in a process of its own (loopback):
 * 1. one page of 200 events (real BAYC listings, offers, sales and transfers, cycled) through `runNode`, next to a
 *    bare undici `request` + `JSON.parse` of the same page (what a user would write by hand, without reading the
 *    events into records);
 * 2. NFT_SOURCE=index+opensea: a merged page of 200 by contract (a SQLite index of 1,000 sales of the contract and
 *    OpenSea's 1,000 events, bids and listings kept), next to the index's page of 200 and OpenSea's page of 200
 *    asked one after the other (what merging adds to asking both).
 * Rounds are interleaved, the times are medians and each ratio is the median of the rounds' own ratios. chainmail
 * is the built library (dist/index.js).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { request } from "undici";
import { IndexStore } from "../src/sources/own-index/store.js";
import { OPENSEA_KEY } from "../test/upstreams/opensea.js";
import { interleaved, loadAverage, median, pairedRatio, startUpstream } from "./measure.js";
import { BENCH_CONTRACT } from "./upstream.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const ITERATIONS = 50;
const PAGE = 200;

async function perCall(once: () => Promise<void>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ITERATIONS; i++) await once();
  return (performance.now() - start) / ITERATIONS;
}

/** 1,000 sales of the bench contract, one a block, newer than every OpenSea event and older in turn. */
function sales(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    block_number: 24_000_000 - i,
    log_index: 0,
    batch_index: 0,
    kind: "sale" as const,
    contract: BENCH_CONTRACT,
    token_id: String(i),
    from_addr: "0x00000000000000000000000000000000000000a0",
    to_addr: "0x00000000000000000000000000000000000000b0",
    quantity: "1",
    tx_hash: `0x${i.toString(16).padStart(64, "0")}`,
    block_hash: `0x${(i + 1).toString(16).padStart(64, "0")}`,
    // Interleaved with OpenSea's events (one a second from 1,764,000,000 down).
    timestamp: 1_764_000_000 - i * 2,
    contract_type: "ERC721",
    marketplace: "opensea",
    currency: null,
    price: "1.5",
    price_usd: null,
  }));
}

export default async function bench(): Promise<void> {
  const library = pathToFileURL(join(import.meta.dirname, "..", "dist", "index.js")).href;
  const { loadConfig, nftTransactionsByContract, runNode }: typeof import("../src/index.js") = await import(library);
  const upstream = await startUpstream("opensea", { events: 1000 });
  const dir = mkdtempSync(join(tmpdir(), "chainmail-bench-opensea-"));
  const db = join(dir, "index.sqlite");
  const store = await IndexStore.open(db);
  await store.insertRows(sales(1000));
  await store.close();
  const env = { OPENSEA_BASE_URL: upstream.url, OPENSEA_API_KEY: OPENSEA_KEY, INDEX_DB: db };
  const opensea = loadConfig({ ...env, NFT_SOURCE: "opensea" });
  const index = loadConfig({ ...env, NFT_SOURCE: "index" });
  const merged = loadConfig({ ...env, NFT_SOURCE: "index+opensea" });
  const page = (config: typeof opensea, type?: ("bid" | "list")[]) => async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: BENCH_CONTRACT, page_size: PAGE, ...(type ? { type } : {}) } },
      { config },
    );
    if (!out.data || out.data.transactions.length === 0) throw new Error(out.error?.error ?? "an empty page");
  };
  const bare = async () => {
    const res = await request(
      `${upstream.url}/api/v2/events/collection/bench?limit=${PAGE}&event_type=sale&event_type=transfer&event_type=mint&event_type=offer&event_type=listing`,
      { headers: { "x-api-key": OPENSEA_KEY, accept: "application/json" } },
    );
    const body = JSON.parse(await res.body.text()) as { asset_events: unknown[] };
    if (body.asset_events.length !== PAGE) throw new Error("not a page of 200");
  };
  try {
    const contenders = {
      undici: bare,
      runNode: page(opensea),
      merged: page(merged),
      both: async () => {
        await page(index)();
        await page(opensea, ["bid", "list"])();
      },
    };
    for (const once of Object.values(contenders)) await perCall(once); // warm-up: JIT, pools, the collection cache
    const load = await loadAverage();
    const a = await interleaved(ROUNDS, {
      undici: () => perCall(contenders.undici),
      runNode: () => perCall(contenders.runNode),
    });
    console.log(
      `OpenSea page of ${PAGE} events (by contract), ms/page, median of ${ROUNDS} interleaved rounds of ${ITERATIONS} (load ${load}):`,
    );
    console.log(`  undici request + JSON.parse  ${median(a.undici).toFixed(3)}`);
    console.log(
      `  runNode (records)            ${median(a.runNode).toFixed(3)}   ratio ${pairedRatio(a.runNode, a.undici).toFixed(2)}×`,
    );
    const b = await interleaved(ROUNDS, {
      both: () => perCall(contenders.both),
      merged: () => perCall(contenders.merged),
    });
    console.log(`index+opensea page of ${PAGE} (by contract), ms/page (load ${await loadAverage()}):`);
    console.log(`  index page + OpenSea page    ${median(b.both).toFixed(3)}`);
    console.log(
      `  merged page                  ${median(b.merged).toFixed(3)}   ratio ${pairedRatio(b.merged, b.both).toFixed(2)}×`,
    );
  } finally {
    await upstream.close();
    const { closeIndexSources } = await import(
      pathToFileURL(join(import.meta.dirname, "..", "dist", "sources", "index", "source.js")).href
    );
    await closeIndexSources();
    rmSync(dir, { recursive: true, force: true });
  }
}
