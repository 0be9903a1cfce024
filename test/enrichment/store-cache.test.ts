/**
 * src/enrichment/store-cache.ts on its own, over real databases (SQLite files here; PostgreSQL under `npm run
 * test:services`, test/services/enrichment-store-cache.pg.test.ts): `openStoreCache` migrates the `enrichment` module
 * and keeps entries as exact JSON, shared by every cache on the same database and kept across openings; an entry past
 * its time is not given, a later put replaces one, a time to live of 0 keeps nothing, more keys than one statement
 * takes are all read. Time is Date's, faked here.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "../../src/db/database.js";
import type { EnrichmentCache } from "../../src/enrichment/cache.js";
import { openStoreCache } from "../../src/enrichment/store-cache.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";

let backend: IndexBackend;
const open: EnrichmentCache[] = [];

beforeAll(async () => {
  backend = await openBackend("store-cache");
});
afterAll(async () => {
  await Promise.all(open.map((cache) => cache.close()));
  await backend?.close();
});
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-01-01T00:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
});

async function cacheOn(target: string, ttlMs: number): Promise<EnrichmentCache> {
  const cache = await openStoreCache(target, ttlMs);
  open.push(cache);
  return cache;
}

const entries = (pairs: Record<string, unknown>) => new Map(Object.entries(pairs));

describe("openStoreCache", () => {
  it("migrates its table on opening, and keeps entries as exact JSON across caches on the same database", async () => {
    const target = await backend.target("kept");
    const writer = await cacheOn(target, 60_000);
    const big = 2n ** 70n + 1n;
    await writer.put(entries({ "meta:1": { name: "Cat", traits: [1, "two"], supply: big }, "ens:0xabc": null }));
    const reader = await cacheOn(target, 60_000);
    const got = await reader.get(["meta:1", "ens:0xabc", "missing"]);
    expect(got).toEqual(entries({ "meta:1": { name: "Cat", traits: [1, "two"], supply: big }, "ens:0xabc": null }));
    const db = await openDatabase(target);
    try {
      expect(await db.query("SELECT module, version FROM schema_migrations WHERE module = 'enrichment'")).toEqual([
        { module: "enrichment", version: 1 },
      ]);
      expect(await db.query("SELECT count(*) AS n FROM enrichment_cache")).toEqual([{ n: 2 }]);
    } finally {
      await db.close();
    }
  });

  it("gives no entry once its time is up (exactly ttl old, as memoryCache); a later put starts its time again", async () => {
    const cache = await cacheOn(await backend.target("ttl"), 1_000);
    await cache.put(entries({ a: 1, b: 2 }));
    vi.advanceTimersByTime(999);
    expect(await cache.get(["a", "b"])).toEqual(entries({ a: 1, b: 2 }));
    await cache.put(entries({ b: "two" }));
    vi.advanceTimersByTime(1);
    expect(await cache.get(["a", "b"])).toEqual(entries({ b: "two" }));
    vi.advanceTimersByTime(998);
    expect(await cache.get(["b"])).toEqual(entries({ b: "two" }));
    vi.advanceTimersByTime(1);
    expect((await cache.get(["a", "b"])).size).toBe(0);
  });

  it("reads every key asked, more than one statement takes", async () => {
    const cache = await cacheOn(await backend.target("many"), 60_000);
    const all = new Map(Array.from({ length: 1_234 }, (_, i) => [`k${i}`, i]));
    await cache.put(all);
    const asked = [...all.keys(), "absent"];
    expect(await cache.get(asked)).toEqual(all);
  });

  it("keeps nothing with a time to live of 0", async () => {
    const target = await backend.target("off");
    const cache = await cacheOn(target, 0);
    await cache.put(entries({ a: 1 }));
    expect((await cache.get(["a"])).size).toBe(0);
    const db = await openDatabase(target);
    try {
      expect(await db.query("SELECT count(*) AS n FROM enrichment_cache")).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });

  it("refuses a database it cannot open or migrate, as storage_error", async () => {
    const target = await backend.target("refused");
    const db = await openDatabase(target);
    // A table of the same name and another shape: its migration fails, and the cache is not opened.
    await db.exec("CREATE TABLE enrichment_cache (other INTEGER)");
    await db.close();
    await expect(openStoreCache(target, 1_000)).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
  });
});
