/**
 * The index store: one SQLite file (better-sqlite3, WAL) that `chainmail index` writes and the service reads at
 * the same time. Records are append-only and keyed by their chain position (block, log index, batch index), so
 * a re-run inserts nothing twice and a reorg rollback is one range delete.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { ChainmailError } from "../../core/errors.js";
import type { Kind } from "./decode.js";

/** One row of `activity`, as stored. */
export interface ActivityRow {
  block_number: number;
  log_index: number;
  batch_index: number;
  kind: Kind;
  contract: string;
  token_id: string;
  from_addr: string;
  to_addr: string;
  quantity: string;
  tx_hash: string;
  block_hash: string;
  /** Unix seconds of the block. */
  timestamp: number;
  contract_type: string;
  marketplace: string | null;
  /** `null` for ETH, else the ERC-20 token address. */
  currency: string | null;
  /** Exact decimal string in whole units of the currency. */
  price: string | null;
  price_usd: number | null;
}

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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS activity (
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  batch_index INTEGER NOT NULL,
  kind TEXT NOT NULL,
  contract TEXT NOT NULL,
  token_id TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  to_addr TEXT NOT NULL,
  quantity TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  block_hash TEXT NOT NULL,
  timestamp INTEGER NOT NULL,
  contract_type TEXT NOT NULL,
  marketplace TEXT,
  currency TEXT,
  price TEXT,
  price_usd REAL,
  PRIMARY KEY (block_number, log_index, batch_index)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS activity_by_contract ON activity (contract, block_number, log_index, batch_index);
CREATE INDEX IF NOT EXISTS activity_by_token ON activity (contract, token_id, block_number, log_index, batch_index);
-- Hashes of indexed blocks (those with records, and the end of every range): reorg detection walks these back.
CREATE TABLE IF NOT EXISTS blocks (number INTEGER PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS price_answers (
  block_number INTEGER NOT NULL,
  log_index INTEGER NOT NULL,
  answer TEXT NOT NULL,
  PRIMARY KEY (block_number, log_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tokens (address TEXT PRIMARY KEY, decimals INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

const COLUMNS = [
  "block_number",
  "log_index",
  "batch_index",
  "kind",
  "contract",
  "token_id",
  "from_addr",
  "to_addr",
  "quantity",
  "tx_hash",
  "block_hash",
  "timestamp",
  "contract_type",
  "marketplace",
  "currency",
  "price",
  "price_usd",
] as const;

export class IndexStore {
  readonly db: Database.Database;
  private readonly insertActivity: Database.Statement;
  private readonly insertBlock: Database.Statement;
  private readonly insertAnswer: Database.Statement;
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(readonly path: string) {
    let db: Database.Database | undefined;
    try {
      if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
      db = new Database(path);
      db.pragma("busy_timeout = 10000");
      // WAL: the indexer writes while the service reads, neither blocking the other.
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      db.exec(SCHEMA);
    } catch (err) {
      // A file that opened but is not a usable index (not SQLite, read-only) must not keep its handle.
      db?.close();
      throw storageError(`Could not open the index database ${path}`, err);
    }
    this.db = db;
    this.insertActivity = this.db.prepare(
      `INSERT OR IGNORE INTO activity (${COLUMNS.join(", ")}) VALUES (${COLUMNS.map((c) => `@${c}`).join(", ")})`,
    );
    this.insertBlock = this.db.prepare("INSERT OR REPLACE INTO blocks (number, hash) VALUES (?, ?)");
    this.insertAnswer = this.db.prepare(
      "INSERT OR IGNORE INTO price_answers (block_number, log_index, answer) VALUES (?, ?, ?)",
    );
  }

  static open(path: string): IndexStore {
    return new IndexStore(path);
  }

  close(): void {
    this.db.close();
  }

  getMeta(key: string): string | undefined {
    const row = this.db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(key: string, value: string): void {
    this.db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run(key, value);
  }

  /** The last block whose records are all in the index, if any. */
  lastBlock(): number | undefined {
    const value = this.getMeta("last_block");
    return value === undefined ? undefined : Number(value);
  }

  /** Writes one ingested range atomically: its records, block hashes, price answers and the new cursor. */
  commitRange(range: {
    records: ActivityRow[];
    blocks: Checkpoint[];
    answers: { block: number; log: number; answer: bigint }[];
    lastBlock: number;
  }): number {
    let inserted = 0;
    this.db.transaction(() => {
      for (const answer of range.answers) this.insertAnswer.run(answer.block, answer.log, answer.answer.toString());
      for (const row of range.records) inserted += this.insertActivity.run(row).changes;
      for (const block of range.blocks) this.insertBlock.run(block.number, block.hash);
      this.setMeta("last_block", String(range.lastBlock));
    })();
    return inserted;
  }

  /** Inserts records as they are (benchmarks, fixtures). */
  insertRows(rows: ActivityRow[]): void {
    this.db.transaction(() => {
      for (const row of rows) this.insertActivity.run(row);
    })();
  }

  /** Stored block hashes at or below `below`, newest first. */
  checkpoints(below: number, limit: number): Checkpoint[] {
    return this.db
      .prepare("SELECT number, hash FROM blocks WHERE number <= ? ORDER BY number DESC LIMIT ?")
      .all(below, limit) as Checkpoint[];
  }

  /** Forgets everything above `block` (a reorg dropped those blocks); returns the number of records removed. */
  rollbackTo(block: number): number {
    let removed = 0;
    this.db.transaction(() => {
      removed = this.db.prepare("DELETE FROM activity WHERE block_number > ?").run(block).changes;
      this.db.prepare("DELETE FROM blocks WHERE number > ?").run(block);
      this.db.prepare("DELETE FROM price_answers WHERE block_number > ?").run(block);
      this.setMeta("last_block", String(block));
    })();
    return removed;
  }

  /** The latest ETH/USD answer at or before a chain position. */
  answerAt(block: number, log: number): bigint | undefined {
    const row = this.db
      .prepare(
        `SELECT answer FROM price_answers WHERE (block_number, log_index) <= (?, ?)
         ORDER BY block_number DESC, log_index DESC LIMIT 1`,
      )
      .get(block, log) as { answer: string } | undefined;
    return row ? BigInt(row.answer) : undefined;
  }

  tokenDecimals(address: string): number | undefined {
    const row = this.db.prepare("SELECT decimals FROM tokens WHERE address = ?").get(address) as
      | { decimals: number }
      | undefined;
    return row?.decimals;
  }

  setTokenDecimals(address: string, decimals: number): void {
    this.db.prepare("INSERT OR REPLACE INTO tokens (address, decimals) VALUES (?, ?)").run(address, decimals);
  }

  /**
   * One keyset page in chain order: by contract / by token newest first, the whole chain oldest first. The
   * cursor's block also tightens the range bound, which lets SQLite seek instead of scanning (reference §2.5).
   */
  page(query: PageQuery): ActivityRow[] {
    const where: string[] = [];
    const args: Record<string, unknown> = { limit: query.limit };
    if (query.contract !== undefined) {
      where.push("contract = @contract");
      args.contract = query.contract;
    }
    if (query.tokenId !== undefined) {
      where.push("token_id = @token_id");
      args.token_id = query.tokenId;
    }
    if (query.kinds) {
      where.push(`kind IN (${query.kinds.map((_, i) => `@kind${i}`).join(", ")})`);
      query.kinds.forEach((kind, i) => {
        args[`kind${i}`] = kind;
      });
    }
    const ascending = query.direction === "asc";
    let low = query.fromBlock;
    let high = query.toBlock;
    if (query.after) {
      const { block, log, batch } = query.after;
      where.push(`(block_number, log_index, batch_index) ${ascending ? ">" : "<"} (@b, @l, @x)`);
      Object.assign(args, { b: block, l: log, x: batch });
      if (ascending) low = Math.max(low ?? 0, block);
      else high = Math.min(high ?? block, block);
    }
    if (low !== undefined) {
      where.push("block_number >= @low");
      args.low = low;
    }
    if (high !== undefined) {
      where.push("block_number <= @high");
      args.high = high;
    }
    const dir = ascending ? "ASC" : "DESC";
    // With a block bound SQLite may prefer the contract index for a token query and scan the whole contract.
    const index =
      query.tokenId !== undefined
        ? "INDEXED BY activity_by_token"
        : query.contract !== undefined
          ? "INDEXED BY activity_by_contract"
          : "";
    const sql = `SELECT * FROM activity ${index} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY block_number ${dir}, log_index ${dir}, batch_index ${dir} LIMIT @limit`;
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement.all(args) as ActivityRow[];
  }

  count(): number {
    return (this.db.prepare("SELECT count(*) AS n FROM activity").get() as { n: number }).n;
  }
}

function storageError(what: string, err: unknown): ChainmailError {
  const reason = err instanceof Error ? err.message : String(err);
  return new ChainmailError("STORAGE_ERROR", `${what}: ${reason}.`, {
    hint: "Check INDEX_DB (or --db): the directory must be writable.",
    cause: err,
  });
}
