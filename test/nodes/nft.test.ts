import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runNode } from "../../src/core/node.js";
import { PageError, pages, records } from "../../src/core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../src/nodes/index.js";
import { testConfig } from "../support/helpers.js";
import { type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, HUGE_QUANTITY, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

let upstream: NftportServer;
let config: ReturnType<typeof testConfig>;
const params = { api_key: VALID_KEY };

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
  config = testConfig({ NFTPORT_BASE_URL: upstream.url });
});
afterAll(() => upstream.close());

describe("nft-transactions-by-contract", () => {
  it("returns a page newest first with a continuation and the raw response", async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, page_size: 10 }, params },
      { config },
    );
    expect(out.error).toBeUndefined();
    expect(out.data?.transactions).toHaveLength(10);
    const blocks = out
      .data!.transactions.map((r) => (r as { block_number?: number }).block_number)
      .filter((b) => b !== undefined);
    expect(blocks).toEqual([...blocks].sort((a, b) => b! - a!));
    expect(out.data?.continuation).toMatch(/^\d+_[0-9a-f]{24}$/);
    expect(out.response?.status).toBe(200);
    const last = upstream.requests.at(-1)!;
    expect(last.path).toBe(`/v0/transactions/nfts/${CONTRACT_721}`);
    expect(last.authorization).toBe(VALID_KEY);
    expect(last.query.getAll("type")).toEqual(["all"]);
  });

  it("sends several types as repeated keys", async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, type: ["sale", "list"] }, params },
      { config },
    );
    expect(upstream.requests.at(-1)!.query.getAll("type")).toEqual(["sale", "list"]);
    expect(new Set(out.data!.transactions.map((r) => r.type))).toEqual(new Set(["sale", "list"]));
  });

  it("keeps quantities and token ids beyond 2^53 exact", async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_1155, type: ["mint"] }, params },
      { config },
    );
    const mint = out.data!.transactions.find((r) => (r as { token_id?: unknown }).token_id === HUGE_TOKEN) as {
      quantity: unknown;
    };
    expect(mint.quantity).toBe(HUGE_QUANTITY);
  });
});

describe("validation", () => {
  it("reports every violation at once, naming field, value and rule", async () => {
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { page_size: 0, type: ["bid"], from_block: 10, to_block: 5 }, params: { chain: "polygon" } },
      { config },
    );
    expect(out.data).toBeUndefined();
    expect(out.error?.details.code).toBe("invalid_input");
    const fields = (out.error!.details.violations as { field: string }[]).map((v) => v.field).sort();
    expect(fields).toEqual(["params.api_key", "params.chain", "query.from_block", "query.page_size", "query.type[0]"]);
    expect(out.error!.error).toContain(
      'query.type[0] = "bid" is invalid: must be one of: transfer, mint, burn, sale, all',
    );
    expect(out.error!.error).toContain("query.page_size = 0 is invalid: must be an integer >= 1");
  });

  it("names a wrong value holding an integer beyond 2^53 exactly, instead of failing to print it", async () => {
    const before = upstream.requests.length;
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { type: [[123456789012345678901234n]] }, params },
      { config },
    );
    expect(out.error?.details.code).toBe("invalid_input");
    expect(out.error!.error).toContain("query.type[0] = [123456789012345678901234] is invalid");
    expect(upstream.requests.length).toBe(before);
  });

  it("refuses a value of the wrong kind where the schema has a default, instead of using the default", async () => {
    const before = upstream.requests.length;
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, type: { sale: true } }, params },
      { config },
    );
    expect(out.data).toBeUndefined();
    expect(out.error?.details.code).toBe("invalid_input");
    expect((out.error!.details.violations as { field: string }[]).map((v) => v.field)).toEqual(["query.type"]);
    expect(out.error!.error).toContain('query.type = {"sale":true} is invalid: must be an array');
    expect(upstream.requests.length).toBe(before);
  });

  it("sends nothing upstream for invalid input", async () => {
    const before = upstream.requests.length;
    await runNode(nftTransactionsByToken, { query: { contract_address: "0x12", token_id: "x" }, params }, { config });
    expect(upstream.requests.length).toBe(before);
  });
});

