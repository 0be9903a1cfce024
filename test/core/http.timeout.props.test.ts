/**
 * Property-based test of the shared HTTP client's deadline: whatever an upstream does with its time (no answer at
 * all, headers and then silence, part of a body and then a byte now and then, a length it never reaches, any
 * status), an attempt that is not done when its time is up ends as `upstream_timeout`, never as a broken
 * connection, and its message names what came. A real loopback server plays each case; through Node's own pool
 * and undici's Agent (what runs behind a proxy).
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases per pool (default 15: each waits out a 300 ms deadline, long enough
 * that headers sent at once arrive before it on a loaded machine).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import fc from "fast-check";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpRequest, retryReads } from "../../src/core/http.js";
import { dispatcherPool } from "../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../src/core/pools/node-http.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 15);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const TIMEOUT_MS = 300;

/** How one answer goes: each case is encoded in the request path, the server plays it. */
interface Slow {
  /** No status line at all, or the status at once. */
  headers: "never" | "at once";
  status: number;
  /** Bytes of the body sent at once. */
  first: number;
  /** Then one more byte every this many ms, or nothing more (0). */
  everyMs: number;
  /** Whether a content-length (larger than what ever comes) is announced, or the body is chunked. */
  announced: boolean;
}

const slow: fc.Arbitrary<Slow> = fc.record({
  headers: fc.constantFrom("never" as const, "at once" as const),
  status: fc.constantFrom(200, 201, 404, 429, 500, 503),
  first: fc.integer({ min: 0, max: 70_000 }),
  everyMs: fc.constantFrom(0, 10, 35, 80),
  announced: fc.boolean(),
});

let server: Server;
let base = "";
const open = new Set<ServerResponse>();
const dispatchers = {
  NodeHttpPool: new NodeHttpPool({ connections: 4 }),
  "undici Agent": new Agent(),
};

beforeAll(async () => {
  server = createServer((req, res) => {
    const c = JSON.parse(decodeURIComponent(req.url!.slice(1))) as Slow;
    open.add(res);
    res.on("close", () => open.delete(res));
    if (c.headers === "never") return;
    res.writeHead(c.status, {
      "content-type": "application/json",
      ...(c.announced ? { "content-length": String(c.first + 1_000_000) } : {}),
    });
    res.flushHeaders();
    if (c.first) res.write(Buffer.alloc(c.first, "x"));
    if (!c.everyMs) return;
    const timer = setInterval(() => res.write("x"), c.everyMs);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  for (const res of open) res.destroy();
  for (const dispatcher of Object.values(dispatchers)) await dispatcher.close();
  await new Promise((resolve) => server.close(resolve));
});

describe.each(Object.entries(dispatchers))("an attempt past its deadline, through %s", (_, dispatcher) => {
  it("is upstream_timeout whatever came before, naming the status and bytes that did", async () => {
    await fc.assert(
      fc.asyncProperty(slow, async (c) => {
        const result = await httpRequest({
          upstream: "Slowpoke",
          method: "GET",
          url: `${base}/${encodeURIComponent(JSON.stringify(c))}`,
          timeoutMs: TIMEOUT_MS,
          retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1 },
          shouldRetry: retryReads,
          pool: dispatcherPool(dispatcher),
        });
        expect(result.response).toBeUndefined();
        const payload = result.error!.toPayload();
        expect(payload.details.code).toBe("upstream_timeout");
        expect(payload.error).not.toMatch(/UNKNOWN|cut its answer off|broke/);
        if (c.headers === "never") {
          expect(payload.error).toBe(`Slowpoke did not answer within ${TIMEOUT_MS} ms. ${result.error!.hint}`);
        } else {
          expect(payload.details).toMatchObject({ status: c.status, timeout_ms: TIMEOUT_MS });
          expect(payload.details.received_bytes).toBeGreaterThanOrEqual(0);
          expect(payload.error).toContain(`within ${TIMEOUT_MS} ms (HTTP ${c.status}, `);
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
