/**
 * Every way an NFTPort call can fail, through the library against the local NFTPort server: each reaches `error`
 * with the right `details.code`, a message naming what to fix, `response` whenever the upstream answered, bounded
 * retries (the server counts the attempts), and never the api key.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { type AnyNode, runNode } from "../../../src/core/node.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { testConfig } from "../../support/helpers.js";
import {
  FAULTS,
  type NftportServer,
  RATE_LIMIT_BODY,
  SUSPENDED_KEY,
  startNftport,
  VALID_KEY,
} from "../../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../../upstreams/nftport-data.js";

let upstream: NftportServer;
const params = { api_key: VALID_KEY };
const byContract = { query: { contract_address: CONTRACT_721, page_size: 5 }, params };
const MAX_RETRIES = 2;
const events: unknown[] = [];

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
  events.length = 0;
});

function config(env: Record<string, string> = {}) {
  return testConfig({ NFTPORT_BASE_URL: upstream.url, NFTPORT_MAX_RETRIES: String(MAX_RETRIES), ...env });
}

/** Runs by-contract with a config; records every attempt event (what a logger or metrics would see). */
async function run(
  input: unknown = byContract,
  env: Record<string, string> = {},
  node: AnyNode = nftTransactionsByContract,
) {
  const out = await runNode(node, input, { config: config(env), onUpstreamAttempt: (e) => events.push(e) });
  // The key never appears in any output or in what a logger would be given.
  expect(stringifyJson(out)).not.toContain(VALID_KEY);
  expect(stringifyJson(events)).not.toContain(VALID_KEY);
  return out;
}

describe("NFTPort answers an error envelope", () => {
  it("401 invalid_api_key: upstream_auth naming params.api_key, not retried", async () => {
    const key = "not-a-uuid-key";
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_721 }, params: { api_key: key } },
      { config: config() },
    );
    expect(out.error?.details).toMatchObject({
      code: "upstream_auth",
      status: 401,
      upstream_code: "invalid_api_key",
      field: "params.api_key",
      attempts: 1,
    });
    expect(out.error?.error).toContain("params.api_key");
    expect(out.response?.status).toBe(401);
    expect(upstream.requests).toHaveLength(1);
    expect(stringifyJson(out)).not.toContain(key);
  });

  it("403 account_suspended says so", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: CONTRACT_721, token_id: "1" }, params: { api_key: SUSPENDED_KEY } },
      { config: config() },
    );
    expect(out.error?.details).toMatchObject({
      code: "upstream_auth",
      status: 403,
      upstream_code: "account_suspended",
    });
    expect(out.error?.error).toMatch(/suspended/);
    expect(stringifyJson(out)).not.toContain(SUSPENDED_KEY);
  });

  it("422 invalid_enumeration for a type NFTPort refuses: upstream_rejected naming query.type", async () => {
    // type=bid no longer reaches NFTPort (chainmail filters it itself); an upstream that drops `list` still could.
    upstream.fault({
      status: 422,
      body: `{"response":"NOK","error":{"status_code":422,"code":"invalid_enumeration","message":"type: value is not a valid enumeration member; permitted: 'transfer', 'mint', 'burn', 'sale', 'all'"}}`,
    });
    const out = await run({ query: { contract_address: CONTRACT_721, type: ["list"] }, params });
    expect(out.error?.details).toMatchObject({
      code: "upstream_rejected",
      status: 422,
      upstream_code: "invalid_enumeration",
    });
    expect(out.error?.error).toContain("query.type");
    expect(out.response?.body).toContain('"response":"NOK"');
    expect(upstream.requests).toHaveLength(1);
  });

  it("422 value_error for page_size above NFTPort's 50", async () => {
    const out = await run({ query: { contract_address: CONTRACT_721, page_size: 51 }, params });
    expect(out.error?.details).toMatchObject({ code: "upstream_rejected", status: 422, upstream_code: "value_error" });
    expect(out.error?.error).toContain("query.page_size");
  });

  it("422 invalid_continuation_string: invalid_continuation naming query.continuation", async () => {
    const out = await run({ query: { contract_address: CONTRACT_721, continuation: "1677412631000_bogus" }, params });
    expect(out.error?.details).toMatchObject({
      code: "invalid_continuation",
      field: "query.continuation",
      upstream_code: "invalid_continuation_string",
    });
    expect(out.error?.error).toContain("query.continuation");
  });

  it("404 not_found for a token with no history is an empty page, with the raw 404 kept", async () => {
    const out = await run(
      { query: { contract_address: CONTRACT_721, token_id: "123456789" }, params },
      {},
      nftTransactionsByToken,
    );
    expect(out.error).toBeUndefined();
    expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    expect(out.response?.status).toBe(404);
    expect(out.response?.body).toContain("not_found");
  });

  it("a 404 that is not NFTPort's envelope (wrong base URL) is upstream_bad_response", async () => {
    upstream.fault({ status: 404, headers: { "content-type": "text/html" }, body: "<h1>Not Found</h1>" });
    const out = await run();
    expect(out.error?.details).toMatchObject({ code: "upstream_bad_response", status: 404, content_type: "text/html" });
    expect(out.error?.error).toMatch(/NFTPORT_BASE_URL/);
  });
});

