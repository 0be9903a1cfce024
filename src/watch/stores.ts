/** Opens the watch store a location names: a PostgreSQL URL, else an SQLite file (the index's by default). */
import { openSqliteWatchStore } from "./sqlite-store.js";
import type { WatchStore } from "./store.js";

export async function openWatchStore(where: string): Promise<WatchStore> {
  return openSqliteWatchStore(where);
}
