/**
 * src/server/node-routes.ts on its own: `POST /nodes/<node-id>` for a few nodes of the test's own, registered on a
 * bare Fastify server over real sockets: the bearer check before anything else, an unknown node naming the known
 * ones, the status of each kind of output, `?bigint=`, CHAINMAIL_REQUEST_TIMEOUT_MS, and reads shared between
 * requests unless a caller asks for a fresh answer (against a loopback server that counts them).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError, type ErrorPayload } from "../../src/core/errors.js";
import { type AnyNode, defineNode } from "../../src/core/node.js";
import { ErrorPayloadSchema } from "../../src/schemas/common.js";
import { createMetrics } from "../../src/server/metrics.js";
import { registerNodeRoutes, statusOf } from "../../src/server/node-routes.js";
import { errorHandler } from "../../src/server/replies.js";
import { loadServerSettings } from "../../src/server/settings.js";
import { testConfig } from "../support/helpers.js";
import { call } from "../support/server-helpers.js";

const TOKEN = "node-routes-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
const outputs = { data: Type.Unknown(), error: ErrorPayloadSchema };
const meta = { version: "v0", title: "Test node", description: "A node of this test." };

let upstream: Server;
let upstreamUrl: string;
let hits = 0;

const echo = defineNode({
  id: "test-echo",
  ...meta,
  inputs: { query: Type.Object({ n: Type.Integer() }) },
  outputs,
  successPort: "data",
  run: async ({ query }, ctx) => ({
    data: {
      n: query.n,
      big: 2n ** 64n,
      cancellable: ctx.signal instanceof AbortSignal,
      observed: typeof ctx.onUpstreamAttempt === "function",
    },
  }),
});
const failing = defineNode({
  id: "test-failing",
  ...meta,
  inputs: {},
  outputs,
  successPort: "data",
  run: async () => ({ error: new ChainmailError("UPSTREAM_RATE_LIMITED", "Slow down.").toPayload() }),
});
const silent = defineNode({
  id: "test-silent",
  ...meta,
  inputs: {},
  outputs,
  successPort: "data",
  run: async () => ({}),
});
/** Runs until cancelled, then reports it. */
const waiting = defineNode({
  id: "test-waiting",
  ...meta,
  inputs: {},
  outputs,
  successPort: "data",
  run: (_input, ctx) =>
    new Promise<{ error: ErrorPayload }>((resolve) =>
      ctx.signal!.addEventListener("abort", () =>
        resolve({ error: new ChainmailError("ABORTED", "The operation was cancelled.").toPayload() }),
      ),
    ),
});
/** One paged read of the loopback upstream through NFTPort's pool. */
const reading = defineNode({
  id: "test-reading",
  ...meta,
  inputs: {},
  outputs,
  successPort: "data",
  run: async (_input, ctx) => {
    const answer = await ctx.config.nftport.pool!.exchange({
      method: "GET",
      url: `${upstreamUrl}/page`,
      timeoutMs: 5000,
    });
    return { data: answer.body };
  },
});
const nodes: Record<string, AnyNode> = Object.fromEntries(
  [echo, failing, silent, waiting, reading].map((node) => [node.id, node as AnyNode]),
);

let app: FastifyInstance;
let url: string;
const metrics = createMetrics();

