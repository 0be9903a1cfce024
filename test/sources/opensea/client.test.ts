/**
 * src/sources/opensea/client.ts on its own, against the local OpenSea server (test/upstreams/opensea.ts) and its
 * queued faults: `getOpenSea` sends the key as X-API-KEY and several values of a query key as repeated keys, parses
 * the answer losslessly, retries what a read may retry (429/599, 5xx, a 2xx that is not JSON) and nothing else, and
 * words every failure with OpenSea's own message and the code a program reads; `upstreamMessage` reads OpenSea's
 * error shapes, bounded. The source over it: test/sources/opensea/source.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ChainmailError } from "../../../src/core/errors.js";
import type { RunContext } from "../../../src/core/node.js";
import {
  badResponse,
  getOpenSea,
  type OpenSeaCall,
  UPSTREAM,
  unreadableAnswer,
  upstreamMessage,
} from "../../../src/sources/opensea/client.js";
import { testConfig } from "../../support/helpers.js";
import { OPENSEA_KEY, type OpenSeaServer, startOpenSea } from "../../upstreams/opensea.js";
import { BAYC, openseaDataset } from "../../upstreams/opensea-data.js";

let server: OpenSeaServer;
let ctx: RunContext;

beforeAll(async () => {
  server = await startOpenSea(openseaDataset());
  ctx = { config: testConfig({ OPENSEA_BASE_URL: server.url, OPENSEA_MAX_RETRIES: "2" }) };
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.clearFaults();
});

const contract = (more: Partial<OpenSeaCall> = {}): OpenSeaCall => ({
  path: `/api/v2/chain/ethereum/contract/${BAYC}`,
  apiKey: OPENSEA_KEY,
  node: "test-node",
  notFound: `contract ${BAYC} on ethereum`,
  ...more,
});

/** The requests the server got during `work`. */
async function requestsOf<T>(work: () => Promise<T>): Promise<{ out: T; requests: OpenSeaServer["requests"] }> {
  const before = server.requests.length;
  const out = await work();
  return { out, requests: server.requests.slice(before) };
}

