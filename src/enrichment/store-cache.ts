/**
 * Token details kept in the watch's store: the `enrichment` module's table (migrations/enrichment/) on the same
 * SQLite file or PostgreSQL database as the journal, its own connection.
 */
import { parseJson, stringifyJson } from "../core/json.js";
import { type Database, openDatabase } from "../db/database.js";
import type { EnrichmentCache } from "./cache.js";

/** `$n, $n+1, …` for `count` parameters from `first`. */
const list = (first: number, count: number) => Array.from({ length: count }, (_, i) => `$${first + i}`).join(", ");

/** The cache on a store's database (an SQLite file or a `postgres://` URL), migrated on opening. */
export async function openStoreCache(target: string, ttlMs: number): Promise<EnrichmentCache> {
  const db: Database = await openDatabase(target);
  try {
    await db.migrate("enrichment");
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    async get(keys) {
      // Fresh while younger than the time to live, as in memoryCache: an entry exactly ttlMs old is expired.
      const out = new Map<string, unknown>();
      if (ttlMs <= 0) return out;
      for (let i = 0; i < keys.length; i += 500) {
        const slice = keys.slice(i, i + 500);
        const rows = await db.query<{ key: string; value: string }>(
          `SELECT key, value FROM enrichment_cache WHERE stored_at > $1 AND key IN (${list(2, slice.length)})`,
          [Date.now() - ttlMs, ...slice],
        );
        for (const row of rows) out.set(row.key, parseJson(row.value));
      }
      return out;
    },
    async put(entries) {
      if (ttlMs <= 0 || entries.size === 0) return;
      const now = Date.now();
      await db.insertMany(
        "enrichment_cache",
        ["key", "value", "stored_at"],
        [...entries].map(([key, value]) => ({ key, value: stringifyJson(value), stored_at: now })),
        { key: ["key"], update: ["value", "stored_at"] },
      );
      // Entries long past their time are of no use: dropped now and then, so the table stays small.
      if (Math.random() < 0.05) await db.run("DELETE FROM enrichment_cache WHERE stored_at <= $1", [now - ttlMs]);
    },
    close: () => db.close(),
  };
}
