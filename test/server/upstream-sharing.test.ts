/**
 * src/server/upstream-sharing.ts on its own, against a loopback HTTP server that counts what reaches it: NFTPort's
 * and OpenSea's pools wrapped once per app (one sharing layer for a pool they share), a repeat answered without the
 * upstream, a caller asking for a fresh answer reaching it, the totals summed over the layers; and which
 * `Cache-Control` values ask for a fresh answer.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Config } from "../../src/core/config.js";
import type { UpstreamPool } from "../../src/core/upstream-pool.js";
import { shareUpstreamReads, wantsFresh } from "../../src/server/upstream-sharing.js";
import { testConfig } from "../support/helpers.js";

const CACHE = { ttlMs: 60_000, maxEntries: 100, maxBytes: 1_000_000 };

let server: Server;
let base: string;
let hits = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    hits++;
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ path: req.url, hit: hits }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
);

const get = (pool: UpstreamPool, path: string) =>
  pool.exchange({ method: "GET", url: `${base}${path}`, timeoutMs: 5000 });

describe("shareUpstreamReads", () => {
  it("gives NFTPort and OpenSea one sharing layer over the pool they share; the rest of the config is kept", () => {
    const config = testConfig();
    expect(config.nftport.pool).toBe(config.opensea.pool);
    const sharing = shareUpstreamReads(config, CACHE);
    expect(sharing.config.nftport.pool).toBe(sharing.config.opensea.pool);
    expect(sharing.fresh.nftport.pool).toBe(sharing.fresh.opensea.pool);
    expect(sharing.config.nftport.pool).not.toBe(config.nftport.pool);
    expect(sharing.fresh.nftport.pool).not.toBe(sharing.config.nftport.pool);
    // Mail and chain calls are not shared.
    expect(sharing.config.pool).toBe(config.pool);
    expect(sharing.config.mailjet).toBe(config.mailjet);
    expect(sharing.fresh.env).toBe(config.env);
  });

  it("answers a repeat from the shared layer; a fresh caller reaches the upstream and refreshes it", async () => {
    const sharing = shareUpstreamReads(testConfig(), CACHE);
    const before = hits;
    const first = await get(sharing.config.nftport.pool!, "/a");
    const repeat = await get(sharing.config.opensea.pool!, "/a");
    expect(hits - before).toBe(1);
    expect(repeat.body).toBe(first.body);
    const fresh = await get(sharing.fresh.nftport.pool!, "/a");
    expect(hits - before).toBe(2);
    expect(fresh.body).not.toBe(first.body);
    // The fresh answer now answers the others.
    expect((await get(sharing.config.nftport.pool!, "/a")).body).toBe(fresh.body);
    expect(sharing.stats()).toMatchObject({ upstream: 2, cached: 2, joined: 0, entries: 1 });
  });

  it("wraps distinct pools apart and sums their totals", async () => {
    const config = testConfig();
    // OpenSea through the general pool, NFTPort through the paging one.
    expect(config.pool).not.toBe(config.nftport.pool);
    const split: Config = { ...config, opensea: { ...config.opensea, pool: config.pool } };
    const sharing = shareUpstreamReads(split, CACHE);
    expect(sharing.config.nftport.pool).not.toBe(sharing.config.opensea.pool);
    const before = hits;
    await get(sharing.config.nftport.pool!, "/b");
    await get(sharing.config.opensea.pool!, "/b");
    await get(sharing.config.opensea.pool!, "/b");
    expect(hits - before).toBe(2);
    const stats = sharing.stats();
    expect(stats).toMatchObject({ upstream: 2, cached: 1, entries: 2 });
    expect(stats.bytes).toBeGreaterThan(0);
  });

  it("with the cache off, a repeat after the answer goes upstream again", async () => {
    const sharing = shareUpstreamReads(testConfig(), { ...CACHE, ttlMs: 0 });
    const before = hits;
    await get(sharing.config.nftport.pool!, "/c");
    await get(sharing.config.nftport.pool!, "/c");
    expect(hits - before).toBe(2);
  });
});

describe("wantsFresh", () => {
  it.each([
    ["no-cache", true],
    ["No-Store", true],
    ["max-age=0", true],
    ['max-age = "0"', true],
    ["public, no-cache", true],
    [["max-age=60", "no-cache"], true],
    [`${"x".repeat(1025)}`, true],
    [undefined, false],
    ["", false],
    ["max-age=60", false],
    ["max-age=00", false],
    ["no-cache-please", false],
    ["private", false],
  ])("%j: %s", (header, fresh) => {
    expect(wantsFresh(header as string | string[] | undefined)).toBe(fresh);
  });
});