describe("retries", () => {
  it("429 (real body, no Retry-After) is retried MAX_RETRIES times, then upstream_rate_limited", async () => {
    upstream.fault({ ...FAULTS.rateLimited(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
    expect(out.error?.details).toMatchObject({
      code: "upstream_rate_limited",
      status: 429,
      upstream_code: "too_many_requests",
      attempts: MAX_RETRIES + 1,
    });
    expect(out.error?.error).toMatch(/NFTPORT_MAX_RETRIES/);
    expect(out.response).toMatchObject({ status: 429, body: RATE_LIMIT_BODY });
  });

  it("honours Retry-After in seconds", async () => {
    upstream.fault(FAULTS.rateLimited("1"));
    const out = await run();
    expect(out.data?.transactions).toHaveLength(5);
    expect(upstream.requests).toHaveLength(2);
    expect((events[0] as { retryInMs: number }).retryInMs).toBe(1000);
  });

  it("honours Retry-After as an HTTP date", async () => {
    upstream.fault(FAULTS.rateLimited(new Date(Date.now() + 2000).toUTCString()));
    const out = await run();
    expect(out.data?.transactions).toHaveLength(5);
    const wait = (events[0] as { retryInMs: number }).retryInMs;
    // HTTP dates have whole seconds: the wait is what is left of the 2 s, never more.
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(2000);
  });

  it("gives up at once when Retry-After asks for longer than CHAINMAIL_RETRY_MAX_DELAY_MS", async () => {
    upstream.fault(FAULTS.rateLimited("3600"));
    const out = await run();
    expect(upstream.requests).toHaveLength(1);
    expect(out.error?.details).toMatchObject({ code: "upstream_rate_limited", retry_after: "3600", attempts: 1 });
  });

  it("stops retrying when the total budget would be exceeded, whatever the retry count", async () => {
    upstream.fault({ ...FAULTS.rateLimited("1"), times: 10 });
    const out = await run(byContract, { NFTPORT_MAX_RETRIES: "10", CHAINMAIL_RETRY_BUDGET_MS: "1500" });
    // Attempt 1 at 0 s, wait 1 s, attempt 2; another 1 s wait would end past 1.5 s.
    expect(upstream.requests).toHaveLength(2);
    expect(out.error?.details).toMatchObject({ code: "upstream_rate_limited", attempts: 2 });
  });

  it("5xx JSON is retried and a later success is returned", async () => {
    upstream.fault(FAULTS.serverErrorJson());
    const out = await run();
    expect(out.data?.transactions).toHaveLength(5);
    expect(out.response?.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
  });

  it("persistent 5xx JSON: upstream_server_error with NFTPort's code", async () => {
    upstream.fault({ ...FAULTS.serverErrorJson(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
    expect(out.error?.details).toMatchObject({
      code: "upstream_server_error",
      status: 500,
      upstream_code: "internal_error",
      attempts: MAX_RETRIES + 1,
    });
  });

  it("an HTML 502 from a proxy: upstream_server_error showing the content type", async () => {
    upstream.fault({ ...FAULTS.badGatewayHtml(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(out.error?.details).toMatchObject({ code: "upstream_server_error", status: 502, content_type: "text/html" });
    expect(out.error?.error).toContain("HTTP 502, text/html");
    expect(out.response?.body).toContain("502 Bad Gateway");
  });

  it("a 503 with an empty body", async () => {
    upstream.fault({ ...FAULTS.unavailableEmpty(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(out.error?.details).toMatchObject({ code: "upstream_server_error", status: 503 });
    expect(out.error?.error).toContain("an empty body");
    expect(out.response?.body).toBe("");
  });

  it("no retry on 4xx", async () => {
    upstream.fault({
      status: 400,
      body: '{"response":"NOK","error":{"status_code":400,"code":"bad_request","message":"Bad request."}}',
    });
    const out = await run();
    expect(upstream.requests).toHaveLength(1);
    expect(out.error?.details).toMatchObject({ code: "upstream_rejected", status: 400, upstream_code: "bad_request" });
  });
});

describe("answers that are not a transactions page", () => {
  it.each([
    ["an empty 200 body", FAULTS.okEmptyBody(), /an empty body/],
    ["invalid JSON", FAULTS.okInvalidJson(), /not JSON/],
    ["an HTML 200 (captive portal)", FAULTS.okHtml(), /not JSON \(text\/html/],
    ["JSON of another shape", { status: 200, body: '{"hello":"world"}' }, /JSON that is not a transactions page/],
  ])("%s: upstream_bad_response, not retried", async (_name, fault, message) => {
    upstream.fault(fault);
    const out = await run();
    expect(upstream.requests).toHaveLength(1);
    expect(out.error?.details.code).toBe("upstream_bad_response");
    expect(out.error?.error).toMatch(message);
    expect(out.response?.status).toBe(200);
  });

  it("scrubs the key when an upstream echoes it back", async () => {
    upstream.fault({
      status: 500,
      body: `{"error":"bad key ${VALID_KEY}"}`,
      headers: { "x-echo": VALID_KEY },
      times: 3,
    });
    const out = await run();
    expect(out.response?.body).toContain("[REDACTED]");
    expect(out.response?.headers["x-echo"]).toBe("[REDACTED]");
  });
});

describe("network failures", () => {
  it("connection refused (closed port): upstream_unreachable after every retry, no response", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const out = await run(byContract, { NFTPORT_BASE_URL: `http://127.0.0.1:${port}` });
    expect(out.error?.details).toMatchObject({
      code: "upstream_unreachable",
      network_code: "ECONNREFUSED",
      request_sent: false,
      attempts: MAX_RETRIES + 1,
    });
    expect(out.error?.error).toContain(`127.0.0.1:${port}`);
    expect(out.response).toBeUndefined();
    expect(events).toHaveLength(MAX_RETRIES + 1);
  });

  it("connection reset before an answer: retried, then upstream_unreachable", async () => {
    upstream.fault({ ...FAULTS.reset(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
    expect(out.error?.details).toMatchObject({ code: "upstream_unreachable", request_sent: true });
    expect(out.error?.error).toContain("broke before an answer");
    expect(out.error?.error).toContain("Try again later; if it keeps happening, check any proxy");
    expect(out.response).toBeUndefined();
  });

  it("a connection dropped mid-body is retried and a later answer wins", async () => {
    upstream.fault(FAULTS.dropMidBody());
    const out = await run();
    expect(upstream.requests).toHaveLength(2);
    expect(out.data?.transactions).toHaveLength(5);
  });

  it("a connection dropped mid-body every time: upstream_unreachable", async () => {
    upstream.fault({ ...FAULTS.dropMidBody(), times: MAX_RETRIES + 1 });
    const out = await run();
    expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
    expect(out.error?.details).toMatchObject({ code: "upstream_unreachable", truncated: true, status: 200 });
    expect(out.error?.error).toContain("cut its answer off midway (HTTP 200)");
    expect(out.error?.error).toContain("ask for less at once (a smaller page)");
  });

  it("a slow upstream: upstream_timeout after NFTPORT_TIMEOUT_MS on every attempt", async () => {
    upstream.fault({ ...FAULTS.slow(1500), times: MAX_RETRIES + 1 });
    const out = await run(byContract, { NFTPORT_TIMEOUT_MS: "200" });
    expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
    expect(out.error?.details).toMatchObject({ code: "upstream_timeout", timeout_ms: 200, attempts: MAX_RETRIES + 1 });
    expect(out.error?.error).toContain("200 ms");
  });

  it("an answer that starts at once and then trickles past the timeout: upstream_timeout on every node, not unreachable", async () => {
    const inputs: [AnyNode, unknown][] = [
      [nftTransactionsByContract, byContract],
      [nftTransactionsByToken, { query: { contract_address: CONTRACT_721, token_id: "1" }, params }],
      [nftTransactionsOnChain, { query: { page_size: 3 }, params }],
    ];
    for (const [node, input] of inputs) {
      upstream.requests.length = 0;
      upstream.fault({ ...FAULTS.trickle(50), times: MAX_RETRIES + 1 });
      const out = await run(input, { NFTPORT_TIMEOUT_MS: "200" }, node);
      expect(upstream.requests).toHaveLength(MAX_RETRIES + 1);
      expect(out.error?.details).toMatchObject({
        code: "upstream_timeout",
        timeout_ms: 200,
        status: 200,
        attempts: MAX_RETRIES + 1,
      });
      expect(out.error?.error).toMatch(
        /^NFTPort did not finish its answer within 200 ms \(HTTP 200, \d+ bytes of it came\)/,
      );
      expect(out.error?.error).not.toContain("UNKNOWN");
    }
  });

  it("a slow first answer, then a fast one: the retry succeeds", async () => {
    upstream.fault(FAULTS.slow(1500));
    const out = await run({ query: { page_size: 3 }, params }, { NFTPORT_TIMEOUT_MS: "200" }, nftTransactionsOnChain);
    expect(out.data?.transactions).toHaveLength(3);
    expect(upstream.requests).toHaveLength(2);
  });
});
