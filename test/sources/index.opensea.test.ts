/**
 * NFT_SOURCE=index+opensea: the own index (a real SQLite index holding BAYC's sales and transfers, made from the
 * real OpenSea answers' on-chain events) merged with OpenSea's listings and bids (the local OpenSea server), by
 * contract, into one stream newest first under one continuation: every record once, in order, whatever the page
 * sizes, and while OpenSea learns new events between pages.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringifyJson } from "../../src/core/json.js";
import { runNode } from "../../src/core/node.js";
import { records } from "../../src/core/paginate.js";
import { formatUnits } from "../../src/ingest/decode.js";
import { nftTransactionsByContract, nftTransactionsByToken } from "../../src/nodes/index.js";
import { forgetCollections } from "../../src/sources/opensea/source.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../../src/sources/own-index/store.js";
import { testConfig } from "../support/helpers.js";
import { OPENSEA_KEY, type OpenSeaEvent, type OpenSeaServer, startOpenSea } from "../upstreams/opensea.js";
import { BAYC, fixture, openseaDataset } from "../upstreams/opensea-data.js";

type Rec = Record<string, any>;

let upstream: OpenSeaServer;
let dir: string;
let db: string;
let indexRows: ActivityRow[];

/** A block for a time: one every 12 s, as on Ethereum since the merge. */
const blockAt = (seconds: number) => 23_900_000 + Math.floor((seconds - 1_764_000_000) / 12);

/** BAYC's on-chain events from the saved OpenSea answers, as the indexer would have stored them. */
function rowsFromEvents(): ActivityRow[] {
  const events = [
    ...fixture("bayc-sale-events.json").asset_events,
    ...fixture("bayc-transfer-events.json").asset_events,
  ] as Rec[];
  // Derived: a transfer in the same second as OpenSea's newest offers, so that a first page takes some of OpenSea's
  // first records and not all (a position inside OpenSea's first page, which moves when OpenSea learns new events).
  const newestOffer = fixture("bayc-offer-events.json").asset_events[0] as Rec;
  events.push({ ...events[10], event_timestamp: newestOffer.event_timestamp, transaction: `0x${"cd".repeat(32)}` });
  return events.map((e, i) => {
    const sale = e.event_type === "sale";
    const token = sale ? e.payment.token_address : undefined;
    return {
      block_number: blockAt(e.event_timestamp),
      log_index: i,
      batch_index: 0,
      kind: sale ? "sale" : "transfer",
      contract: BAYC,
      token_id: e.nft.identifier,
      from_addr: sale ? e.seller : e.from_address,
      to_addr: sale ? e.buyer : e.to_address,
      quantity: "1",
      tx_hash: e.transaction,
      block_hash: `0x${blockAt(e.event_timestamp).toString(16).padStart(64, "0")}`,
      timestamp: e.event_timestamp,
      contract_type: "ERC721",
      marketplace: sale ? (e.order_hash ? "opensea" : "blur") : null,
      currency: sale && token !== "0x0000000000000000000000000000000000000000" ? token : null,
      price: sale ? formatUnits(BigInt(e.payment.quantity), 18) : null,
      price_usd: null,
    } as ActivityRow;
  });
}

beforeAll(async () => {
  upstream = await startOpenSea(openseaDataset());
  dir = mkdtempSync(join(tmpdir(), "chainmail-index-opensea-"));
  db = join(dir, "index.sqlite");
  const store = await IndexStore.open(db);
  indexRows = rowsFromEvents();
  await store.insertRows(indexRows);
  await store.close();
});
afterAll(async () => {
  await closeIndexSources();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  forgetCollections();
});

const config = (env: Record<string, string> = {}) =>
  testConfig({
    NFT_SOURCE: "index+opensea",
    INDEX_DB: db,
    OPENSEA_BASE_URL: upstream.url,
    OPENSEA_API_KEY: OPENSEA_KEY,
    OPENSEA_MAX_RETRIES: "1",
    ...env,
  });

async function page(query: Rec, env: Record<string, string> = {}) {
  const out = (await runNode(nftTransactionsByContract, { query }, { config: config(env) })) as {
    data?: { transactions: Rec[]; continuation: string };
    error?: { error: string; details: Rec };
  };
  expect(stringifyJson(out)).not.toContain(OPENSEA_KEY);
  return out;
}

