/**
 * The HTTP service over real sockets, against the local NFTPort-compatible server: every route, every status,
 * auth on and off, limits, logs, metrics and graceful shutdown.
 */
import { Type } from "@sinclair/typebox";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defineNode } from "../../src/core/node.js";
import { nodes } from "../../src/nodes/index.js";
import { ErrorPayloadSchema } from "../../src/schemas/common.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { testConfig } from "../support/helpers.js";
import { call, logCapture } from "../support/server-helpers.js";
import { FAULTS, type NftportServer, startNftport, VALID_KEY } from "../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, HUGE_TOKEN, standardDataset } from "../upstreams/nftport-data.js";

const TOKEN = "test-token-0123456789abcdef";
const OTHER_TOKEN = "other-token-0123456789abcdef";
const BY_TOKEN = "/nodes/nft-transactions-by-token";
const params = { api_key: VALID_KEY };

let upstream: NftportServer;
const started: RunningServer[] = [];

async function serve(env: Record<string, string> = {}, extra: Parameters<typeof startServer>[0] = {}) {
  const server = await startServer({
    port: 0,
    config: testConfig({ NFTPORT_BASE_URL: upstream.url, ...env }),
    ...extra,
  });
  started.push(server);
  return server;
}

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
});
afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
  await upstream.close();
});

