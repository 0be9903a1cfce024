/**
 * The shared vocabulary of the database layer: the `Database` interface, its option types and the helpers both
 * engines use. A leaf module: the engines and the migrator import it, and `database.ts` (which loads an engine)
 * re-exports it, so no file of src/db imports one that imports it back.
 */
import { ChainmailError } from "../core/errors.js";

export type Engine = "sqlite" | "postgres";

export type Row = Record<string, unknown>;

/** What to do when an inserted row's key already exists: keep the stored row, or overwrite some columns. */
export type OnConflict = "ignore" | { key: readonly string[]; update: readonly string[] };

/** Statements, inside or outside a transaction. */
export interface Sql {
  readonly engine: Engine;
  /** The rows a statement returns. */
  query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /**
   * The rows a statement returns, each as an array of its column values in the statement's order: what a hot
   * read takes when it maps rows itself (no object with named keys built per row; same values as `query`).
   */
  queryValues(sql: string, params?: readonly unknown[]): Promise<unknown[][]>;
  /** Runs a statement; resolves to the number of rows it inserted, changed or deleted. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** Runs a script of several statements without parameters (DDL). */
  exec(script: string): Promise<void>;
  /**
   * Inserts many rows in as few statements as the engine allows (one per chunk on PostgreSQL, one prepared
   * statement on SQLite); resolves to the number of rows inserted.
   */
  insertMany(table: string, columns: readonly string[], rows: readonly Row[], onConflict?: OnConflict): Promise<number>;
}

export interface Database extends Sql {
  /** Where the data lives, for messages: the file path, or the URL without its password. */
  readonly target: string;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Applies the pending migrations of `module` from `<dir>/<engine>/NNNN_name.sql` (default dir: the package's
   * `migrations/<module>/`); resolves to how many were applied.
   */
  migrate(module: string, dir?: URL): Promise<number>;
  /**
   * Resolves once this process is the only writer of `name` in this database; other processes asking for the
   * same name wait until it is released or its holder dies (even by `kill -9`). Abort `signal` to stop waiting.
   */
  lockWriter(name: string, options?: LockOptions): Promise<WriterLock>;
  close(): Promise<void>;
}

export interface LockOptions {
  signal?: AbortSignal | undefined;
  /** Called once when another process holds the lock and this one starts waiting. */
  onWait?: (() => void) | undefined;
  /** How often a waiting process tries again. Default 250 ms. */
  pollMs?: number;
}

export interface WriterLock {
  release(): Promise<void>;
}

/** Whether a database setting names PostgreSQL rather than an SQLite file. */
export const isPostgresUrl = (target: string): boolean => /^postgres(ql)?:\/\//i.test(target);

/** The target as shown to people: a PostgreSQL URL loses its password and query string. */
export function displayTarget(target: string): string {
  if (!isPostgresUrl(target)) return target;
  try {
    const url = new URL(target);
    if (url.password) url.password = "***";
    url.search = "";
    return url.toString();
  } catch {
    return "(a PostgreSQL URL that cannot be parsed)";
  }
}

export interface OpenOptions {
  /**
   * Whether opening may create or change the database (default true, for writers). `false` is for readers: an
   * SQLite file must exist already, its directory is not made and its journal mode is left as it is; opening a
   * PostgreSQL database changes nothing either way.
   */
  create?: boolean;
}

/** A database failure as the `storage_error` every caller reports. */
export function storageError(target: string, err: unknown, doing = "failed"): ChainmailError {
  if (err instanceof ChainmailError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new ChainmailError("STORAGE_ERROR", `The database ${displayTarget(target)} ${doing}: ${reason}.`, {
    hint: "Check INDEX_DB (or --db): an SQLite file in a writable directory, or a reachable postgres:// URL.",
    cause: err,
  });
}

/** Table and column names are written into SQL: only plain identifiers get there. */
export function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a plain SQL identifier: ${JSON.stringify(name)}`);
  return name;
}

/** The shared text of `insertMany`'s conflict clause (both engines accept the same syntax). */
export function conflictClause(onConflict: OnConflict | undefined): string {
  if (!onConflict) return "";
  if (onConflict === "ignore") return " ON CONFLICT DO NOTHING";
  // `ON CONFLICT ()` is no SQL, and PostgreSQL's DO UPDATE needs the key it conflicts on: a caller's mistake.
  if (onConflict.key.length === 0) {
    throw new ChainmailError(
      "INTERNAL",
      'insertMany\'s onConflict names no key column (use "ignore" for any conflict).',
    );
  }
  const target = ` ON CONFLICT (${onConflict.key.map(identifier).join(", ")})`;
  // No column to overwrite keeps the stored row: DO NOTHING on that key (`SET` with no column is no SQL).
  if (onConflict.update.length === 0) return `${target} DO NOTHING`;
  const set = onConflict.update.map((c) => `${identifier(c)} = excluded.${identifier(c)}`).join(", ");
  return `${target} DO UPDATE SET ${set}`;
}

/**
 * Runs tasks one at a time, in call order. A single connection cannot interleave a transaction with other
 * statements, so both engines queue every use of a shared connection through one of these.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
