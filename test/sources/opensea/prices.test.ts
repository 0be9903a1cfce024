/**
 * Exact prices of OpenSea's payments (src/core/exact-decimals.ts): 333333333333333333 wei is 0.333333333333333333
 * ETH, every digit, in the JSON the command line prints (read back with an exact parser, as jq reads it), in the
 * HTTP service's reply (and as a string field with `?bigint=string`), in what the workflow packages hand their
 * hosts, and beside the number in the library (`price_exact`).
 */
import { parse as parseLossless } from "lossless-json";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson, withExactStrings } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { records } from "../../../src/core/paginate.js";
import { nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { startServer } from "../../../src/server/index.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { call } from "../../support/server-helpers.js";
import { OPENSEA_KEY, type OpenSeaServer, startOpenSea } from "../../upstreams/opensea.js";

const ZERO = "0x0000000000000000000000000000000000000000";
const WETH = "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2";

/** A sale paid `wei` (18 decimals) in ETH, or in WETH. */
const sale = (n: number, wei: string, token = ZERO) => ({
  event_type: "sale",
  chain: "ethereum",
  event_timestamp: 1_700_000_000 - n,
  transaction: `0x${n.toString(16).padStart(64, "0")}`,
  order_hash: `0x${"11".repeat(32)}`,
  seller: `0x${"1".repeat(40)}`,
  buyer: `0x${"2".repeat(40)}`,
  quantity: 1,
  nft: { identifier: String(n), contract: `0x${"3".repeat(40)}`, token_standard: "erc721" },
  payment: { quantity: wei, token_address: token, decimals: 18, symbol: token === ZERO ? "ETH" : "WETH" },
});

const EXACT = ["0.333333333333333333", "1.234567890123456789", "0.000000000000000001"];

let upstream: OpenSeaServer;
beforeAll(async () => {
  upstream = await startOpenSea({ contracts: new Map(), collections: new Map() });
  upstream.script(
    new Map([
      [
        "",
        {
          asset_events: [
            sale(1, "333333333333333333"),
            sale(2, "1234567890123456789", WETH),
            sale(3, "1"),
            sale(4, "1500000000000000000"),
          ],
          next: null,
        },
      ],
    ]),
  );
});
afterAll(() => upstream.close());

const env = () => ({ NFT_SOURCE: "opensea", OPENSEA_BASE_URL: upstream.url, OPENSEA_API_KEY: OPENSEA_KEY });

/** The prices of a JSON text, each as the exact literal it was written with. */
function writtenPrices(text: string): string[] {
  const parsed = parseLossless(text, null, (literal) => literal) as {
    data: { transactions: { price_details: { price: string } }[] };
  };
  return parsed.data.transactions.map((r) => r.price_details.price);
}

describe("exact prices from OpenSea's payments", () => {
  it("the library: price is the nearest number, price_exact its every digit; the record's shape is unchanged", async () => {
    const out = await runNode(nftTransactionsOnChain, { query: {} }, { config: testConfig(env()) });
    const details = out.data!.transactions.map((r) => (r as { price_details: Record<string, unknown> }).price_details);
    expect(details.map((d) => d.price)).toEqual([0.3333333333333333, 1.2345678901234567, 1e-18, 1.5]);
    expect(details.map((d) => d.price_exact)).toEqual([...EXACT, "1.5"]);
    // Not enumerable: the documented keys only, for JSON.stringify, Object.keys and deep equality.
    expect(Object.keys(details[0]!)).toEqual(["asset_type", "price"]);
    expect(JSON.parse(JSON.stringify(details[1]))).toEqual({
      asset_type: "ERC20",
      contract_address: WETH,
      price: 1.2345678901234567,
    });
  });

  it("stringifyJson writes every digit; withExactStrings (workflow hosts) adds price_exact as a string", async () => {
    const out = await runNode(nftTransactionsOnChain, { query: {} }, { config: testConfig(env()) });
    const text = stringifyJson(out);
    expect(writtenPrices(text)).toEqual([...EXACT, "1.5"]);
    expect(text).toContain('"price":0.333333333333333333');
    expect(text).not.toContain("price_exact");
    const forHost = withExactStrings(out.data) as { transactions: { price_details: Record<string, unknown> }[] };
    expect(forHost.transactions[0]!.price_details).toEqual({
      asset_type: "ETH",
      price: 0.3333333333333333,
      price_exact: "0.333333333333333333",
    });
    // What a host does with an item: plain JSON.stringify, the exact text still there.
    expect(JSON.stringify(forHost)).toContain('"price_exact":"1.234567890123456789"');
  });

  it("records() hands out the same exact texts", async () => {
    const texts: unknown[] = [];
    for await (const r of records(nftTransactionsOnChain, { query: {} }, {}, { config: testConfig(env()) })) {
      texts.push((r as { price_details: { price_exact?: string } }).price_details.price_exact);
    }
    expect(texts).toEqual([...EXACT, "1.5"]);
  });

  it("the command line (one page and --all) prints every digit, read back exactly", async () => {
    for (const paging of [[], ["--all"]]) {
      const cli = await runCli(["run", "nft-transactions-on-chain", ...paging, "--input", '{"query":{}}'], {
        env: env(),
      });
      expect(cli.code).toBe(0);
      expect(writtenPrices(cli.stdout)).toEqual([...EXACT, "1.5"]);
    }
  });

  it("the HTTP service: every digit in the reply; with ?bigint=string also price_exact as a string", async () => {
    const TOKEN = "opensea-prices-token-0123456789";
    const server = await startServer({ port: 0, config: testConfig({ ...env(), CHAINMAIL_TOKENS: TOKEN }) });
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      const plain = await call(`${server.url}/nodes/nft-transactions-on-chain`, "POST", { query: {} }, auth);
      expect(plain.status).toBe(200);
      expect(writtenPrices(plain.text)).toEqual([...EXACT, "1.5"]);
      expect(plain.text).not.toContain("price_exact");
      const strings = await call(
        `${server.url}/nodes/nft-transactions-on-chain?bigint=string`,
        "POST",
        { query: {} },
        auth,
      );
      expect(strings.status).toBe(200);
      expect(writtenPrices(strings.text)).toEqual([...EXACT, "1.5"]);
      const parsed = JSON.parse(strings.text) as {
        data: { transactions: { price_details: { price_exact: string } }[] };
      };
      expect(parsed.data.transactions.map((r) => r.price_details.price_exact)).toEqual([...EXACT, "1.5"]);
    } finally {
      await server.close();
    }
  });
});