describe("paging", () => {
  const row = (n: number) =>
    `{"type":"transfer","transfer_from":"0x01","transfer_to":"0x02","contract_address":"${CONTRACT_721}","token_id":"${n}","quantity":1,"transaction_hash":"0x${n}","block_hash":"0x${n}","block_number":${n},"transaction_date":"2023-01-01T00:00:00"}`;
  const page = (continuation: string | undefined, ...ids: number[]) => ({
    status: 200,
    body: `{"response":"OK","transactions":[${ids.map(row).join(",")}]${continuation === undefined ? "" : `,"continuation":"${continuation}"`}}`,
  });
  const input = { query: { contract_address: CONTRACT_721, page_size: 2 }, params };

  it("stops on a repeated continuation", async () => {
    upstream.clearFaults();
    upstream.fault(page("A", 1, 2), page("B", 3, 4), page("A", 5, 6));
    const before = upstream.requests.length;
    const got: { continuation: string }[] = [];
    for await (const p of pages(nftTransactionsByContract, input as never, {}, { config })) got.push(p);
    expect(upstream.requests.length - before).toBe(3);
    expect(got.map((p) => p.continuation)).toEqual(["A", "B", ""]);
  });

  it("goes on past an empty page that carries a continuation, stops at one without", async () => {
    upstream.clearFaults();
    upstream.fault(page("A", 1, 2), page("B"), page(undefined, 3));
    const before = upstream.requests.length;
    const got: { transactions: unknown[] }[] = [];
    for await (const p of pages(nftTransactionsByContract, input as never, {}, { config })) got.push(p);
    expect(upstream.requests.length - before).toBe(3);
    expect(got.map((p) => p.transactions.length)).toEqual([2, 0, 1]);
  });

  it("never overshoots the limit even when the upstream sends more than asked", async () => {
    upstream.clearFaults();
    upstream.fault(page("A", 1, 2, 3, 4, 5));
    const before = upstream.requests.length;
    const seen: unknown[] = [];
    for await (const r of records(nftTransactionsByContract, input as never, { limit: 3 }, { config })) seen.push(r);
    expect(seen).toHaveLength(3);
    expect(upstream.requests.length - before).toBe(1);
  });

  it("a failing page throws PageError with the continuation to resume from", async () => {
    upstream.clearFaults();
    upstream.fault(page("A", 1, 2), {
      status: 401,
      body: '{"response":"NOK","error":{"status_code":401,"code":"invalid_api_key","message":"bad"}}',
    });
    const got: unknown[] = [];
    const err = await (async () => {
      for await (const p of pages(nftTransactionsByContract, input as never, {}, { config })) got.push(p);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageError);
    expect((err as PageError).resumeFrom).toBe("A");
    expect((err as PageError).payload.details.code).toBe("upstream_auth");
    expect(got).toHaveLength(1);
  });

  it("walks every page exactly once and stops", async () => {
    const seen: unknown[] = [];
    for await (const r of records(nftTransactionsOnChain, { query: { page_size: 7 }, params }, {}, { config }))
      seen.push(r);
    const total = standardDataset().byContract;
    const onChainCount = [...total.values()].flat().filter((r) => r.block_number !== undefined).length;
    expect(seen).toHaveLength(onChainCount);
  });

  it("never overshoots the limit", async () => {
    const before = upstream.requests.length;
    const seen: unknown[] = [];
    for await (const r of records(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721, page_size: 10 }, params },
      { limit: 25 },
      { config },
    ))
      seen.push(r);
    expect(seen).toHaveLength(25);
    const sizes = upstream.requests.slice(before).map((r) => r.query.get("page_size"));
    expect(sizes).toEqual(["10", "10", "5"]);
  });
});

describe("upstream failures", () => {
  it("retries a 429 honouring Retry-After, then succeeds", async () => {
    upstream.fault({
      status: 429,
      headers: { "retry-after": "0" },
      body: '{"error":{"status_code":429,"code":"too_many_requests","message":"slow down"}}',
    });
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: CONTRACT_721, token_id: "1" }, params },
      { config },
    );
    expect(out.data?.response).toBe("OK");
  });

  it("maps an empty token history (404 not_found) to an empty page", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: CONTRACT_721, token_id: "999999" }, params },
      { config },
    );
    expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    expect(out.response?.status).toBe(404);
  });

  it("reports a refused key without echoing it", async () => {
    const key = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 }, params: { api_key: key } },
      { config },
    );
    expect(out.error?.details).toMatchObject({
      code: "upstream_auth",
      status: 403,
      upstream_code: "invalid_credentials",
    });
    expect(JSON.stringify(out)).not.toContain(key);
  });
});
