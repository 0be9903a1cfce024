/**
 * NFT_SOURCE=opensea: the three retrievers against the local OpenSea server (test/upstreams/opensea.ts) serving
 * real OpenSea answers (test/fixtures/opensea): every record's fields, the event kinds OpenSea has and how they map,
 * paging and its continuation, the key, and every failure (401, 404, a contract without a collection, 429 and 599
 * with and without Retry-After in seconds and as a date, 5xx, bodies cut short, a looping cursor).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { type AnyNode, runNode } from "../../../src/core/node.js";
import { records } from "../../../src/core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { startServer } from "../../../src/server/index.js";
import { forgetCollections, MAX_SCANNED_PAGES } from "../../../src/sources/opensea/source.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { call } from "../../support/server-helpers.js";
import { OPENSEA_KEY, type OpenSeaServer, startOpenSea } from "../../upstreams/opensea.js";
import {
  BAYC,
  fixture,
  GLYPHBOTS,
  HUGE_QUANTITY,
  HUGE_TOKEN,
  MULTI,
  NO_COLLECTION,
  openseaDataset,
} from "../../upstreams/opensea-data.js";

let upstream: OpenSeaServer;
const MAX_RETRIES = 2;

beforeAll(async () => {
  upstream = await startOpenSea(openseaDataset());
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  forgetCollections();
});

const config = (env: Record<string, string> = {}) =>
  testConfig({
    NFT_SOURCE: "opensea",
    OPENSEA_BASE_URL: upstream.url,
    OPENSEA_API_KEY: OPENSEA_KEY,
    OPENSEA_MAX_RETRIES: String(MAX_RETRIES),
    ...env,
  });

type Out = Awaited<ReturnType<typeof runNode>> & {
  data?: { transactions: Record<string, any>[]; continuation: string };
  response?: { status: number; body: string };
};

async function run(node: AnyNode, query: Record<string, unknown>, params?: Record<string, unknown>, env = {}) {
  const out = (await runNode(node, { query, ...(params ? { params } : {}) }, { config: config(env) })) as Out;
  // The key never appears in an output.
  expect(stringifyJson(out)).not.toContain(OPENSEA_KEY);
  return out;
}

const byContract = (query: Record<string, unknown>) => run(nftTransactionsByContract, query);
const eventsAsked = () => upstream.requests.filter((r) => r.path.startsWith("/api/v2/events"));

/** quantity ÷ 10^18 written out by hand, the way a person would check a price. */
const ether = (wei: string) => Number(`${wei.slice(0, -18) || "0"}.${wei.slice(-18).padStart(18, "0")}`);
const date = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 19);

