/**
 * src/enrichment/metadata-fetch.ts on its own, against the loopback metadata server (test/support/enrichment-helpers.ts):
 * `guardedGet` resolves to the body, its media type and the URL it came from after redirects, or to why there is
 * none; it never throws, sends its own headers, opens a connection of its own for every request (a guarded socket
 * is never reused), stops when its signal fires, and counts its deadline across redirects. `guardedLookup` refuses
 * a host any of whose addresses is private unless allowed, and otherwise answers as the system's lookup does.
 * What the metadata reader makes of a body is test/enrichment/metadata.test.ts.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchLimits } from "../../src/enrichment/metadata.js";
import { guardedGet, guardedLookup } from "../../src/enrichment/metadata-fetch.js";
import { type MetadataServer, startMetadataServer, tokenDocument } from "../support/enrichment-helpers.js";

let server: MetadataServer;
const limits: FetchLimits = { timeoutMs: 2_000, maxBytes: 64 * 1024, allowPrivate: new Set(["127.0.0.1"]) };

beforeAll(async () => {
  server = await startMetadataServer();
});
afterAll(async () => {
  await server?.close();
});

const get = (path: string, more: Partial<FetchLimits> = {}) =>
  guardedGet(`${server.url}${path}`, { ...limits, ...more });

/** The system lookup through the guard, as a connection calls it. */
const lookUp = (host: string, allow: boolean | ReadonlySet<string>, all: boolean) =>
  new Promise<{ err: (Error & { code?: string }) | null; address: unknown; family?: number }>((resolve) =>
    guardedLookup(allow)(host, { all }, (err, address, family) => resolve({ err, address, family })),
  );

describe("guardedGet", () => {
  it("resolves to the body and its media type alone (lower case, without parameters)", async () => {
    const got = await get("/token/2a.json");
    expect(got).toMatchObject({ ok: true, url: `${server.url}/token/2a.json`, contentType: "application/json" });
    expect(got.ok && JSON.parse(got.body.toString("utf8"))).toEqual(tokenDocument("2a"));
  });

  it("follows a redirect and says which URL the body came from", async () => {
    const got = await get("/to-good.json");
    expect(got).toMatchObject({ ok: true, url: `${server.url}/token/7.json` });
  });

  it("says why there is no body, naming the URL it stopped at", async () => {
    expect(await get("/status-500.json")).toEqual({ ok: false, url: `${server.url}/status-500.json`, why: "HTTP 500" });
    expect(await get("/loop.json")).toEqual({
      ok: false,
      url: `${server.url}/loop.json`,
      why: "more than 3 redirects",
    });
    expect(await get("/to-not-a-url.json")).toEqual({
      ok: false,
      url: `${server.url}/to-not-a-url.json`,
      why: "a redirect to what is not a URL (HTTP 302)",
    });
    expect(await get("/to-metadata-service.json")).toMatchObject({
      ok: false,
      url: "http://169.254.169.254/latest/meta-data/",
      why: expect.stringMatching(/^refused: a private address/),
    });
    expect(await get("/huge-announced.json")).toMatchObject({ why: "larger than 65536 bytes (67108864)" });
    expect(await get("/huge-streamed.json")).toMatchObject({ why: "larger than 65536 bytes" });
    expect(await guardedGet("ftp://example.com/x.json", limits)).toMatchObject({
      ok: false,
      why: expect.stringMatching(/^refused: scheme/),
    });
  });

  it("never throws: a refused connection, a host that does not resolve", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await guardedGet(`http://127.0.0.1:${port}/x.json`, limits)).toMatchObject({
      ok: false,
      why: expect.stringContaining("ECONNREFUSED"),
    });
    expect(await guardedGet("http://no-such-host.invalid/x.json", limits)).toMatchObject({
      ok: false,
      why: expect.stringMatching(/ENOTFOUND|EAI_AGAIN/),
    });
  });

  it("counts its deadline across redirects, and stops at once when its signal fires", async () => {
    const started = performance.now();
    expect(await get("/silent.json", { timeoutMs: 300 })).toMatchObject({ why: "no answer within 300 ms" });
    expect(await get("/slow.json", { timeoutMs: 300 })).toMatchObject({ why: "no answer within 300 ms" });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(await get("/token/1.json", { signal: AbortSignal.abort() })).toMatchObject({ ok: false, why: "cancelled" });
    const controller = new AbortController();
    const waiting = get("/silent.json", { signal: controller.signal, timeoutMs: 10_000 });
    setTimeout(() => controller.abort(), 50);
    expect(await waiting).toMatchObject({ ok: false, why: "cancelled" });
  });

  it("opens a connection of its own for every request, redirects included", async () => {
    const before = server.connections();
    await get("/token/1.json");
    await get("/token/2.json");
    await get("/to-good.json");
    expect(server.connections() - before).toBe(4);
  });

  it("asks for JSON as chainmail", async () => {
    let headers: IncomingHttpHeaders = {};
    const own: Server = createServer((req, res) => {
      headers = req.headers;
      res.writeHead(200, { "content-type": "Application/JSON;Charset=UTF-8" }).end("{}");
    });
    await new Promise<void>((resolve) => own.listen(0, "127.0.0.1", resolve));
    try {
      const got = await guardedGet(`http://127.0.0.1:${(own.address() as AddressInfo).port}/`, limits);
      expect(got).toMatchObject({ ok: true, contentType: "application/json" });
      expect(headers).toMatchObject({ accept: "application/json, text/plain;q=0.5", "user-agent": "chainmail" });
    } finally {
      own.closeAllConnections();
      await new Promise<void>((resolve) => own.close(() => resolve()));
    }
  });
});

describe("guardedLookup", () => {
  it("refuses a name any of whose addresses is private, naming it, unless that address is allowed", async () => {
    const refused = await lookUp("localhost", false, true);
    expect(refused.err?.code).toBe("EPRIVATEADDRESS");
    expect(refused.err?.message).toMatch(/^localhost resolves to a private address \((127\.0\.0\.1|::1)\)$/);
    expect((await lookUp("localhost", true, true)).err).toBeNull();
  });

  it("answers as the system lookup: every address when asked for all, else the first with its family", async () => {
    const all = await lookUp("localhost", true, true);
    expect(Array.isArray(all.address)).toBe(true);
    const addresses = all.address as { address: string; family: number }[];
    expect(addresses.length).toBeGreaterThan(0);
    const one = await lookUp("localhost", true, false);
    expect(one.err).toBeNull();
    expect(one.address).toBe(addresses[0]!.address);
    expect(one.family).toBe(addresses[0]!.family);
    // A set allows exactly its addresses.
    const allowed = new Set(addresses.map((a) => a.address));
    expect((await lookUp("localhost", allowed, false)).err).toBeNull();
  });

  it("passes the system's own failure on", async () => {
    const missing = await lookUp("no-such-host.invalid", true, false);
    expect(missing.err?.code).toMatch(/ENOTFOUND|EAI_AGAIN/);
  });
});
