/**
 * Where token details are kept between polls, for CHAINMAIL_ENRICH_CACHE_MS: the watch's store (store-cache.ts), or
 * memory (a dry run, a workflow host; here, so that a workflow bundle carries no database). Only answers are kept (a token's metadata, a contract's name, an address's ENS name or its
 * absence); a failure (a timeout, a node error) is not, so it is asked again next time.
 */

export interface EnrichmentCache {
  /** The fresh entries among `keys`. */
  get(keys: readonly string[]): Promise<Map<string, unknown>>;
  put(entries: ReadonlyMap<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

/** Entries kept in memory, at most `limit` (the oldest dropped first). */
export function memoryCache(ttlMs: number, limit = 10_000): EnrichmentCache {
  const entries = new Map<string, { value: unknown; at: number }>();
  return {
    async get(keys) {
      const out = new Map<string, unknown>();
      for (const key of keys) {
        const entry = entries.get(key);
        if (entry && Date.now() - entry.at < ttlMs) out.set(key, entry.value);
      }
      return out;
    },
    async put(given) {
      if (ttlMs <= 0) return;
      for (const [key, value] of given) {
        entries.delete(key);
        entries.set(key, { value, at: Date.now() });
      }
      for (const key of entries.keys()) {
        if (entries.size <= limit) break;
        entries.delete(key);
      }
    },
    async close() {},
  };
}