describe("getOpenSea", () => {
  it("GETs the resource with the key as X-API-KEY and gives the parsed body and the raw response", async () => {
    const { out, requests } = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(out.error).toBeUndefined();
    expect(out.body).toMatchObject({ address: BAYC, chain: "ethereum" });
    expect(out.response?.status).toBe(200);
    expect(requests.map((r) => [r.path, r.apiKey])).toEqual([[`/api/v2/chain/ethereum/contract/${BAYC}`, OPENSEA_KEY]]);
  });

  it("sends several values of a key as repeated keys, each encoded, and leaves undefined ones out", async () => {
    const { requests } = await requestsOf(() =>
      getOpenSea(
        contract({
          path: "/api/v2/events/collection/boredapeyachtclub",
          query: { event_type: ["sale", "transfer"], limit: 5, after: undefined, next: "a b&c=d" },
        }),
        ctx,
      ),
    );
    const query = requests[0]!.query;
    expect(query.getAll("event_type")).toEqual(["sale", "transfer"]);
    expect([query.get("limit"), query.has("after"), query.get("next")]).toEqual(["5", false, "a b&c=d"]);
  });

  it("parses the answer losslessly: integers beyond 2^53 are bigints", async () => {
    server.fault({ status: 200, body: '{"quantity": 9007199254740993, "small": 7}' });
    const out = await getOpenSea(contract(), ctx);
    expect(out.body).toEqual({ quantity: 9_007_199_254_740_993n, small: 7 });
  });

  it("retries 429 and 599 and a 5xx, then answers", async () => {
    server.fault(
      { status: 429, body: "", headers: { "retry-after": "0" } },
      { status: 599, body: "" },
      { status: 502, body: "" },
    );
    const { out, requests } = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(out.error?.code).toBe("upstream_server_error");
    expect(requests).toHaveLength(3);
    server.fault({ status: 429, body: '{"detail": "Request was throttled."}', headers: { "retry-after": "0" } });
    const again = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(again.out.body).toMatchObject({ address: BAYC });
    expect(again.requests).toHaveLength(2);
  });

  it("gives up on a rate limit after every retry: upstream_rate_limited with OpenSea's words and its Retry-After", async () => {
    server.fault({
      status: 599,
      body: '{"detail": "Request was throttled."}',
      headers: { "retry-after": "0" },
      times: 3,
    });
    const { out, requests } = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(requests).toHaveLength(3);
    expect(out.error).toBeInstanceOf(ChainmailError);
    expect(out.error?.code).toBe("upstream_rate_limited");
    expect(out.error?.message).toContain(
      "OpenSea rate limit hit (HTTP 599: Request was throttled.); gave up after 3 attempt(s).",
    );
    expect(out.error?.details).toMatchObject({ upstream: UPSTREAM, status: 599, retry_after: "0", attempts: 3 });
    expect(out.response?.status).toBe(599);
  });

  it("never retries a refused key, a 404 or a 400, and says what each means", async () => {
    const refused = await requestsOf(() => getOpenSea(contract({ apiKey: "wrong-key-123" }), ctx));
    expect(refused.requests).toHaveLength(1);
    expect(refused.out.error?.code).toBe("upstream_auth");
    expect(refused.out.error?.message).toMatch(/^OpenSea refused the API key \(HTTP 401: Invalid API key\)\./);
    expect(refused.out.error?.details).toMatchObject({ field: "params.api_key", upstream_message: "Invalid API key" });
    expect(JSON.stringify(refused.out)).not.toContain("wrong-key-123");

    const missing = await requestsOf(() =>
      getOpenSea(
        contract({
          path: "/api/v2/chain/ethereum/contract/0x9999999999999999999999999999999999999999",
          notFound: "contract 0x99… on ethereum",
        }),
        ctx,
      ),
    );
    expect(missing.requests).toHaveLength(1);
    expect(missing.out.error?.code).toBe("upstream_not_found");
    expect(missing.out.error?.message).toMatch(
      /^OpenSea does not know contract 0x99… on ethereum \(HTTP 404: Contract .* not found\)\./,
    );

    const rejected = await requestsOf(() =>
      getOpenSea(contract({ path: "/api/v2/events/collection/boredapeyachtclub", query: { limit: 500 } }), ctx),
    );
    expect(rejected.requests).toHaveLength(1);
    expect(rejected.out.error?.code).toBe("upstream_rejected");
    expect(rejected.out.error?.details).toMatchObject({
      status: 400,
      upstream_message: "limit: must be an integer between 1 and 200",
    });
  });

  it("asks again after a 2xx that is not JSON, and names what came when it never is", async () => {
    server.fault({ status: 200, body: '{"address": "0xbc4' });
    const healed = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(healed.out.body).toMatchObject({ address: BAYC });
    expect(healed.requests).toHaveLength(2);

    server.fault({ status: 200, body: "<html>proxy login</html>", headers: { "content-type": "text/html" }, times: 3 });
    const { out, requests } = await requestsOf(() => getOpenSea(contract(), ctx));
    expect(requests).toHaveLength(3);
    expect(out.error?.code).toBe("upstream_bad_response");
    expect(out.error?.message).toContain(
      'OpenSea answered HTTP 200 with a body that is not JSON (text/html: "<html>proxy login</html>").',
    );
    expect(out.error?.details).toMatchObject({ status: 200, content_type: "text/html", attempts: 3 });
    expect(out.response?.body).toBe("<html>proxy login</html>");

    server.fault({ status: 204, body: "", times: 3 });
    expect((await getOpenSea(contract(), ctx)).error?.message).toContain(
      "OpenSea answered HTTP 204 with an empty body.",
    );
  });

  it("words a server error with what came, when OpenSea said nothing of its own", async () => {
    server.fault({
      status: 503,
      body: "<html>Service Unavailable</html>",
      headers: { "content-type": "text/html" },
      times: 3,
    });
    const out = await getOpenSea(contract(), ctx);
    expect(out.error?.code).toBe("upstream_server_error");
    expect(out.error?.message).toMatch(
      /^OpenSea failed \(HTTP 503, text\/html: "<html>Service Unavailable<\/html>"\) after 3 attempt\(s\)\./,
    );
  });

  it("stops at once when its call is cancelled", async () => {
    const out = await getOpenSea(contract(), { ...ctx, signal: AbortSignal.abort() });
    expect(out.error?.code).toBe("aborted");
  });

  it("reports each attempt, named by the node that asked", async () => {
    const events: { node: string; status?: number }[] = [];
    server.fault({ status: 500, body: "" });
    await getOpenSea(contract(), {
      ...ctx,
      onUpstreamAttempt: (e) =>
        events.push({ node: e.node, ...(e.outcome.kind === "response" ? { status: e.outcome.status } : {}) }),
    });
    expect(events.map((e) => e.node)).toEqual(["test-node", "test-node"]);
    expect(events.map((e) => e.status)).toEqual([500, 200]);
  });
});

