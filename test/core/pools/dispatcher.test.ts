/**
 * src/core/pools/dispatcher.ts on its own: `dispatcherPool` over both engines it runs on (undici's Agent and
 * node-http.ts's pool), against a loopback server. An exchange resolves to the whole answer of any status, the body
 * gathered exactly (an announced length filled in place, characters split across chunks, a body never announced),
 * and settles once: `AttemptTimeout` at its deadline before or during the answer (with what had come by then),
 * `CutOffAnswer` when the connection breaks midway, the connection's own error before any answer, a rejection when
 * the caller's signal fires (an exchange aborted before it starts never reaches the server). `wait` waits or rejects
 * on its signal. Body limits are test/core/oversize-answer.test.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatcherPool } from "../../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../../src/core/pools/node-http.js";
import { AttemptTimeout, CutOffAnswer, type Exchange } from "../../../src/core/upstream-pool.js";

/** 200 000 bytes of text whose two-byte characters fall across any chunk boundary. */
const LARGE = "é".repeat(60_000) + "x".repeat(80_000);
const seen: string[] = [];

function answer(req: IncomingMessage, res: ServerResponse, body: string): void {
  const path = req.url ?? "/";
  seen.push(`${req.method} ${path}`);
  if (path === "/echo") {
    res.writeHead(201, { "content-type": "application/json", "x-Custom": "Yes", "set-cookie": ["a=1", "b=2"] });
    res.end(JSON.stringify({ method: req.method, body, header: req.headers["x-test"] }));
  } else if (path === "/missing") {
    res.writeHead(404, { "content-type": "text/plain" }).end("no such thing");
  } else if (path === "/large") {
    // Announced, written in pieces of an odd size.
    const bytes = Buffer.from(LARGE, "utf8");
    res.writeHead(200, { "content-length": bytes.length });
    for (let at = 0; at < bytes.length; at += 4_099) res.write(bytes.subarray(at, at + 4_099));
    res.end();
  } else if (path === "/chunked") {
    res.writeHead(200, { "transfer-encoding": "chunked" });
    const bytes = Buffer.from(LARGE, "utf8");
    for (let at = 0; at < bytes.length; at += 1_001) res.write(bytes.subarray(at, at + 1_001));
    res.end();
  } else if (path === "/silent") {
    // Never answers.
  } else if (path === "/stall") {
    res.writeHead(200, { "content-length": 1_000 });
    res.write("x".repeat(300));
  } else if (path === "/cut") {
    res.writeHead(200, { "content-length": 1_000 });
    res.write("x".repeat(300), () => setTimeout(() => req.socket.destroy(), 20));
  } else {
    res.writeHead(500).end();
  }
}

let server: Server;
let base: string;
const engines = { "undici Agent": new Agent({ connections: 4 }), NodeHttpPool: new NodeHttpPool({ connections: 4 }) };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => answer(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const engine of Object.values(engines)) await engine.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as Error & { code?: string },
  );

describe.each(Object.entries(engines))("dispatcherPool over %s", (_, engine) => {
  const pool = dispatcherPool(engine);
  const exchange = (path: string, more: Partial<Exchange> = {}) =>
    pool.exchange({ method: "GET", url: `${base}${path}`, timeoutMs: 5_000, ...more });

  it("resolves to the whole answer of any status: its body, its headers in lower case", async () => {
    const posted = await exchange("/echo", {
      method: "POST",
      body: '{"n":"ü"}',
      headers: { "content-type": "application/json", "x-test": "sent" },
    });
    expect(posted.status).toBe(201);
    expect(JSON.parse(posted.body)).toEqual({ method: "POST", body: '{"n":"ü"}', header: "sent" });
    expect(posted.headers["x-custom"]).toBe("Yes");
    expect(posted.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    const missing = await exchange("/missing");
    expect([missing.status, missing.body]).toEqual([404, "no such thing"]);
  });

  it("gathers a large body exactly, announced or not, whatever the pieces it comes in", async () => {
    for (const path of ["/large", "/chunked", "/large"]) {
      const got = await exchange(path);
      expect(got.status).toBe(200);
      expect(got.body.length).toBe(LARGE.length);
      expect(got.body === LARGE).toBe(true);
    }
  });

  it("times out before the answer begins: AttemptTimeout with status 0", async () => {
    const err = await failure(exchange("/silent", { timeoutMs: 150 }));
    expect(err).toBeInstanceOf(AttemptTimeout);
    expect((err as AttemptTimeout).status).toBe(0);
    expect((err as AttemptTimeout).received).toBe(0);
  });

  it("times out while the body comes in: AttemptTimeout with the status and the bytes received, not a cut-off", async () => {
    const err = await failure(exchange("/stall", { timeoutMs: 300 }));
    expect(err).toBeInstanceOf(AttemptTimeout);
    expect((err as AttemptTimeout).status).toBe(200);
    expect((err as AttemptTimeout).received).toBe(300);
  });

  it("rejects an answer broken off midway as CutOffAnswer, with the connection's error as its cause", async () => {
    const err = await failure(exchange("/cut"));
    expect(err).toBeInstanceOf(CutOffAnswer);
    expect((err as CutOffAnswer).status).toBe(200);
    expect((err as CutOffAnswer).cause).toBeInstanceOf(Error);
  });

  it("rejects a refused connection with its own error, carrying its code", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const err = await failure(pool.exchange({ method: "GET", url: `http://127.0.0.1:${port}/`, timeoutMs: 5_000 }));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(CutOffAnswer);
    expect(err).not.toBeInstanceOf(AttemptTimeout);
    expect(err?.code ?? (err?.cause as { code?: string } | undefined)?.code).toBe("ECONNREFUSED");
  });

  it("never sends an exchange whose signal has already fired, and ends one at once when it fires", async () => {
    const before = seen.length;
    const err = await failure(exchange("/echo?never", { signal: AbortSignal.abort() }));
    expect(err).toBeInstanceOf(Error);
    expect(err?.message).toBe("aborted");
    const controller = new AbortController();
    const waiting = failure(exchange("/silent", { signal: controller.signal, timeoutMs: 10_000 }));
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expect((await waiting)?.message).toBe("aborted");
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(seen.slice(before)).not.toContain("GET /echo?never");
  });

  it("waits the time asked, or until its signal fires", async () => {
    await expect(pool.wait(0)).resolves.toBeUndefined();
    await expect(pool.wait(5)).resolves.toBeUndefined();
    const controller = new AbortController();
    const waiting = pool.wait(60_000, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    await expect(pool.wait(0, AbortSignal.abort())).rejects.toThrow(/abort/i);
  });
});
