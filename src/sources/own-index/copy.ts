/**
 * Moves an index from one database to another (`chainmail index migrate --from <file> --to <postgres url>`, or
 * any other pair): every table in key order, a few thousand rows per transaction, the cursor last, so the copy is
 * usable only once complete. Both sides are held with the writer lock meanwhile (no indexer may write either), and
 * an interrupted copy can be run again: rows already copied are skipped.
 */
import { existsSync } from "node:fs";
import { ChainmailError } from "../../core/errors.js";
import { type Database, isPostgresUrl, type Row, type WriterLock } from "../../db/database.js";
import { type ActivityRow, IndexStore, type Position } from "./store.js";

export interface CopyIndexOptions {
  /** The index to read: an SQLite file or a postgres:// URL. */
  from: string;
  /** The database to fill (empty, or holding an interrupted copy). */
  to: string;
  /** Rows per transaction. Default 5000. */
  batch?: number;
  onProgress?: (p: { records: number; total: number }) => void;
}

export interface CopyIndexResult {
  /** Records now in the destination. */
  records: number;
  /** The destination's cursor: the last block fully indexed. */
  lastBlock: number | undefined;
}

/** Tables besides `activity`, with their key columns (copied in key order). */
const TABLES: { table: string; key: string[]; columns: string[] }[] = [
  { table: "tokens", key: ["address"], columns: ["address", "decimals"] },
  { table: "price_answers", key: ["block_number", "log_index"], columns: ["block_number", "log_index", "answer"] },
  { table: "blocks", key: ["number"], columns: ["number", "hash"] },
];

export async function copyIndex(options: CopyIndexOptions): Promise<CopyIndexResult> {
  const batch = options.batch ?? 5000;
  // Opening would create an empty file: a mistyped path must not "copy" nothing.
  if (!isPostgresUrl(options.from) && !existsSync(options.from)) {
    throw new ChainmailError("INVALID_INPUT", `There is no index file at ${options.from}.`, {
      details: { field: "from" },
    });
  }
  const source = await IndexStore.open(options.from);
  const locks: WriterLock[] = [];
  let target: IndexStore | undefined;
  try {
    target = await IndexStore.open(options.to);
    locks.push(await lockNow(source), await lockNow(target));
    if ((await source.lastBlock()) === undefined) {
      throw new ChainmailError("INVALID_INPUT", `${source.target} holds no index yet: nothing to migrate.`, {
        details: { field: "from" },
      });
    }
    const done = await target.lastBlock();
    if (done !== undefined) {
      throw new ChainmailError(
        "INVALID_INPUT",
        `${target.target} already holds an index (up to block ${done}): migrate into an empty database.`,
        { details: { field: "to" } },
      );
    }
    for (const { table, key, columns } of TABLES) {
      for await (const rows of scan(source.db, table, key, batch)) {
        await target.db.insertMany(table, columns, rows, "ignore");
      }
    }
    const total = await source.count();
    let after: Position | undefined;
    for (;;) {
      const rows: ActivityRow[] = await source.page({ direction: "asc", limit: batch, ...(after ? { after } : {}) });
      if (rows.length === 0) break;
      await target.insertRows(rows);
      const last = rows[rows.length - 1]!;
      after = { block: last.block_number, log: last.log_index, batch: last.batch_index };
      options.onProgress?.({ records: await target.count(), total });
    }
    const records = await target.count();
    if (records !== total) {
      throw new ChainmailError(
        "STORAGE_ERROR",
        `The copy in ${target.target} holds ${records} records, the source ${source.target} ${total}.`,
        { hint: "Was an indexer writing the source? Run the migration again." },
      );
    }
    // The cursor (last_block) goes last: a copy is an index only once everything is in.
    const meta = await source.db.query<{ key: string; value: string }>("SELECT key, value FROM meta ORDER BY key");
    const keep = target;
    await keep.db.transaction(async (tx) => {
      for (const { key, value } of meta) if (key !== "rows") await keep.setMeta(key, value, tx);
    });
    return { records, lastBlock: await target.lastBlock() };
  } finally {
    for (const lock of locks) await lock.release();
    await target?.close();
    await source.close();
  }
}

/** The writer lock, or a clear error when a `chainmail index` is writing this index right now. */
async function lockNow(store: IndexStore): Promise<WriterLock> {
  const busy = new AbortController();
  try {
    return await store.db.lockWriter("index", { signal: busy.signal, onWait: () => busy.abort() });
  } catch (err) {
    if (!busy.signal.aborted) throw err;
    throw new ChainmailError("STORAGE_ERROR", `A chainmail index is writing ${store.target}.`, {
      hint: "Stop it (Ctrl-C) before migrating, then start it again on the new database.",
    });
  }
}

/** Every row of a table in key order, `batch` at a time (keyset pages, never OFFSET). */
async function* scan(db: Database, table: string, key: string[], batch: number): AsyncGenerator<Row[]> {
  const order = key.join(", ");
  let last: unknown[] | undefined;
  for (;;) {
    const where = last ? `WHERE (${order}) > (${key.map((_, i) => `$${i + 1}`).join(", ")})` : "";
    const rows = await db.query(`SELECT * FROM ${table} ${where} ORDER BY ${order} LIMIT ${batch}`, last ?? []);
    if (rows.length === 0) return;
    yield rows;
    const end = rows[rows.length - 1]!;
    last = key.map((k) => end[k]);
  }
}