describe("upstreamMessage", () => {
  it("reads OpenSea's error shapes: errors (strings or objects, at most 5), a JSON string, detail, message, error", () => {
    expect(upstreamMessage({ errors: ["a", { message: "b" }, { detail: "c" }, { code: 1 }] })).toBe(
      'a; b; c; {"code":1}',
    );
    expect(upstreamMessage({ errors: ["1", "2", "3", "4", "5", "6"] })).toBe("1; 2; 3; 4; 5");
    expect(upstreamMessage("Invalid API key")).toBe("Invalid API key");
    expect(upstreamMessage({ detail: "Request was throttled." })).toBe("Request was throttled.");
    expect(upstreamMessage({ message: "m", detail: "d" })).toBe("m");
    expect(upstreamMessage({ error: "e" })).toBe("e");
    expect(upstreamMessage({ errors: [], detail: "d" })).toBe("d");
  });

  it("gives nothing for other shapes or inherited keys, and bounds what it gives to one line of 300", () => {
    for (const body of [undefined, null, 42, [], ["a"], {}, { detail: 5 }, Object.create({ detail: "inherited" })]) {
      expect(upstreamMessage(body)).toBeUndefined();
    }
    expect(upstreamMessage("line one\r\nline\u0000two\u001b[31m")).toBe("line one line two [31m");
    expect(upstreamMessage("x".repeat(1_000))).toHaveLength(300);
  });
});

describe("the errors of an unreadable answer", () => {
  const response = { status: 200, headers: { "content-type": "application/json" }, body: "" };

  it("badResponse says the body was empty or not JSON, with its content type and the parse error", () => {
    const empty = badResponse(response, "empty body", 2);
    expect(empty.code).toBe("upstream_bad_response");
    expect(empty.shortMessage).toBe("OpenSea answered HTTP 200 with an empty body.");
    expect(empty.details).toEqual({
      upstream: UPSTREAM,
      status: 200,
      content_type: "application/json",
      attempts: 2,
      parse_error: "empty body",
    });
    const text = badResponse({ ...response, headers: {}, body: "y".repeat(100) }, "Unexpected token", 1);
    expect(text.shortMessage).toBe(
      `OpenSea answered HTTP 200 with a body that is not JSON (no content type: "${"y".repeat(60)}").`,
    );
  });

  it("unreadableAnswer names the field and its rule", () => {
    const err = unreadableAnswer(response, "asset_events[3].payment.quantity", "is not a decimal integer string");
    expect(err.code).toBe("upstream_bad_response");
    expect(err.shortMessage).toBe(
      "OpenSea answered something this source cannot read: asset_events[3].payment.quantity is not a decimal integer string.",
    );
    expect(err.details).toEqual({
      upstream: UPSTREAM,
      status: 200,
      field: "asset_events[3].payment.quantity",
      attempts: 1,
    });
  });
});
