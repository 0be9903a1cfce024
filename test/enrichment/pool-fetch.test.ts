/**
 * src/enrichment/pool-fetch.ts on its own: `poolFetch` GETs a token's metadata through the pool it is given (a
 * workflow host's engine; here this process's own pools from pools/choose.ts, one of them behind the loopback forward
 * proxy, test/upstreams/proxy.ts) against the loopback metadata server: the body, its media type and the URL it came
 * from after redirects; each redirect target checked before it is asked; why there is none (a status, a size, a
 * timeout, a connection failure, a cancelled call) and never a throw.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolsFor } from "../../src/core/pools/choose.js";
import type { FetchLimits } from "../../src/enrichment/metadata.js";
import { poolFetch } from "../../src/enrichment/pool-fetch.js";
import { type MetadataServer, startMetadataServer, tokenDocument } from "../support/enrichment-helpers.js";
import { type ForwardProxy, startForwardProxy } from "../upstreams/proxy.js";

let server: MetadataServer;
let proxy: ForwardProxy;
const limits: FetchLimits = { timeoutMs: 2_000, maxBytes: 64 * 1024, allowPrivate: new Set(["127.0.0.1"]) };
const fetch = poolFetch(poolsFor({}).pool);

beforeAll(async () => {
  server = await startMetadataServer();
  proxy = await startForwardProxy();
});
afterAll(async () => {
  await server?.close();
  await proxy?.close();
});

const get = (path: string, more: Partial<FetchLimits> = {}) => fetch(`${server.url}${path}`, { ...limits, ...more });

describe("poolFetch", () => {
  it("resolves to the body and its media type alone, and the URL it came from after redirects", async () => {
    const got = await get("/token/2a.json");
    expect(got).toMatchObject({ ok: true, url: `${server.url}/token/2a.json`, contentType: "application/json" });
    expect(got.ok && JSON.parse(got.body.toString("utf8"))).toEqual(tokenDocument("2a"));
    expect(await get("/to-good.json")).toMatchObject({ ok: true, url: `${server.url}/token/7.json` });
  });

  it("goes through the pool it is given: behind a proxy, through the proxy", async () => {
    const proxied = poolFetch(poolsFor({ HTTP_PROXY: proxy.url }).pool);
    const before = proxy.tunnels.length;
    expect(await proxied(`${server.url}/token/3.json`, limits)).toMatchObject({ ok: true });
    expect(proxy.tunnels.slice(before)).toEqual([new URL(server.url).host]);
  });

  it("checks every URL before asking it: the first one and each redirect's", async () => {
    const before = server.asked.length;
    expect(await get("/token/1.json", { allowPrivate: false })).toEqual({
      ok: false,
      url: `${server.url}/token/1.json`,
      why: "refused: a private address (127.0.0.1)",
    });
    expect(server.asked.length).toBe(before);
    expect(await get("/to-other-loopback.json")).toMatchObject({
      ok: false,
      why: "refused: a private address (127.0.0.2)",
    });
    expect(await get("/to-localhost.json")).toMatchObject({ ok: false, why: "refused: a local host name (localhost)" });
    expect(await get("/loop.json")).toEqual({
      ok: false,
      url: `${server.url}/loop.json`,
      why: "more than 3 redirects",
    });
    expect(await get("/to-not-a-url.json")).toMatchObject({ why: "a redirect to what is not a URL (HTTP 302)" });
  });

  it("says why there is no body: a status, a size, a deadline, a connection, a cancelled call", async () => {
    expect(await get("/status-500.json")).toMatchObject({ ok: false, why: "HTTP 500" });
    expect(await get("/missing.json")).toMatchObject({ ok: false, why: "HTTP 404" });
    expect(await get("/huge-announced.json")).toMatchObject({ ok: false, why: expect.stringMatching(/65536 bytes/) });
    expect(await get("/huge-streamed.json")).toMatchObject({ ok: false, why: expect.stringMatching(/65536 bytes/) });
    expect(await get("/silent.json", { timeoutMs: 300 })).toMatchObject({ why: "no answer within 300 ms" });
    expect(await get("/slow.json", { timeoutMs: 300 })).toMatchObject({ why: "no answer within 300 ms" });
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await fetch(`http://127.0.0.1:${port}/x.json`, limits)).toMatchObject({
      ok: false,
      why: expect.stringContaining("ECONNREFUSED"),
    });
    const controller = new AbortController();
    const waiting = get("/silent.json", { signal: controller.signal, timeoutMs: 10_000 });
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toMatchObject({ ok: false, why: expect.any(String) });
  });

  it("asks for JSON and reads the media type without its parameters", async () => {
    let headers: IncomingHttpHeaders = {};
    const own: Server = createServer((req, res) => {
      headers = req.headers;
      res.writeHead(200, { "content-type": " Text/Plain ; charset=utf-8" }).end('{"name":"x"}');
    });
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    try {
      const got = await fetch(`http://127.0.0.1:${(own.address() as AddressInfo).port}/`, limits);
      expect(got).toMatchObject({ ok: true, contentType: "text/plain" });
      expect(headers.accept).toBe("application/json, text/plain;q=0.5");
    } finally {
      own.closeAllConnections();
      await new Promise<void>((resolve) => own.close(() => resolve()));
    }
  });
});