/** Pages through a query with the page sizes given in turn; every record handed out. */
async function pageThrough(query: Rec, sizes: number[], between?: (page: number) => void): Promise<Rec[]> {
  const out: Rec[] = [];
  let continuation: string | undefined;
  for (let i = 0; i < 200; i++) {
    const result = await page({ ...query, page_size: sizes[i % sizes.length], continuation });
    expect(result.error).toBeUndefined();
    out.push(...result.data!.transactions);
    continuation = result.data!.continuation || undefined;
    if (!continuation) return out;
    between?.(i);
  }
  throw new Error("paging did not end");
}

const key = (r: Rec) => stringifyJson(r);

describe("one stream, newest first", () => {
  it("every kind of the contract: the index's sales and transfers and OpenSea's listings and bids, merged by date", async () => {
    const out = await page({ contract_address: BAYC, page_size: 1000 });
    const all = out.data!.transactions;
    const listings = fixture("bayc-listing-events.json").asset_events.length;
    const offers = fixture("bayc-offer-events.json").asset_events.length;
    expect(all).toHaveLength(indexRows.length + listings + offers);
    expect(out.data!.continuation).toBe("");
    const dates = all.map((r) => r.transaction_date);
    expect(dates).toEqual([...dates].sort().reverse());
    // On-chain kinds come from the index (with their blocks), the order book from OpenSea.
    for (const r of all) {
      if (r.type === "sale" || r.type === "transfer") expect(r.block_hash).toMatch(/^0x[0-9a-f]{64}$/);
      else {
        expect(["list", "bid"]).toContain(r.type);
        expect(r.marketplace).toBe("opensea");
      }
    }
    expect(all.filter((r) => r.type === "list")).toHaveLength(listings);
    expect(all.filter((r) => r.type === "bid")).toHaveLength(offers);
    // OpenSea was asked for its order book only.
    const asked = upstream.requests.filter((r) => r.path.startsWith("/api/v2/events"));
    expect(asked.every((r) => r.query.getAll("event_type").join() === "offer,listing")).toBe(true);
  });

  it("pages of any size, changing between calls, give the same records once each, in the same order", async () => {
    const whole = (await page({ contract_address: BAYC, page_size: 1000 })).data!.transactions;
    for (const sizes of [[1], [3], [7, 2, 11], [50]]) {
      const paged = await pageThrough({ contract_address: BAYC }, sizes);
      expect(paged.map(key)).toEqual(whole.map(key));
    }
  });

  it("--all through the library: every record, and the upstream's order", async () => {
    const whole = (await page({ contract_address: BAYC, page_size: 1000 })).data!.transactions;
    const all: Rec[] = [];
    for await (const r of records<Rec>(
      nftTransactionsByContract,
      { query: { contract_address: BAYC, page_size: 4 } },
      {},
      { config: config() },
    )) {
      all.push(r);
    }
    expect(all.map(key)).toEqual(whole.map(key));
  });
});

describe("which part answers", () => {
  it("on-chain kinds alone: the index, without a key and without asking OpenSea", async () => {
    const out = await page({ contract_address: BAYC, type: ["sale"] }, { OPENSEA_API_KEY: "" });
    expect(out.data!.transactions).toHaveLength(10);
    const token = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: BAYC, token_id: "2780" } },
      { config: config({ OPENSEA_API_KEY: "" }) },
    );
    expect(token.data?.transactions.map((r) => r.type)).toEqual(["sale", "sale"]);
    expect(upstream.requests).toHaveLength(0);
  });

  it("bids or listings need OpenSea's key: without one, invalid_input naming params.api_key", async () => {
    const out = await page({ contract_address: BAYC }, { OPENSEA_API_KEY: "" });
    expect(out.error?.details.code).toBe("invalid_input");
    expect(out.error?.error).toContain("params.api_key is required");
    expect(upstream.requests).toHaveLength(0);
  });

  it("order book alone: OpenSea's records and continuation", async () => {
    const out = await page({ contract_address: BAYC, type: ["list"], page_size: 200 });
    expect(out.data!.transactions.map((r) => r.type)).toEqual(Array(6).fill("list"));
  });

  it("OpenSea failing mid-merge: its error on the error port", async () => {
    upstream.fault({ status: 503, body: '{"errors":["Service unavailable"]}', times: 2 });
    const out = await page({ contract_address: BAYC });
    expect(out.error?.details).toMatchObject({
      code: "upstream_server_error",
      upstream_message: "Service unavailable",
    });
  });

  it("a continuation is bound to the query: tampered, or of another contract, it is refused", async () => {
    const first = await page({ contract_address: BAYC, page_size: 3 });
    const continuation = first.data!.continuation;
    const other = await page({
      contract_address: "0x1111111111111111111111111111111111111111",
      page_size: 3,
      continuation,
    });
    expect(other.error?.details).toMatchObject({ code: "invalid_continuation", field: "query.continuation" });
    const tampered = await page({ contract_address: BAYC, page_size: 3, continuation: `A${continuation}` });
    expect(tampered.error?.details.code).toBe("invalid_continuation");
  });
});

