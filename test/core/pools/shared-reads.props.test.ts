/**
 * Shared upstream reads (src/core/pools/shared-reads.ts) over any sequence of reads, some at once, some asking for a
 * fresh answer, with the clock moving between them, against a real local upstream on loopback through the real
 * paging pool: every answer is the one for its own key and page (never another credential's), none is older than
 * the TTL, the cache stays within its bounds, and no read goes upstream more often than it was asked.
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 60).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { sharedReads } from "../../../src/core/pools/shared-reads.js";
import { testConfig } from "../../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 60);
const SEED = Number(process.env.PROPS_SEED ?? 36);
const TTL_MS = 1_000;
const KEYS = ["key-a", "key-b"];
const PAGES = ["first", "second"];

/** The test's clock: both the cache and the upstream read it, so "served at" and "now" are on one scale. */
let clock = 0;
let served = 0;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    served++;
    const body = JSON.stringify({ key: req.headers["x-api-key"], path: req.url, served_at: clock, n: served });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const ask = fc.record({
  kind: fc.constant("ask" as const),
  key: fc.constantFrom(...KEYS),
  page: fc.constantFrom(...PAGES),
  fresh: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  together: fc.integer({ min: 1, max: 3 }),
});
const advance = fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: (3 * TTL_MS) / 2 }) });
const steps = fc.array(fc.oneof({ arbitrary: ask, weight: 4 }, { arbitrary: advance, weight: 2 }), {
  minLength: 8,
  maxLength: 40,
});

it("never answers across keys, never older than the TTL, within its bounds", async () => {
  const inner = testConfig().nftport.pool!;
  await fc.assert(
    fc.asyncProperty(steps, fc.integer({ min: 1, max: 4 }), async (sequence, maxEntries) => {
      clock = 0;
      const maxBytes = 2_000;
      const shared = sharedReads(inner, { ttlMs: TTL_MS, maxEntries, maxBytes, now: () => clock });
      const servedBefore = served;
      let asked = 0;
      for (const step of sequence) {
        if (step.kind === "advance") {
          clock += step.ms;
          continue;
        }
        const pool = step.fresh ? shared.fresh : shared.pool;
        const request = {
          method: "GET" as const,
          url: `${url}/page/${step.page}`,
          headers: { "x-api-key": step.key },
          timeoutMs: 5_000,
        };
        asked += step.together;
        const answers = await Promise.all(Array.from({ length: step.together }, () => pool.exchange(request)));
        for (const answer of answers) {
          const body = JSON.parse(answer.body);
          expect(body.key).toBe(step.key);
          expect(body.path).toBe(`/page/${step.page}`);
          expect(clock - body.served_at).toBeLessThan(TTL_MS);
        }
        const stats = shared.stats();
        expect(stats.entries).toBeLessThanOrEqual(maxEntries);
        expect(stats.bytes).toBeLessThanOrEqual(maxBytes);
      }
      expect(served - servedBefore).toBeLessThanOrEqual(asked);
      expect(shared.stats().upstream).toBe(served - servedBefore);
    }),
    { numRuns: RUNS, seed: SEED },
  );
});
