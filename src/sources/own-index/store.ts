/**
 * The index store: NFT activity in an SQLite file or a PostgreSQL database (`src/db`), which `chainmail index`
 * writes and any number of services read at the same time. Records are append-only and keyed by their chain
 * position (block, log index, batch index), so a re-run inserts nothing twice and a reorg rollback is one range
 * delete. The schema lives in `migrations/index/<engine>/`.
 */
import { existsSync } from "node:fs";
import { ChainmailError } from "../../core/errors.js";
import { type Database, displayTarget, isPostgresUrl, openDatabase, type Row, type Sql } from "../../db/database.js";
import { appliedVersion, isMissingTable } from "../../db/migrate.js";
import { announceCommit, COMMITS_CHANNEL } from "./commits.js";
import { ACTIVITY_COLUMNS, type ActivityRow, activityRow } from "./record.js";

export type { ActivityRow } from "./record.js";

/** A position in chain order: the keyset key of every query. */
export interface Position {
  block: number;
  log: number;
  batch: number;
}

export interface PageQuery {
  contract?: string;
  tokenId?: string;
  /** Only these kinds; all when undefined. */
  kinds?: readonly string[];
  fromBlock?: number;
  toBlock?: number;
  direction: "asc" | "desc";
  /** The last position of the previous page. */
  after?: Position;
  limit: number;
}

export interface Checkpoint {
  number: number;
  hash: string;
}

export interface IndexStatus {
  /** The last block fully indexed; null before the first range. */
  lastBlock: number | null;
  /** The chain head the indexer last saw, and when (ms since epoch). */
  headBlock: number | null;
  headSeenAt: number | null;
  records: number;
}

export interface PriceAnswer {
  block: number;
  log: number;
  answer: bigint;
}

/** One ingested block range, written atomically with the cursor. */
export interface RangeWrite {
  records: ActivityRow[];
  blocks: Checkpoint[];
  answers: PriceAnswer[];
  lastBlock: number;
}

/** The columns a page selects, in `ACTIVITY_COLUMNS` order: `activityRow` reads each row's values by position. */
const SELECTED = ACTIVITY_COLUMNS.join(", ");

export class IndexStore {
  private constructor(readonly db: Database) {}

  /** Opens (creating or migrating when needed) the index at a file path or a `postgres://` URL. */
  static async open(target: string): Promise<IndexStore> {
    const db = await openDatabase(target);
    try {
      await db.migrate("index");
    } catch (err) {
      await db.close();
      throw err;
    }
    return new IndexStore(db);
  }

  /**
   * Opens an index that `chainmail index` built, to read it: nothing is created, and a database that holds no
   * index is left as it is (throws `storage_error` with `details.index: "missing"`, saying how to build it). An
   * index an older chainmail wrote is brought up to date, as its writer would.
   */
  static async openForReading(target: string): Promise<IndexStore> {
    if (!isPostgresUrl(target) && !existsSync(target)) throw noIndex(target);
    const db = await openDatabase(target, { create: false });
    try {
      if (!(await holdsIndex(db))) {
        const [where] =
          db.engine === "postgres"
            ? await db.query<{ schema: string | null }>("SELECT current_schema() AS schema")
            : [];
        throw noIndex(target, where?.schema);
      }
      await db.migrate("index");
    } catch (err) {
      await db.close();
      throw err;
    }
    return new IndexStore(db);
  }

  /** The file path or the URL without its password. */
  get target(): string {
    return this.db.target;
  }

  close(): Promise<void> {
    return this.db.close();
  }

  async getMeta(key: string, sql: Sql = this.db): Promise<string | undefined> {
    const [row] = await sql.query<{ value: string }>("SELECT value FROM meta WHERE key = $1", [key]);
    return row?.value;
  }

  async setMeta(key: string, value: string, sql: Sql = this.db): Promise<void> {
    await sql.run(
      "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [key, value],
    );
  }

  /** The last block whose records are all in the index, if any. */
  async lastBlock(): Promise<number | undefined> {
    const value = await this.getMeta("last_block");
    return value === undefined ? undefined : Number(value);
  }

