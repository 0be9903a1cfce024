import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { MAX_EMPTY_PAGES, pages } from "../../../src/core/paginate.js";
import { nftTransactionsByContract } from "../../../src/nodes/index.js";
import { MAX_SCANNED_PAGES } from "../../../src/sources/nftport/client.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { type NftportServer, type Rec, startNftport, VALID_KEY } from "../../upstreams/nftport.js";

const SPARSE = "0x4444444444444444444444444444444444444444";
const NO_BIDS = "0x5555555555555555555555555555555555555555";
const COUNT = 300;
/** Positions, newest first, of the order-book rows in SPARSE; the gap from 8 to 119 spans more than 10 pages of 5. */
const BID_AT: Record<number, string> = {
  2: "bid",
  3: "cancel_bid",
  7: "bid",
  120: "cancel_bid",
  121: "bid",
  298: "bid",
};
const LIST_AT: Record<number, string> = { 1: "list", 50: "cancel_list", 200: "list" };

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
const addr = (n: number) => `0x${hex(n, 40)}`;

/** COUNT rows over consecutive blocks, newest-first position p at block 17_000_000 + COUNT - 1 - p. */
function sparseRecords(contract: string, withOrderBook: boolean): Rec[] {
  const out: Rec[] = [];
  for (let p = 0; p < COUNT; p++) {
    const block = 17_000_000 + COUNT - 1 - p;
    const when = new Date(Date.UTC(2023, 2, 1) + block * 1000).toISOString().slice(0, 19);
    const chain = {
      transaction_hash: `0x${hex(block, 64)}`,
      block_hash: `0x${hex(block + 1, 64)}`,
      block_number: block,
      transaction_date: when,
    };
    const nft = { contract_type: "ERC721", contract_address: contract, token_id: String(p % 9) };
    const price = { asset_type: "ETH", price: 0.5, price_usd: 900.25 };
    const bid = withOrderBook ? BID_AT[p] : undefined;
    const list = withOrderBook ? LIST_AT[p] : undefined;
    if (bid) out.push({ type: bid, bidder_address: addr(p), nft, price_details: price, ...chain, marketplace: "x2y2" });
    else if (list)
      out.push({ type: list, lister_address: addr(p), nft, price_details: price, ...chain, marketplace: "opensea" });
    else if (p % 4 === 0)
      out.push({
        type: "sale",
        seller_address: addr(p),
        buyer_address: addr(p + 1),
        nft,
        quantity: 1,
        price_details: price,
        ...chain,
        marketplace: "opensea",
      });
    else
      out.push({
        type: "transfer",
        transfer_from: addr(p),
        transfer_to: addr(p + 1),
        contract_address: contract,
        token_id: String(p % 9),
        quantity: 1,
        ...chain,
      });
  }
  return out;
}

let upstream: NftportServer;
let config: ReturnType<typeof testConfig>;
const params = { api_key: VALID_KEY };
const everything = sparseRecords(SPARSE, true);
const kinds = (...types: string[]) => everything.filter((r) => types.includes(r.type));
const bids = kinds("bid", "cancel_bid");