describe("POST /nodes/<node-id>", () => {
  let server: RunningServer;
  const logs = logCapture();
  beforeAll(async () => {
    server = await serve({}, { logger: { stream: logs.stream } });
  });

  it("answers 200 with the node's output object, integers beyond 2^53 exact on the wire", async () => {
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_1155, token_id: HUGE_TOKEN, type: ["mint"] },
      params,
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(["data", "response"]);
    expect(res.body.data.transactions.length).toBeGreaterThan(0);
    // The bare integer, every digit, as the upstream sent it: JSON.parse would have made it 1e22.
    expect(res.text).toContain('"quantity":10000000000000000000000');
    expect(res.body.data.transactions[0].quantity).toBe(10000000000000000000000n);
    expect(upstream.requests.at(-1)!.path).toBe(`/v0/transactions/nfts/${CONTRACT_1155}/${HUGE_TOKEN}`);
  });

  it("accepts a body sent with any content type (curl -d sends form encoding)", async () => {
    const res = await call(
      `${server.url}${BY_TOKEN}`,
      "POST",
      JSON.stringify({ query: { contract_address: CONTRACT_721, token_id: "1" }, params }),
      { "content-type": "application/x-www-form-urlencoded" },
    );
    expect(res.status).toBe(200);
    expect(res.body.data.response).toBe("OK");
  });

  it("answers 400 with the node's error port for invalid input, naming every field, sending nothing upstream", async () => {
    const before = upstream.requests.length;
    const res = await call(`${server.url}/nodes/nft-transactions-on-chain`, "POST", {
      query: { page_size: 0, type: ["bid"] },
      params: { chain: "polygon" },
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error.details.code).toBe("invalid_input");
    const fields = res.body.error.details.violations.map((v: { field: string }) => v.field).sort();
    expect(fields).toEqual(["params.api_key", "params.chain", "query.page_size", "query.type[0]"]);
    expect(upstream.requests.length).toBe(before);
  });

  it("answers 400 for an empty body, an array and an unknown port", async () => {
    const empty = await call(`${server.url}${BY_TOKEN}`, "POST");
    expect(empty.status).toBe(400);
    expect(empty.body.error.details.violations[0].field).toBe("(input)");
    const array = await call(`${server.url}${BY_TOKEN}`, "POST", "[]");
    expect(array.status).toBe(400);
    const port = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
      extra: 1,
    });
    expect(port.status).toBe(400);
    expect(port.body.error.error).toContain("extra is not an input port of nft-transactions-by-token");
  });

  it("answers 400 for malformed JSON, in the error port's shape", async () => {
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", '{"query": {"contract_address": ');
    expect(res.status).toBe(400);
    expect(res.body.error.details.code).toBe("invalid_input");
    expect(res.body.error.error).toContain("The request body is not valid JSON");
    expect(res.body.error.details.violations[0]).toMatchObject({ field: "(body)", rule: "a JSON object" });
  });

  it("answers 404 for an unknown node, listing the nodes that exist", async () => {
    const res = await call(`${server.url}/nodes/nft-transactions-by-wallet`, "POST", {});
    expect(res.status).toBe(404);
    expect(res.body.error.details).toEqual({ code: "unknown_node", nodes: Object.keys(nodes) });
    expect(res.body.error.error).toContain('Unknown node "nft-transactions-by-wallet"');
    for (const id of Object.keys(nodes)) expect(res.body.error.error).toContain(id);
  });

  it("answers 404 for an unknown route, naming the routes", async () => {
    const res = await call(`${server.url}/transactions`, "GET");
    expect(res.status).toBe(404);
    expect(res.body.error.details.code).toBe("not_found");
    expect(res.body.error.error).toContain("POST /nodes/<node-id>");
  });

  it("answers 502 when the upstream answers an error, with the raw response", async () => {
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params: { api_key: "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.details).toMatchObject({ code: "upstream_auth", status: 403 });
    expect(res.body.response.status).toBe(403);
    expect(res.text).not.toContain("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
  });

  it("serves concurrent requests, each with its own answer", async () => {
    const tokens = Array.from({ length: 24 }, (_, i) => String((i % 12) + 1));
    const answers = await Promise.all(
      tokens.map((token_id) =>
        call(`${server.url}${BY_TOKEN}`, "POST", { query: { contract_address: CONTRACT_721, token_id }, params }),
      ),
    );
    answers.forEach((res, i) => {
      expect(res.status).toBe(200);
      for (const record of res.body.data.transactions) {
        const id = record.token_id ?? record.nft?.token_id;
        expect(String(id)).toBe(tokens[i]);
      }
    });
    expect(answers.some((res) => res.body.data.transactions.length > 0)).toBe(true);
  });

  it("logs JSON lines with request ids and never a secret or a body", async () => {
    const res = await call(
      `${server.url}${BY_TOKEN}`,
      "POST",
      { query: { contract_address: CONTRACT_721, token_id: "2" }, params },
      { authorization: `Bearer ${TOKEN}`, "x-request-id": "trace-me-42" },
    );
    expect(res.headers["x-request-id"]).toBe("trace-me-42");
    const entries = logs.parsed();
    const mine = entries.filter((e) => e.reqId === "trace-me-42");
    // One access line per request: what Fastify's `incoming request` said of it, with the status and the time.
    expect(mine.map((e) => e.msg)).toEqual(["request completed"]);
    expect(mine[0]).toMatchObject({
      req: { method: "POST", url: BY_TOKEN, remoteAddress: expect.any(String) },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    const all = logs.lines.join("\n");
    expect(all).not.toContain(VALID_KEY);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee");
    expect(all).not.toContain(CONTRACT_721);
    // A request id that is not a plain short token is replaced, not echoed into logs and headers.
    const odd = await call(`${server.url}/healthz`, "GET", undefined, { "x-request-id": "a b\u00e9" });
    expect(odd.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("limits and timeouts", () => {
  it("answers 413 for a body above CHAINMAIL_BODY_LIMIT_BYTES", async () => {
    const server = await serve({ CHAINMAIL_BODY_LIMIT_BYTES: "2048" });
    const big = { query: { contract_address: CONTRACT_721, token_id: "1", pad: "x".repeat(4096) }, params };
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", big);
    expect(res.status).toBe(413);
    expect(res.body.error.details).toEqual({ code: "request_too_large", limit_bytes: 2048 });
    // A body within the limit still passes.
    const ok = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    expect(ok.status).toBe(200);
  });

  it("accepts a 20 MB body by default (email attachments)", async () => {
    const server = await serve();
    const pad = "A".repeat(20 * 1024 * 1024);
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1", pad },
      params,
    });
    // Past the size limit, so the node itself judges it: `pad` is not a field of the query.
    expect(res.status).toBe(400);
    expect(res.body.error.details.violations.map((v: { field: string }) => v.field)).toEqual(["query.pad"]);
  });

  it("answers 504 when the upstream times out", async () => {
    const server = await serve({ NFTPORT_TIMEOUT_MS: "150", NFTPORT_MAX_RETRIES: "0" });
    upstream.fault({ delayMs: 1_000, status: 200, body: '{"response":"OK","transactions":[]}' });
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    expect(res.status).toBe(504);
    expect(res.body.error.details).toMatchObject({ code: "upstream_timeout", timeout_ms: 150 });
  });

  it("answers 504 when the upstream's answer starts at once but trickles in past the timeout", async () => {
    const server = await serve({ NFTPORT_TIMEOUT_MS: "150", NFTPORT_MAX_RETRIES: "0" });
    upstream.fault(FAULTS.trickle(40));
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    expect(res.status).toBe(504);
    expect(res.body.error.details).toMatchObject({ code: "upstream_timeout", timeout_ms: 150, status: 200 });
    expect(res.body.error.error).not.toContain("UNKNOWN");
  });

  it("answers 504 when the whole request outlasts CHAINMAIL_REQUEST_TIMEOUT_MS", async () => {
    const server = await serve({ CHAINMAIL_REQUEST_TIMEOUT_MS: "200", NFTPORT_MAX_RETRIES: "0" });
    upstream.fault({ delayMs: 1_500, status: 200, body: '{"response":"OK","transactions":[]}' });
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    expect(res.status).toBe(504);
    expect(res.body.error.details).toEqual({ code: "request_timeout", timeout_ms: 200 });
  });

  it("answers 502 after the retries on a failing upstream, and counts attempts and retries in /metrics", async () => {
    const server = await serve({ NFTPORT_MAX_RETRIES: "1" });
    upstream.fault({ status: 500, body: "" }, { status: 500, body: "" });
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    expect(res.status).toBe(502);
    expect(res.body.error.details).toMatchObject({ code: "upstream_server_error", attempts: 2 });
    const metrics = await call(`${server.url}/metrics`, "GET");
    expect(metrics.headers["content-type"]).toMatch(/^text\/plain/);
    const node = 'node="nft-transactions-by-token"';
    expect(metrics.text).toContain(`chainmail_upstream_attempts_total{${node},upstream="NFTPort",outcome="5xx"} 2`);
    expect(metrics.text).toContain(`chainmail_upstream_retries_total{${node},upstream="NFTPort"} 1`);
    expect(metrics.text).toContain(
      `chainmail_http_requests_total{route="/nodes/nft-transactions-by-token",${node},status="502"} 1`,
    );
    expect(metrics.text).toMatch(
      /chainmail_http_request_duration_seconds_count\{route="\/nodes\/nft-transactions-by-token",node="nft-transactions-by-token",status="502"\} 1/,
    );
  });
});

describe("status of outputs beyond the retrievers", () => {
  const Ports = { data: Type.Object({ sent: Type.Number() }), error: ErrorPayloadSchema };
  const partial = defineNode({
    id: "test-partial",
    version: "v0",
    title: "Partly succeeds",
    description: "Fires both its success port and error, like a partly failed email batch",
    inputs: { request: Type.Object({}) },
    outputs: Ports,
    successPort: "data",
    run: async () => ({
      data: { sent: 1 },
      error: { error: "Chunk 2 failed", details: { code: "partial_failure" as const } },
    }),
  });
  const broken = defineNode({
    id: "test-broken",
    version: "v0",
    title: "Throws",
    description: "A bug",
    inputs: { request: Type.Object({}) },
    outputs: Ports,
    successPort: "data",
    run: async () => {
      throw new TypeError("boom");
    },
  });

  it("answers 502 with both ports when the success port and error both fired", async () => {
    const server = await serve({}, {});
    const app = await import("../../src/server/app.js");
    const fastify = await app.buildApp({
      config: testConfig(),
      nodes: { [partial.id]: partial, [broken.id]: broken },
    });
    await fastify.listen({ port: 0, host: "127.0.0.1" });
    try {
      const url = `http://127.0.0.1:${(fastify.server.address() as { port: number }).port}`;
      const res = await call(`${url}/nodes/test-partial`, "POST", { request: {} });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        data: { sent: 1 },
        error: { error: "Chunk 2 failed", details: { code: "partial_failure" } },
      });
      const bug = await call(`${url}/nodes/test-broken`, "POST", { request: {} });
      expect(bug.status).toBe(500);
      expect(bug.body.error.details.code).toBe("internal");
      // Only the served nodes exist there.
      const other = await call(`${url}${BY_TOKEN}`, "POST", {});
      expect(other.status).toBe(404);
      expect(other.body.error.details.nodes).toEqual(["test-partial", "test-broken"]);
    } finally {
      await fastify.close();
    }
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe("access control", () => {
  const byToken = { query: { contract_address: CONTRACT_721, token_id: "1" } };

  it("refuses to start with default credentials but no CHAINMAIL_TOKENS", async () => {
    await expect(serve({ NFTPORT_API_KEY: VALID_KEY })).rejects.toThrow(/NFTPORT_API_KEY is set.*CHAINMAIL_TOKENS/s);
    await expect(serve({ MAILJET_API_KEY: "mj-user", MAILJET_SECRET_KEY: "mj-secret" })).rejects.toThrow(
      /MAILJET_API_KEY, MAILJET_SECRET_KEY are set/,
    );
    await expect(serve({ SMTP_URL: "smtp://user:pass@127.0.0.1:2525" })).rejects.toThrow(/SMTP_URL is set/);
  });

  it("starts without tokens when no credentials are configured, or SMTP_URL has none", async () => {
    const server = await serve({ SMTP_URL: "smtp://127.0.0.1:2525" });
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", { ...byToken, params });
    expect(res.status).toBe(200);
  });

  it("rejects tokens too short to be safe", async () => {
    await expect(serve({ CHAINMAIL_TOKENS: "short" })).rejects.toThrow(/shorter than 16 characters/);
  });

  it("refuses a body limit or request timeout that is not a positive integer, naming the setting", async () => {
    await expect(serve({ CHAINMAIL_BODY_LIMIT_BYTES: "0" })).rejects.toThrow(
      'Setting CHAINMAIL_BODY_LIMIT_BYTES="0" is invalid: must be an integer from 1 to 268435456.',
    );
    await expect(serve({ CHAINMAIL_REQUEST_TIMEOUT_MS: "5s" })).rejects.toThrow(
      'Setting CHAINMAIL_REQUEST_TIMEOUT_MS="5s" is invalid: must be an integer from 1 to 2147483647 (ms; Node\'s longest timer, about 24.8 days).',
    );
  });

  describe("with default credentials and tokens", () => {
    let server: RunningServer;
    const logs = logCapture();
    beforeAll(async () => {
      server = await serve(
        { NFTPORT_API_KEY: VALID_KEY, CHAINMAIL_TOKENS: `${TOKEN}, ${OTHER_TOKEN}` },
        { logger: { stream: logs.stream } },
      );
    });

    it("answers 401 without a bearer token, before reading the body", async () => {
      const before = upstream.requests.length;
      const res = await call(`${server.url}${BY_TOKEN}`, "POST", byToken);
      expect(res.status).toBe(401);
      expect(res.body.error.details.code).toBe("unauthorized");
      const basic = await call(`${server.url}${BY_TOKEN}`, "POST", byToken, { authorization: `Basic ${TOKEN}` });
      expect(basic.status).toBe(401);
      // Unknown nodes are not revealed to strangers either.
      const unknown = await call(`${server.url}/nodes/nope`, "POST", "{bad");
      expect(unknown.status).toBe(401);
      expect(upstream.requests.length).toBe(before);
    });

    it("answers 403 for a wrong token", async () => {
      const res = await call(`${server.url}${BY_TOKEN}`, "POST", byToken, { authorization: `Bearer ${TOKEN}x` });
      expect(res.status).toBe(403);
      expect(res.body.error.details.code).toBe("forbidden");
    });

    it("runs with any configured token, spending the operator's key", async () => {
      for (const token of [TOKEN, OTHER_TOKEN]) {
        const res = await call(`${server.url}${BY_TOKEN}`, "POST", byToken, { authorization: `Bearer ${token}` });
        expect(res.status).toBe(200);
        expect(upstream.requests.at(-1)!.authorization).toBe(VALID_KEY);
      }
      expect(logs.lines.join("\n")).not.toMatch(new RegExp(`${VALID_KEY}|${TOKEN}|${OTHER_TOKEN}`));
    });

    it("keeps /healthz, /nodes, /openapi.json, /docs and /metrics open", async () => {
      for (const path of ["/healthz", "/nodes", "/openapi.json", "/docs/json", "/metrics"]) {
        expect((await call(`${server.url}${path}`, "GET")).status, path).toBe(200);
      }
      const doc = (await call(`${server.url}/openapi.json`, "GET")).body;
      expect(doc.components.securitySchemes.bearer).toEqual({ type: "http", scheme: "bearer" });
      expect(doc.paths[BY_TOKEN].post.security).toEqual([{ bearer: [] }]);
    });
  });

  it("requires a token when CHAINMAIL_TOKENS is set even without default credentials", async () => {
    const server = await serve({ CHAINMAIL_TOKENS: TOKEN });
    expect((await call(`${server.url}${BY_TOKEN}`, "POST", { ...byToken, params })).status).toBe(401);
    const ok = await call(
      `${server.url}${BY_TOKEN}`,
      "POST",
      { ...byToken, params },
      { authorization: `bearer ${TOKEN}` },
    );
    expect(ok.status).toBe(200);
  });

  it("is open without tokens and credentials: callers pass their own key", async () => {
    const server = await serve();
    const res = await call(`${server.url}${BY_TOKEN}`, "POST", { ...byToken, params });
    expect(res.status).toBe(200);
    const missing = await call(`${server.url}${BY_TOKEN}`, "POST", byToken);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.violations[0].field).toBe("params.api_key");
  });
});

describe("service routes", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve();
  });

  it("GET /nodes lists every registry node with its port schemas", async () => {
    const res = await call(`${server.url}/nodes`, "GET");
    expect(res.status).toBe(200);
    expect(res.body.map((n: { id: string }) => n.id)).toEqual(Object.keys(nodes));
    const byToken = res.body.find((n: { id: string }) => n.id === "nft-transactions-by-token");
    expect(Object.keys(byToken.inputs)).toEqual(["query", "params"]);
    expect(byToken.inputs.query.required).toEqual(expect.arrayContaining(["contract_address", "token_id"]));
  });

  it("GET /healthz answers ok", async () => {
    const res = await call(`${server.url}/healthz`, "GET");
    expect(res).toMatchObject({ status: 200, body: { status: "ok" } });
  });

  it("GET /docs serves the interactive page and its assets", async () => {
    const res = await request(`${server.url}/docs`, { maxRedirections: 0 } as never);
    const html = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(html).toContain("swagger-ui");
    const asset = await call(`${server.url}/docs/static/swagger-ui-bundle.js`, "GET");
    expect(asset.status).toBe(200);
    expect(asset.text.length).toBeGreaterThan(100_000);
  });

  it("GET /metrics speaks Prometheus text", async () => {
    await call(`${server.url}/healthz`, "GET");
    const res = await call(`${server.url}/metrics`, "GET");
    expect(res.text).toContain("# TYPE chainmail_http_requests_total counter");
    expect(res.text).toContain("# TYPE chainmail_http_request_duration_seconds histogram");
    expect(res.text).toMatch(/chainmail_http_requests_total\{route="\/healthz",node="",status="200"\} [1-9]/);
  });
});

describe("graceful shutdown", () => {
  it("finishes the request in flight, then refuses new connections", async () => {
    const server = await startServer({ port: 0, config: testConfig({ NFTPORT_BASE_URL: upstream.url }) });
    upstream.fault({
      delayMs: 600,
      status: 404,
      body: '{"response":"NOK","error":{"code":"not_found","message":"x"}}',
    });
    const before = upstream.requests.length;
    const slow = call(`${server.url}${BY_TOKEN}`, "POST", {
      query: { contract_address: CONTRACT_721, token_id: "1" },
      params,
    });
    while (upstream.requests.length === before) await new Promise((r) => setTimeout(r, 10));
    const closing = server.close();
    const res = await slow;
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    await closing;
    await expect(call(`${server.url}/healthz`, "GET")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });
});