beforeAll(async () => {
  upstream = createServer((_req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`answer ${hits}`);
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

  const config = testConfig({ CHAINMAIL_REQUEST_TIMEOUT_MS: "300", CHAINMAIL_CACHE_TTL_MS: "60000" });
  const settings = loadServerSettings(config, { tokens: [TOKEN] });
  app = Fastify();
  app.setErrorHandler(errorHandler(settings));
  registerNodeRoutes(app, { config, settings, metrics, nodes });
  url = await app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

describe("POST /nodes/<node-id>", () => {
  it("runs the node with the input object and answers 200 with its output; integers beyond 2^53 stay exact", async () => {
    const answer = await call(`${url}/nodes/test-echo`, "POST", { query: { n: 7 } }, auth);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { n: 7, big: 2n ** 64n, cancellable: true, observed: true } });
    expect(answer.headers["content-type"]).toBe("application/json; charset=utf-8");
  });

  it("?bigint=string writes them as strings of digits; an unknown form is refused with 400", async () => {
    const strings = await call(`${url}/nodes/test-echo?bigint=string`, "POST", { query: { n: 1 } }, auth);
    expect(strings.body.data.big).toBe("18446744073709551616");
    const bad = await call(`${url}/nodes/test-echo?bigint=words`, "POST", { query: { n: 1 } }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.code).toBe("invalid_input");
  });

  it("answers the status of the error's code: invalid input 400, a node's own error its code's, no output 500", async () => {
    const invalid = await call(`${url}/nodes/test-echo`, "POST", { query: { n: "seven" } }, auth);
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details.code).toBe("invalid_input");
    const limited = await call(`${url}/nodes/test-failing`, "POST", {}, auth);
    expect(limited.status).toBe(502);
    expect(limited.body).toEqual({ error: { error: "Slow down.", details: { code: "upstream_rate_limited" } } });
    expect((await call(`${url}/nodes/test-silent`, "POST", {}, auth)).status).toBe(500);
  });

  it("cancels a node at CHAINMAIL_REQUEST_TIMEOUT_MS and answers 504 request_timeout", async () => {
    const answer = await call(`${url}/nodes/test-waiting`, "POST", {}, auth);
    expect(answer.status).toBe(504);
    expect(answer.body.error.details).toEqual({ code: "request_timeout", timeout_ms: 300 });
    expect(answer.body.error.error).toMatch(/^test-waiting did not finish within 300 ms\./);
  });

  it("asks for the bearer token before anything else, on known and unknown nodes alike", async () => {
    for (const path of ["/nodes/test-echo", "/nodes/nope"]) {
      const missing = await call(`${url}${path}`, "POST", { query: { n: 1 } });
      expect(missing.status).toBe(401);
      expect(missing.body.error.details.code).toBe("unauthorized");
      const wrong = await call(`${url}${path}`, "POST", "{not json", {
        authorization: "Bearer some-other-token-0123456789",
      });
      expect(wrong.status).toBe(403);
    }
  });

  it("an unknown node: 404 unknown_node naming every node, whatever the body", async () => {
    const answer = await call(`${url}/nodes/nope`, "POST", "{not json", auth);
    expect(answer.status).toBe(404);
    expect(answer.body.error.details).toEqual({ code: "unknown_node", nodes: Object.keys(nodes) });
    expect(answer.body.error.error).toBe(`Unknown node "nope". Nodes: ${Object.keys(nodes).join(", ")}.`);
  });

  it("shares upstream reads between requests; Cache-Control: no-cache reaches the upstream", async () => {
    const before = hits;
    const first = await call(`${url}/nodes/test-reading`, "POST", {}, auth);
    const second = await call(`${url}/nodes/test-reading`, "POST", {}, auth);
    expect(hits - before).toBe(1);
    expect(second.body.data).toBe(first.body.data);
    const fresh = await call(`${url}/nodes/test-reading`, "POST", {}, { ...auth, "cache-control": "no-cache" });
    expect(hits - before).toBe(2);
    expect(fresh.body.data).not.toBe(first.body.data);
    // The shared reads are reported by the metrics given.
    expect(await metrics.registry.metrics()).toMatch(/^chainmail_upstream_reads_total\{how="cached"\} 1$/m);
  });
});

describe("statusOf", () => {
  it("200 for the success port alone, the code's status for an error (even beside results), else 500", () => {
    const node = echo as AnyNode;
    expect(statusOf(node, { data: 1 })).toBe(200);
    expect(statusOf(node, { data: 1, error: { error: "e", details: { code: "partial_failure" } } })).toBe(502);
    expect(statusOf(node, { error: { error: "e", details: { code: "overloaded" } } })).toBe(503);
    expect(statusOf(node, { error: { error: "e", details: { code: "made-up" as never } } })).toBe(500);
    expect(statusOf(node, { response: {} })).toBe(500);
  });
});
