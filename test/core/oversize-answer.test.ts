/**
 * An answer over `maxBodyBytes` is cut off cleanly by both engines: the call rejects with `AnswerTooLarge` (the
 * JSON-RPC client's `RpcAnswerTooLarge`), nothing is left to throw later (an `error` with no listener on the cut
 * connection would kill the process), and the connection is closed rather than handed to the next call. A real
 * loopback server answers with a content-length or chunked, in one write (the whole answer in one read, where
 * Node's client has already parsed it to the end when the cut comes) or in many small ones.
 */
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import fc from "fast-check";
import { Agent } from "undici";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RpcAnswerTooLarge, RpcClient } from "../../src/chain/rpc.js";
import { AnswerTooLarge } from "../../src/core/http.js";
import { dispatcherPool } from "../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../src/core/pools/node-http.js";
import type { UpstreamPool } from "../../src/core/upstream-pool.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 25);
const SEED = Number(process.env.PROPS_SEED ?? 20261128);

let server: Server;
let base = "";
/** The connection each request came on, by request number (a connection's number is its order of arrival). */
const connectionOf: number[] = [];
const connectionNumbers = new WeakMap<Socket, number>();
let connectionsSeen = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    connectionOf.push(connectionNumbers.get(req.socket) ?? -1);
    const query = new URL(req.url!, "http://x").searchParams;
    const body = Buffer.alloc(Number(query.get("size")), "x");
    // 0: the whole body in one write; else pieces of this many bytes, a few ms apart.
    const piece = Number(query.get("piece") ?? 0);
    if (query.get("style") === "chunked") res.writeHead(200, { "transfer-encoding": "chunked" });
    else res.writeHead(200, { "content-length": body.length });
    if (piece === 0) return void res.end(body);
    let at = 0;
    const next = () => {
      if (res.destroyed) return;
      if (at >= body.length) return void res.end();
      res.write(body.subarray(at, at + piece));
      at += piece;
      setTimeout(next, 2);
    };
    next();
  });
  server.on("connection", (socket) => connectionNumbers.set(socket, connectionsSeen++));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

const engines = { NodeHttpPool: new NodeHttpPool({ connections: 4 }), "undici Agent": new Agent() };

afterAll(async () => {
  for (const engine of Object.values(engines)) await engine.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

// Whatever escapes a call (an `error` event nobody listens to) is caught here and fails the test that caused it.
let escaped: unknown[] = [];
const onEscaped = (error: unknown) => escaped.push(error);
beforeEach(() => {
  escaped = [];
  process.on("uncaughtException", onEscaped);
});
afterEach(async () => {
  // A destroyed socket reports its error a tick or two later; give it time to.
  await new Promise((resolve) => setTimeout(resolve, 100));
  process.off("uncaughtException", onEscaped);
  expect(escaped).toEqual([]);
});

const get = (pool: UpstreamPool, query: string, maxBodyBytes: number) =>
  pool.exchange({ method: "GET", url: `${base}/?${query}`, timeoutMs: 5_000, maxBodyBytes });

describe.each(Object.entries(engines))("an answer over maxBodyBytes through %s", (_, engine) => {
  const pool = dispatcherPool(engine);
  const shapes = [
    { style: "chunked", piece: 0 },
    { style: "chunked", piece: 250 },
    { style: "length", piece: 0 },
    { style: "length", piece: 250 },
  ];

  for (const { style, piece } of shapes) {
    const shape = `${style}, ${piece ? `in ${piece}-byte writes` : "in one write"}`;
    it(`rejects as AnswerTooLarge, throws nothing later, and never reuses the cut connection (${shape})`, async () => {
      // A kept-alive connection first, so that the oversize call would be given it back if it were still free.
      expect((await get(pool, `size=10&style=${style}`, 1_000)).body).toHaveLength(10);
      const warm = connectionOf.at(-1);
      // undici counts a connection free only a moment after its answer (else it opens another).
      await new Promise((resolve) => setTimeout(resolve, 10));
      const error = await get(pool, `size=2000&style=${style}&piece=${piece}`, 1_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AnswerTooLarge);
      expect(error).toMatchObject({ limit: 1_000, bytes: style === "length" ? 2_000 : undefined });
      const cut = connectionOf.at(-1);
      expect(cut).toBe(warm); // keep-alive at work: the check below means something

      const after = await get(pool, `size=500&style=${style}&piece=${piece}`, 1_000);
      expect(after.body).toBe("x".repeat(500));
      expect(connectionOf.at(-1)).not.toBe(cut);
    });
  }

  it("whatever the size, limit and writes: within the limit whole, over it AnswerTooLarge, then the next call answers", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40_000 }),
        fc.integer({ min: 1, max: 40_000 }),
        fc.constantFrom("chunked", "length"),
        fc.constantFrom(0, 0, 1_000, 16_384),
        async (size, limit, style, piece) => {
          const result = await get(pool, `size=${size}&style=${style}&piece=${piece}`, limit).catch((e: unknown) => e);
          if (size > limit) expect(result).toBeInstanceOf(AnswerTooLarge);
          else expect(result).toMatchObject({ status: 200, body: "x".repeat(size) });
          expect((await get(pool, "size=3&style=chunked", 10)).body).toBe("xxx");
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  }, 30_000);
});

describe("the JSON-RPC client over Node's pool", () => {
  it("throws a chunked answer over maxAnswerBytes, arrived in one read, as RpcAnswerTooLarge and nothing later", async () => {
    const rpc = new RpcClient(`${base}/?size=2000&style=chunked`, {
      pool: dispatcherPool(engines.NodeHttpPool),
      timeoutMs: 2_000,
      retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, budgetMs: 5_000 },
    });
    const error = await rpc.callSlices("eth_getLogs", [{}], { maxAnswerBytes: 1_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcAnswerTooLarge);
    expect(error).toMatchObject({ limit: 1_000 });
  });
});
