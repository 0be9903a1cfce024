/**
 * src/enrichment/cache.ts on its own: `memoryCache` gives the fresh entries among the keys asked (none past their
 * time, none never put), a later put replaces an entry and makes it the newest, at most `limit` entries are kept
 * (the oldest dropped first), and a time to live of 0 keeps nothing. Time is Date's, faked here.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { memoryCache } from "../../src/enrichment/cache.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"], now: new Date("2026-01-01T00:00:00Z") });
});
afterEach(() => {
  vi.useRealTimers();
});

const entries = (pairs: Record<string, unknown>) => new Map(Object.entries(pairs));

describe("memoryCache", () => {
  it("gives the fresh entries among the keys asked, values as they were put", async () => {
    const cache = memoryCache(1_000);
    const metadata = { name: "Cat #1", image: undefined };
    await cache.put(entries({ "meta:1": metadata, "ens:0xabc": null, "name:0xdef": "Cats" }));
    const got = await cache.get(["meta:1", "ens:0xabc", "missing"]);
    expect([...got.keys()]).toEqual(["meta:1", "ens:0xabc"]);
    expect(got.get("meta:1")).toBe(metadata);
    // An answer of "none" (null) is an answer, kept like any other.
    expect(got.has("ens:0xabc")).toBe(true);
    expect(got.get("ens:0xabc")).toBeNull();
    expect((await cache.get([])).size).toBe(0);
  });

  it("drops an entry from view once its time is up, and a later put starts its time again", async () => {
    const cache = memoryCache(1_000);
    await cache.put(entries({ a: 1, b: 2 }));
    vi.advanceTimersByTime(999);
    expect([...(await cache.get(["a", "b"])).keys()]).toEqual(["a", "b"]);
    await cache.put(entries({ b: 3 }));
    vi.advanceTimersByTime(1);
    expect(await cache.get(["a", "b"])).toEqual(entries({ b: 3 }));
    vi.advanceTimersByTime(998);
    expect(await cache.get(["b"])).toEqual(entries({ b: 3 }));
    vi.advanceTimersByTime(1);
    expect((await cache.get(["a", "b"])).size).toBe(0);
  });

  it("keeps at most `limit` entries, dropping the least recently put", async () => {
    const cache = memoryCache(60_000, 3);
    await cache.put(entries({ a: 1, b: 2, c: 3 }));
    await cache.put(entries({ a: 10 })); // a is now the newest
    await cache.put(entries({ d: 4 }));
    expect(await cache.get(["a", "b", "c", "d"])).toEqual(entries({ a: 10, c: 3, d: 4 }));
    await cache.put(entries({ e: 5, f: 6, g: 7, h: 8 }));
    expect(await cache.get(["a", "c", "d", "e", "f", "g", "h"])).toEqual(entries({ f: 6, g: 7, h: 8 }));
  });

  it("keeps nothing with a time to live of 0 (CHAINMAIL_ENRICH_CACHE_MS=0), and closes", async () => {
    const cache = memoryCache(0);
    await cache.put(entries({ a: 1 }));
    expect((await cache.get(["a"])).size).toBe(0);
    await expect(cache.close()).resolves.toBeUndefined();
  });
});
