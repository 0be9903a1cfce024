/**
 * Real NFTPort records (saved responses, test/fixtures/nftport) through the nodes, exactly; the input rules;
 * and the proxy settings. All against the local NFTPort server on loopback.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import { type AnyNode, runNode } from "../../../src/core/node.js";
import { records } from "../../../src/core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { testConfig } from "../../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../../upstreams/nftport.js";
import { FIXTURES, realPages, standardDataset } from "../../upstreams/nftport-data.js";
import { type ForwardProxy, startForwardProxy } from "../../upstreams/proxy.js";

let upstream: NftportServer;
let config: ReturnType<typeof testConfig>;
const params = { api_key: VALID_KEY };
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
  config = testConfig({ NFTPORT_BASE_URL: upstream.url });
});
afterAll(() => upstream.close());

describe("real upstream records round-trip exactly", () => {
  it("the whole-chain page of 2023-04-20 (S4a): same 50 rows, same order, every field", async () => {
    const saved = parseJson(fixture("s4a-on-chain-sale-2023-04-20.json")) as { transactions: unknown[] };
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { type: ["sale"], from_block: 16532560, to_block: 16532563 }, params },
      { config },
    );
    expect(out.error).toBeUndefined();
    expect(out.data?.transactions).toEqual(saved.transactions);
    // A full page: NFTPort's continuation format for this endpoint (base64 of `<epoch s>_<24 hex>`).
    expect(Buffer.from(out.data!.continuation, "base64").toString()).toMatch(/^1675237523_[0-9a-f]{24}$/);
    const last = upstream.requests.at(-1)!;
    expect(last.path).toBe("/v0/transactions");
    expect(last.query.get("from_block")).toBe("16532560");
    expect(last.query.get("to_block")).toBe("16532563");
    expect(last.query.get("chain")).toBe("ethereum");
  });

  it("keeps a 77-digit token id and float text like 0.0 and 182.75165880107699 as the upstream sent them", async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: "0xa604060890923ff400e8c6f5290461a83aedacec" }, params },
      { config },
    );
    const row = out.data!.transactions[0] as { nft: { token_id: string }; price_details: { price: number } };
    expect(row.nft.token_id).toBe("38353890905593656420122911362539807091367997895545943029949536898419305480193");
    expect(row.price_details.price).toBe(0);
  });

  it("S4b: ERC-1155 sales with quantity 10^22 stay exact (bigint in the library)", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      {
        query: { contract_address: "0xf9a412fe25c3b7f01bd11e7cab2965cf56eaa778", token_id: "1", type: ["sale"] },
        params,
      },
      { config },
    );
    const saved = realPages(fixture("s4b-by-token-responses-first20.json"))[0]!;
    expect(out.data?.transactions).toEqual(saved.transactions);
    expect((out.data!.transactions[0] as { quantity: unknown }).quantity).toBe(10000000000000000000000n);
    // A short page: NFTPort sends no continuation key, chainmail reports "".
    expect(out.data?.continuation).toBe("");
  });

  it("S4b: type=sale on one token also returns the cancel_list rows, newest first, like the real API", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      {
        query: { contract_address: "0x3acce66cd37518a6d77d9ea3039e00b3a2955460", token_id: "1002", type: ["sale"] },
        params,
      },
      { config },
    );
    const saved = realPages(fixture("s4b-by-token-responses-first20.json")).find((p) =>
      p.transactions.some((r) => r.type === "cancel_list"),
    )!;
    expect(out.data?.transactions).toEqual(saved.transactions);
    expect(out.data?.transactions.map((r) => r.type)).toEqual(["sale", "sale", "cancel_list", "sale"]);
  });

  it("S4b full page: 50 real rows of one token, newest first, with a continuation like NFTPort's", async () => {
    const saved = parseJson(fixture("s4b-by-token-full-page-a49a0e-11.json")) as {
      transactions: { block_number: number; price_details: { price?: number } }[];
      continuation: string;
    };
    const query = { contract_address: "0xa49a0e5ef83cf89ac8aae182f22e6464b229efc8", token_id: "11", type: ["sale"] };
    const out = await runNode(nftTransactionsByToken, { query, params }, { config });
    expect(saved.transactions).toHaveLength(50);
    expect(out.data?.transactions).toEqual(saved.transactions);
    // NFTPort's continuation names the last row's time in ms; the local server derives its own the same way.
    const [savedMs] = saved.continuation.split("_");
    expect(out.data!.continuation.split("_")[0]).toBe(savedMs);
    expect(out.data!.continuation).toMatch(/^\d{13}_[0-9a-f]{24}$/);
    expect(out.data!.transactions.map((r) => (r as { type: string }).type)).toContain("cancel_list");
    expect((out.data!.transactions[25] as { price_details: { price: number } }).price_details.price).toBe(
      0.0298444444444,
    );
    // The continuation ends the history: the next page is empty and says so.
    const next = await runNode(
      nftTransactionsByToken,
      { query: { ...query, continuation: out.data!.continuation }, params },
      { config },
    );
    expect(next.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    // Paged 7 at a time across continuations: the same 50 rows, once each, in order.
    const paged: unknown[] = [];
    for await (const r of records(
      nftTransactionsByToken,
      { query: { ...query, page_size: 7 }, params },
      {},
      { config },
    ))
      paged.push(r);
    expect(paged).toEqual(saved.transactions);
  });

  it("BAYC #567 (S4c): the real rows, cancel_list among type=sale", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      {
        query: { contract_address: "0xBC4CA0EDA7647A8AB7C2061C2E118A18A936F13D", token_id: "567", type: ["sale"] },
        params,
      },
      { config },
    );
    const saved = parseJson(fixture("e1-reference.json")) as { transactions: unknown[] };
    expect(out.data?.transactions).toEqual(saved.transactions);
    expect(upstream.requests.at(-1)!.path).toBe("/v0/transactions/nfts/0xBC4CA0EDA7647A8AB7C2061C2E118A18A936F13D/567");
  });

  it("every real record can be paged through by contract, none lost or repeated", async () => {
    const contract = "0xcd8366e0be0df82c72f95f3647795bddda6e9222";
    const expected = realPages(fixture("s4a-on-chain-sale-2023-04-20.json"))[0]!.transactions.filter(
      (r) => (r.nft as { contract_address: string }).contract_address === contract,
    );
    const seen: unknown[] = [];
    for await (const r of records(
      nftTransactionsByContract,
      { query: { contract_address: contract, page_size: 2 }, params },
      {},
      { config },
    ))
      seen.push(r);
    expect(seen).toHaveLength(expected.length);
    expect(new Set(seen.map((r) => JSON.stringify(r, (_k, v) => (typeof v === "bigint" ? `${v}` : v))))).toEqual(
      new Set(expected.map((r) => JSON.stringify(r))),
    );
  });
});

describe("input rules", () => {
  const run = (node: AnyNode, input: unknown) =>
    runNode(node, input, { config }) as Promise<{
      data?: { transactions: { block_number?: number }[] };
      error?: { error: string; details: Record<string, unknown> };
    }>;
  const fields = (out: { error?: { details: Record<string, unknown> } }) =>
    ((out.error?.details.violations ?? []) as { field: string }[]).map((v) => v.field).sort();

  it("chain defaults to ethereum and is sent; type defaults to [all]", async () => {
    const out = await run(nftTransactionsByToken, {
      query: { contract_address: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d", token_id: "567" },
      params,
    });
    expect(out.data?.transactions.length).toBeGreaterThan(0);
    expect(upstream.requests.at(-1)!.query.get("chain")).toBe("ethereum");
    expect(upstream.requests.at(-1)!.query.getAll("type")).toEqual(["all"]);
  });

  it("by contract accepts bid and list; the other two do not", async () => {
    const ok = await run(nftTransactionsByContract, {
      query: { contract_address: "0x1111111111111111111111111111111111111111", type: ["list"] },
      params,
    });
    expect(ok.error).toBeUndefined();
    for (const node of [nftTransactionsByToken, nftTransactionsOnChain]) {
      const out = await run(node, {
        query: { contract_address: "0x1111111111111111111111111111111111111111", token_id: "1", type: ["bid", "list"] },
        params,
      });
      expect(out.error?.details.code).toBe("invalid_input");
      expect(out.error?.error).toContain(
        'query.type[0] = "bid" is invalid: must be one of: transfer, mint, burn, sale, all',
      );
      expect(out.error?.error).toContain('query.type[1] = "list" is invalid');
    }
  });

  it("reports every violation at once: required fields, chain, page_size, blocks, unknown fields", async () => {
    const out = await run(nftTransactionsByToken, {
      query: { token_id: "-1", page_size: 2.5, typo: 1 },
      params: { api_key: "", chain: "polygon" },
    });
    expect(fields(out)).toEqual([
      "params.api_key",
      "params.chain",
      "query.contract_address",
      "query.page_size",
      "query.token_id",
      "query.typo",
    ]);
    // Nothing given in params (where credentials go) is shown back, whatever the field.
    expect(out.error?.error).toContain(
      'params.chain = [a string, not shown: it may be a secret] is invalid: must be "ethereum"',
    );
    expect(out.error?.error).toContain('query.token_id = "-1" is invalid');
    expect(out.error?.error).toContain("query.page_size = 2.5 is invalid: must be an integer >= 1");
    expect(out.error?.error).not.toContain(VALID_KEY);
  });

  it("from_block/to_block: non-negative integers with from <= to", async () => {
    const out = await run(nftTransactionsOnChain, { query: { from_block: -1, to_block: "9" }, params });
    expect(fields(out)).toEqual(["query.from_block", "query.to_block"]);
    expect(out.error?.error).toContain(
      "query.from_block = -1 is invalid: must be an integer from 0 to 18446744073709551615 (uint64)",
    );
    const order = await run(nftTransactionsOnChain, { query: { from_block: 10, to_block: 9 }, params });
    expect(order.error?.error).toContain("query.from_block = 10 is invalid: must be <= query.to_block (9)");
    const equal = await run(nftTransactionsOnChain, { query: { from_block: 16532561, to_block: 16532561 }, params });
    expect(equal.data?.transactions.every((r) => (r as { block_number: number }).block_number === 16532561)).toBe(true);
  });

  it("type must be an array of allowed values", async () => {
    const out = await run(nftTransactionsOnChain, { query: { type: "sale" }, params });
    expect(out.error?.error).toContain('query.type = "sale" is invalid: must be an array');
  });
});

describe("proxy settings", () => {
  let proxy: ForwardProxy;
  beforeAll(async () => {
    proxy = await startForwardProxy();
  });
  afterAll(() => proxy.close());
  const input = { query: { contract_address: "0x1111111111111111111111111111111111111111", page_size: 1 }, params };

  it("HTTP_PROXY routes every call through the proxy (CONNECT tunnel)", async () => {
    const before = proxy.tunnels.length;
    const out = await runNode(nftTransactionsByContract, input, {
      config: testConfig({ NFTPORT_BASE_URL: upstream.url, HTTP_PROXY: proxy.url }),
    });
    expect(out.data?.transactions).toHaveLength(1);
    expect(proxy.tunnels.slice(before)).toEqual([new URL(upstream.url).host]);
  });

  it("NO_PROXY bypasses it", async () => {
    const before = proxy.tunnels.length;
    const out = await runNode(nftTransactionsByContract, input, {
      config: testConfig({ NFTPORT_BASE_URL: upstream.url, HTTP_PROXY: proxy.url, NO_PROXY: "127.0.0.1" }),
    });
    expect(out.data?.transactions).toHaveLength(1);
    expect(proxy.tunnels.length).toBe(before);
  });

  it("a proxy that is down: upstream_unreachable", async () => {
    const out = await runNode(nftTransactionsByContract, input, {
      config: testConfig({
        NFTPORT_BASE_URL: upstream.url,
        HTTP_PROXY: "http://127.0.0.1:9",
        NFTPORT_MAX_RETRIES: "0",
      }),
    });
    expect(out.error?.details.code).toBe("upstream_unreachable");
  });
});
