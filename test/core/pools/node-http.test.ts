import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config.js";
import { httpRequest, retryReads, retryUndelivered } from "../../../src/core/http.js";

let server: Server;
let url: string;
let connections = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ path: req.url, method: req.method }));
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const call = (path: string, body?: string, pool = loadConfig({}).pool) =>
  httpRequest({
    upstream: "Local",
    method: body === undefined ? "GET" : "POST",
    url: `${url}${path}`,
    headers: { accept: "application/json" },
    ...(body === undefined ? {} : { body }),
    timeoutMs: 5_000,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 },
    shouldRetry: retryReads,
    pool,
  });

describe("the connection pool without a proxy (node:http)", () => {
  it("answers through one kept-alive connection for calls one after another", async () => {
    const before = connections;
    for (let i = 0; i < 20; i++) {
      const result = await call(`/page?n=${i}`, i % 2 ? `{"n":${i}}` : undefined);
      expect(result.response?.status).toBe(200);
      expect(JSON.parse(result.response!.body)).toEqual({ path: `/page?n=${i}`, method: i % 2 ? "POST" : "GET" });
    }
    expect(connections - before).toBe(1);
  });

  it("opens at most as many connections as calls in flight", async () => {
    const before = connections;
    const results = await Promise.all(Array.from({ length: 4 }, (_, i) => call(`/a${i}`)));
    expect(results.map((r) => r.response?.status)).toEqual([200, 200, 200, 200]);
    expect(connections - before).toBeLessThanOrEqual(4);
  });
});

describe("the connection pool without a proxy: failures keep what core/http.ts tells apart", () => {
  const send = (target: string, signal?: AbortSignal) =>
    httpRequest({
      upstream: "Local",
      method: "POST",
      url: target,
      body: "{}",
      timeoutMs: 5_000,
      retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 },
      shouldRetry: retryUndelivered,
      pool: loadConfig({}).pool,
      signal,
    });

  it("an answer cut off midway is an error that says the request was sent, never a response", async () => {
    const cut = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"Messages":[');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    await new Promise<void>((resolve) => cut.listen(0, "127.0.0.1", resolve));
    try {
      const result = await send(`http://127.0.0.1:${(cut.address() as AddressInfo).port}/v3.1/send`);
      expect(result.response).toBeUndefined();
      expect(result.error?.details).toMatchObject({ request_sent: true, truncated: true, status: 200 });
    } finally {
      cut.close();
    }
  });

  it("a refused connection says nothing was sent (the only failure a send may retry)", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const result = await send(`http://127.0.0.1:${port}/v3.1/send`);
    expect(result.error?.details).toMatchObject({ network_code: "ECONNREFUSED", request_sent: false });
  });

  it("a call cancelled while waiting for its answer ends at once as aborted", async () => {
    const silent = createServer((req) => req.resume());
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const started = performance.now();
      const result = await send(
        `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v3.1/send`,
        controller.signal,
      );
      expect(result.error?.code).toBe("aborted");
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});

describe("NFTPort's pool without a proxy (undici's Agent, loaded on the first NFTPort call)", () => {
  it("answers calls one after another through kept-alive connections", async () => {
    const pool = loadConfig({}).nftport.pool;
    expect(pool).toBeDefined();
    const before = connections;
    for (let i = 0; i < 20; i++) {
      const result = await call(`/nft?n=${i}`, undefined, pool);
      expect(JSON.parse(result.response!.body)).toEqual({ path: `/nft?n=${i}`, method: "GET" });
    }
    // undici may open a second one for the call right after an answer, before the first connection counts as free.
    expect(connections - before).toBeLessThanOrEqual(2);
  });

  it("a process loads undici with its first NFTPort call, not before (mail and RPC calls never load it)", async () => {
    const dist = (file: string) =>
      pathToFileURL(join(import.meta.dirname, "..", "..", "..", "dist", "core", file)).href;
    const script = `
      import { createRequire } from "node:module";
      import { loadConfig } from "${dist("config.js")}";
      import { httpRequest, retryReads } from "${dist("http.js")}";
      const cache = createRequire(import.meta.url).cache;
      const undiciLoaded = () => Object.keys(cache).some((file) => file.includes("/node_modules/undici/"));
      const config = loadConfig({});
      const retry = { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 };
      const seen = [];
      for (let i = 0; i < 4; i++) {
        // Two calls through the plain pool (as Mailjet's and the RPC's), then two of NFTPort's.
        const pool = i < 2 ? config.pool : config.nftport.pool;
        const { response } = await httpRequest({ upstream: "Local", method: "GET", url: "${url}/n" + i, timeoutMs: 5000,
          retry, shouldRetry: retryReads, pool });
        seen.push([response.status, undiciLoaded()]);
      }
      console.log(JSON.stringify(seen));`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script]);
    expect(JSON.parse(stdout)).toEqual([
      [200, false],
      [200, false],
      [200, true],
      [200, true],
    ]);
  });

  it("behind a proxy NFTPort has no pool of its own: its calls take the proxy's", () => {
    const config = loadConfig({ HTTP_PROXY: "http://127.0.0.1:9" });
    expect(config.nftport.pool).toBeUndefined();
    expect(loadConfig({ HTTPS_PROXY: "http://127.0.0.1:9" }).nftport.pool).toBeUndefined();
  });
});
