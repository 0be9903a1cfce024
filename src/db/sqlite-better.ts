/**
 * The SQLite driver over better-sqlite3 (an optional peer dependency: the library for a Node without
 * `node:sqlite`). Importing this module fails when it is not installed or was built for another Node.
 */
import BetterSqlite3 from "better-sqlite3";
import type { SqliteConnection, SqliteDriver, SqliteStatement } from "./sqlite-types.js";

class Statement implements SqliteStatement {
  constructor(private readonly statement: BetterSqlite3.Statement) {}

  all(...params: unknown[]): object[] {
    // better-sqlite3 refuses all() on a statement that returns no rows: run it instead.
    if (this.statement.reader) return this.statement.all(...params) as object[];
    this.statement.run(...params);
    return [];
  }

  values(...params: unknown[]): unknown[][] {
    // The statement's raw mode is a flag on it, set for this call only.
    this.statement.raw(true);
    try {
      return this.statement.all(...params) as unknown[][];
    } finally {
      this.statement.raw(false);
    }
  }

  run(...params: unknown[]): number {
    return this.statement.run(...params).changes;
  }
}

class Connection implements SqliteConnection {
  constructor(private readonly db: BetterSqlite3.Database) {}

  prepare(sql: string): SqliteStatement {
    return new Statement(this.db.prepare(sql));
  }

  exec(script: string): void {
    this.db.exec(script);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  get open(): boolean {
    return this.db.open;
  }
}

export function betterSqlite3(): SqliteDriver {
  return {
    name: "better-sqlite3",
    connect: (path, { mustExist }) => new Connection(new BetterSqlite3(path, { fileMustExist: mustExist })),
    isBusy: (err) => (err as { code?: unknown } | undefined)?.code?.toString().startsWith("SQLITE_BUSY") === true,
  };
}