describe("real OpenSea answers as SPEC records", () => {
  it("listings: lister, NFT, quantity, ETH price, date, marketplace; every one, newest first", async () => {
    const out = await byContract({ contract_address: BAYC, type: ["list"], page_size: 200 });
    expect(out.error).toBeUndefined();
    const events = fixture("bayc-listing-events.json").asset_events as Record<string, any>[];
    expect(out.data!.transactions).toHaveLength(events.length);
    expect(out.data!.transactions[0]).toEqual({
      type: "list",
      lister_address: "0x195f46025a6926968a1b3275822096eb12d97e70",
      nft: { contract_type: "ERC721", contract_address: BAYC, token_id: "1514" },
      quantity: 1,
      price_details: { asset_type: "ETH", price: 6.383838383838384 },
      transaction_date: "2025-12-04T17:11:31",
      marketplace: "opensea",
    });
    out.data!.transactions.forEach((record, i) => {
      const event = events[i]!;
      expect(record.lister_address).toBe(event.maker);
      expect(record.nft.token_id).toBe(event.asset.identifier);
      expect(record.price_details).toEqual({ asset_type: "ETH", price: ether(event.payment.quantity) });
      expect(record.transaction_date).toBe(date(event.event_timestamp));
    });
    // One request: the contract's collection, then its listings with OpenSea's own filter.
    expect(upstream.requests.map((r) => r.path)).toEqual([
      `/api/v2/chain/ethereum/contract/${BAYC}`,
      "/api/v2/events/collection/boredapeyachtclub",
    ]);
    expect(eventsAsked()[0]!.query.getAll("event_type")).toEqual(["listing"]);
    expect(eventsAsked()[0]!.query.get("limit")).toBe("200");
    expect(upstream.requests[0]!.apiKey).toBe(OPENSEA_KEY);
  });

  it("bids are offers on one token (WETH); collection and trait offers name no token and give none", async () => {
    const out = await byContract({ contract_address: BAYC, type: ["bid"], page_size: 200 });
    const offers = fixture("bayc-offer-events.json").asset_events as Record<string, any>[];
    expect(out.data!.transactions).toHaveLength(offers.length);
    expect(out.data!.transactions[0]).toEqual({
      type: "bid",
      bidder_address: "0xf76246b0842c92ad5bd745973ca9eb85b937b126",
      nft: { contract_type: "ERC721", contract_address: BAYC, token_id: "7863" },
      quantity: 1,
      price_details: {
        asset_type: "ERC20",
        contract_address: "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
        price: 9.94,
      },
      transaction_date: "2025-12-04T17:11:52",
      marketplace: "opensea",
    });
    expect(out.data!.transactions.map((r) => r.nft.token_id)).toEqual(offers.map((e) => e.asset.identifier));
    expect(out.data!.transactions.map((r) => r.bidder_address)).toEqual(offers.map((e) => e.maker));
    expect(eventsAsked()[0]!.query.getAll("event_type")).toEqual(["offer"]);
  });

  it("sales: seller, buyer, payment token, exact price; marketplace only for fills of an OpenSea order", async () => {
    const out = await byContract({ contract_address: BAYC, type: ["sale"], page_size: 200 });
    const sales = fixture("bayc-sale-events.json").asset_events as Record<string, any>[];
    expect(out.data!.transactions).toHaveLength(10);
    // Paid from a Blur Pool balance, no OpenSea order: a sale OpenSea saw elsewhere.
    expect(out.data!.transactions[0]).toEqual({
      type: "sale",
      buyer_address: "0xdebfa3d1ee071bc4ca0cda447ddfcd755c88cf41",
      seller_address: "0x4263eb5638e8bf83af72ccde9b7c50feacc4fe4a",
      nft: { contract_type: "ERC721", contract_address: BAYC, token_id: "2780" },
      quantity: 1,
      price_details: {
        asset_type: "ERC20",
        contract_address: "0x0000000000a39bb272e79075ade125fd351887ac",
        price: 5.93,
      },
      transaction_hash: "0x016e5d19fa8b180c28cd36a2588fc477c9544fbccd24411bf19ce2b984395e1b",
      transaction_date: "2025-12-04T10:07:59",
    });
    out.data!.transactions.forEach((record, i) => {
      const sale = sales[i]!;
      expect(record.seller_address).toBe(sale.seller);
      expect(record.buyer_address).toBe(sale.buyer);
      expect(record.transaction_hash).toBe(sale.transaction);
      expect(record.price_details.price).toBe(ether(sale.payment.quantity));
      expect(record.marketplace).toBe(sale.order_hash ? "opensea" : undefined);
    });
    expect(out.data!.transactions.filter((r) => r.marketplace === "opensea")).toHaveLength(6);
    // 5.8975997999800 ETH keeps its digits.
    expect(out.data!.transactions[9]!.price_details.price).toBe(5.89759979998);
  });

  it("one token: its transfer, sale and mint (a transfer from the zero address), newest first", async () => {
    const out = await run(nftTransactionsByToken, { contract_address: GLYPHBOTS, token_id: "11111" });
    const tx = "0x16061ccc9df61d3b19ab62c5c5b3b33c9ae85337c221f3b2a54b99a690f34330";
    expect(out.data).toEqual({
      response: "OK",
      transactions: [
        {
          type: "transfer",
          transfer_from: "0x6d1f9a056e2cd37380b0598739998f085bd731bd",
          transfer_to: "0x78086ad810f8f99a0b6c92a9a6c8857d3c665622",
          contract_address: GLYPHBOTS,
          token_id: "11111",
          quantity: 1,
          transaction_hash: tx,
          transaction_date: "2025-08-26T06:44:23",
        },
        {
          type: "sale",
          buyer_address: "0x78086ad810f8f99a0b6c92a9a6c8857d3c665622",
          seller_address: "0x6d1f9a056e2cd37380b0598739998f085bd731bd",
          nft: { contract_type: "ERC721", contract_address: GLYPHBOTS, token_id: "11111" },
          quantity: 1,
          price_details: { asset_type: "ETH", price: 0.000699 },
          transaction_hash: tx,
          transaction_date: "2025-08-26T06:44:23",
          marketplace: "opensea",
        },
        {
          type: "mint",
          owner_address: "0x6d1f9a056e2cd37380b0598739998f085bd731bd",
          contract_address: GLYPHBOTS,
          token_id: "11111",
          quantity: 1,
          transaction_hash: "0xed723a561b1e2c3e8da6a6ce1d7d3d3de460973830e2a8b17fcb77e7348ae857",
          transaction_date: "2025-08-24T14:08:59",
        },
      ],
      continuation: "",
    });
    expect(eventsAsked()[0]!.path).toBe(`/api/v2/events/chain/ethereum/contract/${GLYPHBOTS}/nfts/11111`);
    // `all` is every on-chain kind here: the token's listing is not asked for.
    expect(eventsAsked()[0]!.query.getAll("event_type")).toEqual(["transfer", "mint", "sale"]);
    // `response` is OpenSea's answer as it came.
    expect(JSON.parse(out.response!.body).asset_events).toHaveLength(3);

    const mints = await run(nftTransactionsByToken, { contract_address: GLYPHBOTS, token_id: "11111", type: ["mint"] });
    expect(mints.data!.transactions.map((r) => r.type)).toEqual(["mint"]);
  });

  it("ERC-1155 quantities and 77-digit token ids stay exact, in the library and on the command line", async () => {
    const out = await byContract({ contract_address: MULTI });
    expect(out.data!.transactions.map((r) => r.type)).toEqual(["list", "transfer", "sale"]);
    for (const record of out.data!.transactions) {
      expect(record.quantity).toBe(HUGE_QUANTITY);
      expect(record.nft?.token_id ?? record.token_id).toBe(HUGE_TOKEN);
    }
    expect(out.data!.transactions[0]!.nft.contract_type).toBe("ERC1155");

    const cli = await runCli(
      [
        "run",
        "nft-transactions-by-contract",
        "--all",
        "--input",
        JSON.stringify({ query: { contract_address: MULTI } }),
      ],
      { env: { NFT_SOURCE: "opensea", OPENSEA_BASE_URL: upstream.url, OPENSEA_API_KEY: OPENSEA_KEY } },
    );
    expect(cli.code).toBe(0);
    expect(cli.stdout).toContain(`"quantity":${HUGE_QUANTITY}`);
    expect(cli.stdout).toContain(`"token_id":"${HUGE_TOKEN}"`);
    expect(cli.stdout).not.toContain(OPENSEA_KEY);
  });

  it("the whole chain: the general endpoint, Ethereum's events only; a block range is refused before asking", async () => {
    const all = [] as Record<string, any>[];
    for await (const record of records<Record<string, any>>(
      nftTransactionsOnChain,
      { query: { page_size: 40 } },
      {},
      { config: config() },
    )) {
      all.push(record);
    }
    // The dataset's Ethereum sales and transfers (mints among them), and none of its Polygon and Base transfers.
    const dataset = openseaDataset();
    const ethereum = [...dataset.collections.values()]
      .flat()
      .filter((e) => e.chain === "ethereum" && (e.event_type === "sale" || e.event_type === "transfer"));
    expect(all).toHaveLength(ethereum.length);
    expect(dataset.other!.every((e) => e.chain !== "ethereum")).toBe(true);
    expect(all.map((r) => r.transaction_date)).toEqual([...all.map((r) => r.transaction_date)].sort().reverse());

    upstream.requests.length = 0;
    const ranged = await run(nftTransactionsOnChain, { from_block: 1, to_block: 2 });
    expect(ranged.error?.details.code).toBe("invalid_input");
    const violations = ranged.error?.details.violations as { field: string }[];
    expect(violations.map((v) => v.field)).toEqual(["query.from_block", "query.to_block"]);
    expect(ranged.error?.error).toContain("filters events by time, not by block");
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("paging", () => {
  it("page_size pages with a continuation that resumes exactly; --all gives every record once", async () => {
    const whole = await byContract({ contract_address: BAYC, type: ["list"], page_size: 200 });
    const paged: Record<string, any>[] = [];
    let continuation: string | undefined;
    for (let page = 0; page < 10; page++) {
      const out = await byContract({ contract_address: BAYC, type: ["list"], page_size: 2, continuation });
      expect(out.data!.transactions.length).toBeLessThanOrEqual(2);
      paged.push(...out.data!.transactions);
      continuation = out.data!.continuation || undefined;
      if (!continuation) break;
    }
    expect(continuation).toBeUndefined();
    expect(paged).toEqual(whole.data!.transactions);
    const every = [];
    for await (const r of records(
      nftTransactionsByContract,
      { query: { contract_address: BAYC, type: ["list"], page_size: 4 } },
      { limit: 5 },
      { config: config() },
    )) {
      every.push(r);
    }
    expect(every).toEqual(whole.data!.transactions.slice(0, 5));
  });

  it("a continuation is bound to its query: another query's, or a tampered one, is refused", async () => {
    const first = await byContract({ contract_address: BAYC, type: ["list"], page_size: 2 });
    const continuation = first.data!.continuation;
    expect(continuation).not.toBe("");
    const other = await byContract({ contract_address: BAYC, type: ["bid"], page_size: 2, continuation });
    expect(other.error?.details).toMatchObject({ code: "invalid_continuation", field: "query.continuation" });
    const tampered = `${continuation.slice(0, -3)}AAA`;
    const bad = await byContract({ contract_address: BAYC, type: ["list"], page_size: 2, continuation: tampered });
    expect(bad.error?.details.code).toBe("invalid_continuation");
  });

  it("page_size above OpenSea's 200 is refused before asking", async () => {
    const out = await byContract({ contract_address: BAYC, page_size: 201 });
    expect(out.error?.details).toMatchObject({ code: "invalid_input" });
    expect(out.error?.error).toContain("query.page_size = 201");
    expect(upstream.requests).toHaveLength(0);
  });

  it("reads on past pages without a wanted record, up to MAX_SCANNED_PAGES, and resumes after them", async () => {
    // The one mint on Ethereum is the oldest event: page after page of transfers (and other chains') come first.
    const out = await run(nftTransactionsOnChain, { type: ["mint"], page_size: 1 });
    expect(out.data!.transactions).toEqual([]);
    expect(out.data!.continuation).not.toBe("");
    expect(eventsAsked()).toHaveLength(MAX_SCANNED_PAGES);
    // Paging on goes through the empty pages and finds it, once.
    const mints = [];
    for await (const r of records<Record<string, any>>(
      nftTransactionsOnChain,
      { query: { type: ["mint"], page_size: 25 } },
      {},
      { config: config() },
    )) {
      mints.push(r);
    }
    expect(mints.map((r) => [r.type, r.contract_address, r.token_id])).toEqual([["mint", GLYPHBOTS, "11111"]]);
  });
});

describe("the key and the contract", () => {
  it("params.api_key goes as X-API-KEY; without any key the input is refused", async () => {
    const other = "0ddba11c0ffee0ddba11c0ffee012345";
    await run(nftTransactionsByToken, { contract_address: GLYPHBOTS, token_id: "1" }, { api_key: other });
    expect(upstream.requests[0]!.apiKey).toBe(other);
    const none = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: GLYPHBOTS, token_id: "1" } },
      { config: testConfig({ NFT_SOURCE: "opensea", OPENSEA_BASE_URL: upstream.url }) },
    );
    expect(none.error?.details.code).toBe("invalid_input");
    expect(none.error?.error).toContain("params.api_key");
  });

  it("401: upstream_auth with OpenSea's message, not retried", async () => {
    const out = await run(nftTransactionsByToken, { contract_address: GLYPHBOTS, token_id: "1" }, { api_key: "wrong" });
    expect(out.error?.details).toMatchObject({
      code: "upstream_auth",
      status: 401,
      upstream_message: "Invalid API key",
      field: "params.api_key",
      attempts: 1,
    });
    expect(out.response?.status).toBe(401);
  });

  it("an unknown contract: upstream_not_found with OpenSea's message", async () => {
    const unknown = "0x9999999999999999999999999999999999999999";
    const out = await byContract({ contract_address: unknown });
    expect(out.error?.details).toMatchObject({
      code: "upstream_not_found",
      status: 404,
      upstream_message: `Contract ${unknown} not found`,
    });
    expect(out.error?.error).toContain(`contract ${unknown} on ethereum`);
  });

  it("a contract without a collection (collection: null) says so", async () => {
    const out = await byContract({ contract_address: NO_COLLECTION });
    expect(out.error?.details).toMatchObject({ code: "upstream_not_found", field: "collection", status: 200 });
    expect(out.error?.error).toContain("has no collection");
    expect(JSON.parse(out.response!.body)).toMatchObject({ collection: null });
  });

  it("a contract's collection is asked once and remembered", async () => {
    await byContract({ contract_address: BAYC, type: ["list"] });
    await byContract({ contract_address: BAYC, type: ["bid"] });
    expect(upstream.requests.filter((r) => r.path.includes("/contract/"))).toHaveLength(1);
  });
});

describe("failures", () => {
  const listings = { contract_address: GLYPHBOTS, token_id: "11111" };
  const token = () => run(nftTransactionsByToken, listings);
  const rateLimited = { status: 429, body: '{"errors":["Too many requests"]}' };

  it("429 without Retry-After, then an answer: retried", async () => {
    upstream.fault(rateLimited);
    const out = await token();
    expect(out.data?.transactions).toHaveLength(3);
    expect(eventsAsked()).toHaveLength(2);
  });

  it("599 (OpenSea's own rate-limit status) with Retry-After in seconds: retried", async () => {
    upstream.fault({ status: 599, body: "", headers: { "retry-after": "0" } });
    const out = await token();
    expect(out.data?.transactions).toHaveLength(3);
  });

  it("429 with Retry-After as an HTTP date: honoured", async () => {
    upstream.fault({ ...rateLimited, headers: { "retry-after": new Date(Date.now() - 1000).toUTCString() } });
    const out = await token();
    expect(out.data?.transactions).toHaveLength(3);
    expect(eventsAsked()).toHaveLength(2);
  });

  it("a Retry-After longer than allowed ends the retries at once", async () => {
    upstream.fault({ ...rateLimited, headers: { "retry-after": "3600" } });
    const out = await token();
    expect(out.error?.details).toMatchObject({
      code: "upstream_rate_limited",
      status: 429,
      retry_after: "3600",
      upstream_message: "Too many requests",
      attempts: 1,
    });
  });

  it("429 to every attempt: upstream_rate_limited after the allowed retries", async () => {
    upstream.fault({ ...rateLimited, times: MAX_RETRIES + 1 });
    const out = await token();
    expect(out.error?.details).toMatchObject({ code: "upstream_rate_limited", attempts: MAX_RETRIES + 1 });
    expect(eventsAsked()).toHaveLength(MAX_RETRIES + 1);
  });

  it("5xx: retried; an HTML proxy page to every attempt is upstream_server_error", async () => {
    upstream.fault({ status: 500, body: '{"errors":["Internal error"]}' });
    expect((await token()).data?.transactions).toHaveLength(3);
    upstream.fault({
      status: 502,
      headers: { "content-type": "text/html" },
      body: "<html><title>502 Bad Gateway</title></html>",
      times: MAX_RETRIES + 1,
    });
    const out = await token();
    expect(out.error?.details).toMatchObject({ code: "upstream_server_error", status: 502, content_type: "text/html" });
  });

  it("an answer cut off midway, with or without its length announced: asked again", async () => {
    upstream.fault({ status: 200, body: JSON.stringify(fixture("glyphbots-events-by-nft.json")), dropMidBody: true });
    expect((await token()).data?.transactions).toHaveLength(3);
    upstream.fault({ truncate: true });
    expect((await token()).data?.transactions).toHaveLength(3);
    expect(eventsAsked()).toHaveLength(4);
  });

  it("an answer cut short to every attempt: upstream_bad_response, the raw answer on response", async () => {
    upstream.fault({ truncate: true, times: MAX_RETRIES + 1 });
    const out = await token();
    expect(out.error?.details).toMatchObject({ code: "upstream_bad_response", status: 200 });
    expect(out.error?.details.parse_error).toBeTruthy();
    expect(out.response?.status).toBe(200);
  });

  it("a cursor that repeats: stopped with upstream_bad_response naming next", async () => {
    const first = await byContract({ contract_address: BAYC, type: ["list"], page_size: 2 });
    upstream.fault({ loop: true });
    const out = await byContract({
      contract_address: BAYC,
      type: ["list"],
      page_size: 2,
      continuation: first.data!.continuation,
    });
    expect(out.error?.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    expect(out.error?.error).toContain("loop");
  });

  it("an event this source cannot read fails the page and names the field", async () => {
    const events = fixture("glyphbots-events-by-nft.json").asset_events as Record<string, any>[];
    const broken = { ...events[1], payment: { ...events[1]!.payment, quantity: "0.7" } };
    upstream.fault({ status: 200, body: stringifyJson({ asset_events: [events[0], broken], next: null }) });
    const out = await token();
    expect(out.error?.details).toMatchObject({
      code: "upstream_bad_response",
      field: "asset_events[1].payment.quantity",
    });
  });
});

describe("the HTTP service", () => {
  const TOKEN = "opensea-test-token-0123456789";
  const auth = { authorization: `Bearer ${TOKEN}` };

  it("OPENSEA_API_KEY is an operator credential: the service needs CHAINMAIL_TOKENS to start with it", async () => {
    await expect(startServer({ port: 0, config: config() })).rejects.toThrow(
      /OPENSEA_API_KEY is set.*CHAINMAIL_TOKENS/s,
    );
  });

  it("serves the source: exact integers on the wire, OpenSea's failures as 502, its limits as 400", async () => {
    const server = await startServer({ port: 0, config: config({ CHAINMAIL_TOKENS: TOKEN }) });
    try {
      const ok = await call(
        `${server.url}/nodes/nft-transactions-by-contract`,
        "POST",
        { query: { contract_address: MULTI } },
        auth,
      );
      expect(ok.status).toBe(200);
      expect(ok.text).toContain(`"quantity":${HUGE_QUANTITY}`);
      expect(ok.text).not.toContain(OPENSEA_KEY);
      const refused = await call(
        `${server.url}/nodes/nft-transactions-by-token`,
        "POST",
        { query: { contract_address: GLYPHBOTS, token_id: "1" }, params: { api_key: "wrong" } },
        auth,
      );
      expect(refused.status).toBe(502);
      expect(refused.body.error.details.code).toBe("upstream_auth");
      const tooBig = await call(
        `${server.url}/nodes/nft-transactions-by-contract`,
        "POST",
        { query: { contract_address: BAYC, page_size: 500 } },
        auth,
      );
      expect(tooBig.status).toBe(400);
      const openapi = await call(`${server.url}/openapi.json`, "GET");
      expect(openapi.text).toContain("OPENSEA_API_KEY");
    } finally {
      await server.close();
    }
  });
});
