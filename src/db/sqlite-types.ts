/**
 * What an SQLite adapter offers (sqlite-node.ts, sqlite-better.ts): a leaf module, so that the driver chooser
 * (sqlite-driver.ts), which loads the adapters, and the adapters do not import each other.
 */
import type { SQLITE_DRIVERS } from "../core/env.js";

export type SqliteDriverName = (typeof SQLITE_DRIVERS)[number];

/** One prepared statement. Parameters are positional values (`?`), or one object of named ones (`$1` → key `1`). */
export interface SqliteStatement {
  /** The rows it returns (none for a statement that returns none); runs it either way. */
  all(...params: unknown[]): object[];
  /** The rows it returns as arrays of column values, in the statement's column order. */
  values(...params: unknown[]): unknown[][];
  /** Runs it; the number of rows it inserted, changed or deleted. */
  run(...params: unknown[]): number;
}

export interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  /** Runs a script of statements without parameters. */
  exec(script: string): void;
  /** Safe to call twice. */
  close(): void;
  readonly open: boolean;
}

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  /** Opens a file (or `:memory:`); with `mustExist`, a missing file fails instead of being created. */
  connect(path: string, options: { mustExist: boolean }): SqliteConnection;
  /** Whether a failure means another connection holds the write lock (worth trying again). */
  isBusy(err: unknown): boolean;
}