describe("a stream that has more than it showed", () => {
  it("nothing older than the last record it showed is handed out before it (OpenSea scanning other contracts' events)", async () => {
    // One collection, two contracts: 100 newer listings of OTHER, then one listing of MINE; the index holds MINE's
    // transfers, one newer than that listing and the rest older. With pages of 2, one call reads 80 of OTHER's
    // listings (MAX_STREAM_PAGES calls of MAX_SCANNED_PAGES pages) and OpenSea's part shows nothing yet: the
    // index's older transfers must wait for MINE's listing.
    const OTHER = "0x6666666666666666666666666666666666666666";
    const MINE = "0x7777777777777777777777777777777777777777";
    const listing = fixture("bayc-listing-events.json").asset_events[0] as Rec;
    const at = (contract: string, seconds: number): OpenSeaEvent => ({
      ...listing,
      event_timestamp: seconds,
      asset: { ...listing.asset, contract },
    });
    const mixed = await startOpenSea({
      contracts: new Map([
        [MINE, { collection: "mixed", contract_standard: "erc721", name: "Mine" }],
        [OTHER, { collection: "mixed", contract_standard: "erc721", name: "Other" }],
      ]),
      collections: new Map([
        ["mixed", [...Array.from({ length: 100 }, (_, i) => at(OTHER, 1_700_002_000 + i)), at(MINE, 1_700_001_500)]],
      ]),
    });
    const mixedDb = join(dir, "mixed.sqlite");
    const store = await IndexStore.open(mixedDb);
    await store.insertRows(
      [1_700_001_600, 1_700_001_020, 1_700_001_000].map((timestamp, i) => ({
        ...indexRows[10]!,
        contract: MINE,
        block_number: blockAt(timestamp),
        log_index: i,
        tx_hash: `0x${String(i).repeat(64)}`,
        timestamp,
      })),
    );
    await store.close();
    try {
      const env = { INDEX_DB: mixedDb, OPENSEA_BASE_URL: mixed.url };
      const pages: Rec[][] = [];
      let continuation: string | undefined;
      for (let i = 0; i < 20; i++) {
        const out = await page({ contract_address: MINE, page_size: 2, continuation }, env);
        pages.push(out.data!.transactions);
        continuation = out.data!.continuation || undefined;
        if (!continuation) break;
      }
      // The first page shows nothing: OpenSea's part has read on, found nothing of MINE yet, and has more.
      expect(pages[0]).toEqual([]);
      const paged = pages.flat();
      expect(paged.map((r) => [r.type, r.transaction_date])).toEqual([
        ["transfer", "2023-11-14T22:40:00"],
        ["list", "2023-11-14T22:38:20"],
        ["transfer", "2023-11-14T22:30:20"],
        ["transfer", "2023-11-14T22:30:00"],
      ]);
    } finally {
      await mixed.close();
    }
  });
});

// Last: it adds events to the upstream for good.
describe("while OpenSea learns new events", () => {
  it("listings OpenSea learns between pages do not repeat or skip what was handed out", async () => {
    const whole = (await page({ contract_address: BAYC, page_size: 1000 })).data!.transactions;
    const fresh = fixture("bayc-listing-events.json")
      .asset_events.slice(0, 2)
      .map(
        (e, i): OpenSeaEvent => ({ ...e, event_timestamp: 1_764_900_000 + i, order_hash: `0x${"ab".repeat(31)}0${i}` }),
      );
    let added = false;
    const paged = await pageThrough({ contract_address: BAYC }, [3], (n) => {
      if (n === 0) {
        upstream.add("boredapeyachtclub", fresh);
        added = true;
      }
    });
    expect(added).toBe(true);
    // The new listings are newer than the first page: the pages already handed out stay as they were read.
    expect(paged.map(key)).toEqual(whole.map(key));
  });
});