  /**
   * Writes one ingested range atomically: its records, block hashes, price answers and the new cursor. Readers
   * waiting on the index's commits (commits.ts) are told once it is committed.
   */
  async commitRange(range: RangeWrite): Promise<number> {
    const inserted = await this.db.transaction(async (tx) => {
      await tx.insertMany(
        "price_answers",
        ["block_number", "log_index", "answer"],
        range.answers.map((a) => ({ block_number: a.block, log_index: a.log, answer: a.answer.toString() })),
        "ignore",
      );
      const inserted = await this.insert(tx, range.records);
      await tx.insertMany("blocks", ["number", "hash"], range.blocks as unknown as Row[], {
        key: ["number"],
        update: ["hash"],
      });
      await this.setMeta("last_block", String(range.lastBlock), tx);
      await this.notifyCommit(tx, range.lastBlock);
      return inserted;
    });
    announceCommit(this.db.target, range.lastBlock);
    return inserted;
  }

  /** PostgreSQL readers in other processes are notified when the transaction commits (commits.ts). */
  private async notifyCommit(tx: Sql, lastBlock: number): Promise<void> {
    if (this.db.engine !== "postgres") return;
    await tx.query("SELECT pg_notify($1, current_schema() || ':' || $2)", [COMMITS_CHANNEL, String(lastBlock)]);
  }

  /** Inserts records as they are (benchmarks, fixtures, moving an index); resolves to the number inserted. */
  insertRows(rows: ActivityRow[]): Promise<number> {
    return this.db.transaction((tx) => this.insert(tx, rows));
  }

  /** Inserts records that are not there yet and keeps the row count in step. */
  private async insert(tx: Sql, rows: ActivityRow[]): Promise<number> {
    const inserted = await tx.insertMany("activity", ACTIVITY_COLUMNS, rows as unknown as Row[], "ignore");
    if (inserted) await this.addRows(tx, inserted);
    return inserted;
  }

  private async addRows(tx: Sql, delta: number): Promise<void> {
    await tx.run("UPDATE meta SET value = CAST(CAST(value AS BIGINT) + $1 AS TEXT) WHERE key = 'rows'", [delta]);
  }

  /** Stored block hashes at or below `below`, newest first. */
  checkpoints(below: number, limit: number): Promise<Checkpoint[]> {
    return this.db.query<Checkpoint>(
      "SELECT number, hash FROM blocks WHERE number <= $1 ORDER BY number DESC LIMIT $2",
      [below, limit],
    );
  }

  /** Forgets everything above `block` (a reorg dropped those blocks); resolves to the number of records removed. */
  async rollbackTo(block: number): Promise<number> {
    const removed = await this.db.transaction(async (tx) => {
      const removed = await tx.run("DELETE FROM activity WHERE block_number > $1", [block]);
      await tx.run("DELETE FROM blocks WHERE number > $1", [block]);
      await tx.run("DELETE FROM price_answers WHERE block_number > $1", [block]);
      if (removed) await this.addRows(tx, -removed);
      await this.setMeta("last_block", String(block), tx);
      await this.notifyCommit(tx, block);
      return removed;
    });
    announceCommit(this.db.target, block);
    return removed;
  }

  /** The latest ETH/USD answer at or before a chain position. */
  async answerAt(block: number, log: number): Promise<bigint | undefined> {
    const [row] = await this.db.query<{ answer: string }>(
      `SELECT answer FROM price_answers WHERE (block_number, log_index) <= ($1, $2)
       ORDER BY block_number DESC, log_index DESC LIMIT 1`,
      [block, log],
    );
    return row ? BigInt(row.answer) : undefined;
  }

  async tokenDecimals(address: string): Promise<number | undefined> {
    const [row] = await this.db.query<{ decimals: number }>("SELECT decimals FROM tokens WHERE address = $1", [
      address,
    ]);
    return row?.decimals;
  }

  async setTokenDecimals(address: string, decimals: number): Promise<void> {
    await this.db.run(
      "INSERT INTO tokens (address, decimals) VALUES ($1, $2) ON CONFLICT (address) DO UPDATE SET decimals = excluded.decimals",
      [address, decimals],
    );
  }