beforeAll(async () => {
  upstream = await startNftport({
    byContract: new Map([
      [SPARSE, everything],
      [NO_BIDS, sparseRecords(NO_BIDS, false)],
    ]),
  });
  config = testConfig({ NFTPORT_BASE_URL: upstream.url, NFTPORT_MAX_RETRIES: "0" });
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

type Out = {
  data?: { transactions: Rec[]; continuation: string };
  response?: { status: number; body: string };
  error?: { details: { code: string } };
};
const run = (query: Record<string, unknown>) =>
  runNode(
    nftTransactionsByContract,
    { query: { contract_address: SPARSE, ...query }, params },
    { config },
  ) as Promise<Out>;

async function collect(query: Record<string, unknown>, limit?: number) {
  const got: { transactions: Rec[]; continuation: string }[] = [];
  for await (const page of pages<Rec>(
    nftTransactionsByContract,
    { query: { contract_address: SPARSE, ...query }, params },
    { limit },
    { config },
  ))
    got.push(page);
  return { records: got.flatMap((p) => p.transactions), continuation: got.at(-1)?.continuation ?? "" };
}

describe("the upstream filter has no bid", () => {
  it("the local server rejects type=bid like NFTPort (422 invalid_enumeration)", async () => {
    const res = await fetch(`${upstream.url}/v0/transactions/nfts/${SPARSE}?chain=ethereum&type=bid`, {
      headers: { authorization: VALID_KEY },
    });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_enumeration");
  });
});

describe("one node call with type: [bid]", () => {
  it("asks NFTPort for all and keeps bid and cancel_bid, with the upstream continuation and raw response", async () => {
    const out = await run({ type: ["bid"], page_size: 5 });
    expect(out.error).toBeUndefined();
    expect(out.data!.transactions.map((r) => r.type)).toEqual(["bid", "cancel_bid"]);
    expect(out.data!.transactions).toEqual(bids.slice(0, 2));
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.requests[0]!.query.getAll("type")).toEqual(["all"]);
    expect(upstream.requests[0]!.query.get("page_size")).toBe("5");
    expect(out.data!.continuation).toMatch(/^\d+_[0-9a-f]{24}$/);
    // `response` is the raw upstream page, unfiltered: all five rows.
    expect(out.response!.status).toBe(200);
    expect((parseJson(out.response!.body) as { transactions: unknown[] }).transactions).toHaveLength(5);
  });

  it("scans further pages until one matches", async () => {
    const first = await run({ type: ["bid"], page_size: 5 });
    upstream.requests.length = 0;
    const second = await run({ type: ["bid"], page_size: 5, continuation: first.data!.continuation });
    expect(second.data!.transactions).toEqual([bids[2]]);
    expect(upstream.requests).toHaveLength(1);
  });

  it(`reads at most ${MAX_SCANNED_PAGES} upstream pages, then returns no rows and the continuation to go on from`, async () => {
    const first = await run({ type: ["bid"], page_size: 5 });
    const second = await run({ type: ["bid"], page_size: 5, continuation: first.data!.continuation });
    upstream.requests.length = 0;
    const third = await run({ type: ["bid"], page_size: 5, continuation: second.data!.continuation });
    expect(upstream.requests).toHaveLength(MAX_SCANNED_PAGES);
    expect(third.data!.transactions).toEqual([]);
    expect(third.data!.continuation).not.toBe("");
    // Every request continued from the previous page's continuation, so no row was skipped unseen.
    const sent = upstream.requests.map((r) => r.query.get("continuation"));
    expect(new Set(sent).size).toBe(MAX_SCANNED_PAGES);
    // Going on from there reaches the next bids (positions 120 and 121) after one more empty call.
    const fourth = await run({ type: ["bid"], page_size: 5, continuation: third.data!.continuation });
    expect(fourth.data!.transactions).toEqual([]);
    const fifth = await run({ type: ["bid"], page_size: 5, continuation: fourth.data!.continuation });
    expect(fifth.data!.transactions).toEqual([bids[3], bids[4]]);
  });

  it("a contract without bids: an empty page and no continuation once the upstream has no next page", async () => {
    const out = (await runNode(
      nftTransactionsByContract,
      { query: { contract_address: NO_BIDS, type: ["bid"] }, params },
      { config },
    )) as Out;
    // 300 rows are 6 pages of 50, fewer than the scan bound.
    expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    expect(upstream.requests).toHaveLength(7);
  });

  it("bid with other kinds: list keeps NFTPort's meaning (list and cancel_list), sale is exact", async () => {
    const all = await collect({ type: ["bid", "list", "sale"], page_size: 50 });
    expect(all.records).toEqual(kinds("bid", "cancel_bid", "list", "cancel_list", "sale"));
    expect(upstream.requests.every((r) => r.query.getAll("type").join() === "all")).toBe(true);
  });

  it("all next to bid is no filter: one request, type=all, the page as NFTPort sent it", async () => {
    const out = await run({ type: ["all", "bid"], page_size: 10 });
    expect(out.data!.transactions).toEqual(everything.slice(0, 10));
    expect(upstream.requests.map((r) => r.query.getAll("type"))).toEqual([["all"]]);
  });

  it("a failure during the scan reaches error with the raw response; nothing is handed out", async () => {
    const first = await run({ type: ["bid"], page_size: 5 });
    const second = await run({ type: ["bid"], page_size: 5, continuation: first.data!.continuation });
    upstream.fault({
      status: 500,
      body: '{"response":"NOK","error":{"status_code":500,"code":"internal_error","message":"Internal server error."}}',
      after: 3,
    });
    const out = await run({ type: ["bid"], page_size: 5, continuation: second.data!.continuation });
    expect(out.data).toBeUndefined();
    expect(out.error!.details.code).toBe("upstream_server_error");
    expect(out.response!.status).toBe(500);
  });
});

describe("paging type: [bid]", () => {
  it.each([5, 50])("every bid and cancel_bid exactly once, in order (page_size %i)", async (pageSize) => {
    const all = await collect({ type: ["bid"], page_size: pageSize });
    expect(all.records).toEqual(bids);
    expect(all.continuation).toBe("");
  });

  it.each([1, 2, 3, 4, 5])("limit %i is exact, asks for no more than wanted, and resumes exactly", async (limit) => {
    const head = await collect({ type: ["bid"], page_size: 5 }, limit);
    expect(head.records).toEqual(bids.slice(0, limit));
    const sizes = upstream.requests.map((r) => Number(r.query.get("page_size")));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(5);
    const tail = await collect({ type: ["bid"], page_size: 5, continuation: head.continuation });
    expect([...head.records, ...tail.records]).toEqual(bids);
  });
});

describe("the pager and empty pages", () => {
  const row = (n: number) =>
    `{"type":"transfer","transfer_from":"0x01","transfer_to":"0x02","contract_address":"${SPARSE}","token_id":"${n}","quantity":1,"transaction_hash":"0x${n}","block_hash":"0x${n}","block_number":${n},"transaction_date":"2023-01-01T00:00:00"}`;
  const page = (continuation: string | undefined, ...ids: number[]) => ({
    status: 200,
    body: `{"response":"OK","transactions":[${ids.map(row).join(",")}]${continuation === undefined ? "" : `,"continuation":"${continuation}"`}}`,
  });

  it("goes on past an empty page that carries a continuation", async () => {
    upstream.fault(page("A", 1), page("B"), page(undefined, 2));
    const all = await collect({ page_size: 1 });
    expect(all.records.map((r) => r.token_id)).toEqual(["1", "2"]);
    expect(upstream.requests).toHaveLength(3);
  });

  it(`gives up after ${MAX_EMPTY_PAGES} empty pages in a row with fresh continuations, keeping the last one`, async () => {
    const loop = Array.from({ length: MAX_EMPTY_PAGES + 20 }, (_, i) => page(`C${i}`));
    upstream.fault(page("A", 1), ...loop);
    const all = await collect({ page_size: 1 });
    expect(all.records).toHaveLength(1);
    expect(upstream.requests).toHaveLength(1 + MAX_EMPTY_PAGES);
    expect(all.continuation).toBe(`C${MAX_EMPTY_PAGES - 1}`);
  });

  it("still stops on a repeated continuation after empty pages", async () => {
    upstream.fault(page("A", 1), page("B"), page("A"));
    const all = await collect({ page_size: 1 });
    expect(all.records).toHaveLength(1);
    expect(all.continuation).toBe("");
    expect(upstream.requests).toHaveLength(3);
  });
});

describe("chainmail run --all with type: [bid]", () => {
  const cli = (args: string[]) => runCli(args, { env: { NFTPORT_BASE_URL: upstream.url, NFTPORT_API_KEY: VALID_KEY } });

  it("yields every bid and cancel_bid of the contract exactly once, in order", async () => {
    const input = JSON.stringify({ query: { contract_address: SPARSE, type: ["bid"], page_size: 5 } });
    const r = await cli(["run", "nft-transactions-by-contract", "--all", "--input", input]);
    expect(r.code).toBe(0);
    const out = parseJson(r.stdout) as { data: { transactions: Rec[]; continuation: string } };
    expect(out.data.transactions).toEqual(bids);
    expect(out.data.continuation).toBe("");
    expect(upstream.requests.length).toBe(COUNT / 5 + 1);
  });

  it("--limit 3 then resuming from data.continuation gives the rest", async () => {
    const query = { contract_address: SPARSE, type: ["bid"], page_size: 5 };
    const head = await cli([
      "run",
      "nft-transactions-by-contract",
      "--limit",
      "3",
      "--input",
      JSON.stringify({ query }),
    ]);
    const first = parseJson(head.stdout) as { data: { transactions: Rec[]; continuation: string } };
    expect(first.data.transactions).toEqual(bids.slice(0, 3));
    const rest = await cli([
      "run",
      "nft-transactions-by-contract",
      "--all",
      "--input",
      JSON.stringify({ query: { ...query, continuation: first.data.continuation } }),
    ]);
    const second = parseJson(rest.stdout) as { data: { transactions: Rec[] } };
    expect([...first.data.transactions, ...second.data.transactions]).toEqual(bids);
  });
});