  /**
   * One keyset page in chain order: by contract / by token newest first, the whole chain oldest first. The
   * cursor's block also tightens the range bound, which lets SQLite seek instead of scanning (PostgreSQL reads
   * the row-value comparison off the matching btree by itself).
   */
  async page(query: PageQuery): Promise<ActivityRow[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const param = (value: unknown) => {
      args.push(value);
      return `$${args.length}`;
    };
    const sqlite = this.db.engine === "sqlite";
    if (query.contract !== undefined) where.push(`contract = ${param(query.contract)}`);
    if (query.tokenId !== undefined) where.push(`token_id = ${param(query.tokenId)}`);
    if (query.kinds) {
      where.push(
        sqlite ? `kind IN (${query.kinds.map((kind) => param(kind)).join(", ")})` : `kind = ANY(${param(query.kinds)})`,
      );
    }
    const ascending = query.direction === "asc";
    let low = query.fromBlock;
    let high = query.toBlock;
    if (query.after) {
      const { block, log, batch } = query.after;
      where.push(
        `(block_number, log_index, batch_index) ${ascending ? ">" : "<"} (${param(block)}, ${param(log)}, ${param(batch)})`,
      );
      if (ascending) low = Math.max(low ?? 0, block);
      else high = Math.min(high ?? block, block);
    }
    if (low !== undefined) where.push(`block_number >= ${param(low)}`);
    if (high !== undefined) where.push(`block_number <= ${param(high)}`);
    const dir = ascending ? "ASC" : "DESC";
    // With a block bound SQLite may prefer the contract index for a token query and scan the whole contract.
    const index = !sqlite
      ? ""
      : query.tokenId !== undefined
        ? "INDEXED BY activity_by_token"
        : query.contract !== undefined
          ? "INDEXED BY activity_by_contract"
          : "";
    const sql = `SELECT ${SELECTED} FROM activity ${index} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY block_number ${dir}, log_index ${dir}, batch_index ${dir} LIMIT ${param(query.limit)}`;
    return (await this.db.queryValues(sql, args)).map(activityRow);
  }

  /** Where the index stands: its cursor, the chain head its writer last saw, and its size. */
  async status(): Promise<IndexStatus> {
    const rows = await this.db.query<{ key: string; value: string }>(
      "SELECT key, value FROM meta WHERE key IN ('last_block', 'head_block', 'head_seen_at', 'rows')",
    );
    const meta = new Map(rows.map((r) => [r.key, r.value]));
    const number = (key: string) => (meta.has(key) ? Number(meta.get(key)) : null);
    return {
      lastBlock: number("last_block"),
      headBlock: number("head_block"),
      headSeenAt: number("head_seen_at"),
      records: number("rows") ?? 0,
    };
  }

  /** Notes the chain head the writer saw (for /healthz and /metrics of every reader). */
  async noteHead(head: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.setMeta("head_block", String(head), tx);
      await this.setMeta("head_seen_at", String(Date.now()), tx);
    });
  }

  /** The number of records (kept by every write, not counted). */
  async count(): Promise<number> {
    return Number((await this.getMeta("rows")) ?? 0);
  }
}

/** Whether `chainmail index` built an index here: its migrations, or the tables of one older than them. */
async function holdsIndex(db: Database): Promise<boolean> {
  if ((await appliedVersion(db, "index")) > 0) return true;
  try {
    await db.query("SELECT 1 FROM activity LIMIT 1");
    return true;
  } catch (err) {
    if (isMissingTable(err)) return false;
    throw err;
  }
}

/** Reading a database that holds no index: what to run to build one. */
function noIndex(target: string, schema?: string | null): ChainmailError {
  const shown = displayTarget(target);
  const where = schema ? `${shown} (schema ${schema})` : shown;
  return new ChainmailError("STORAGE_ERROR", `There is no index in ${where}; nothing was read or created.`, {
    hint: `Build it first with \`chainmail index --rpc <node url> --db ${shown}\`, or set INDEX_DB to the database that command writes.`,
    details: { db: shown, index: "missing" },
  });
}

/** Whether an error is `openForReading` finding no index there (a reader may wait for its writer to build one). */
export const isMissingIndex = (err: unknown): boolean =>
  err instanceof ChainmailError && err.details.index === "missing";
