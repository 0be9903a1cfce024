/**
 * The SQLite driver over Node's own `node:sqlite` (without a flag since Node 22.13): nothing to install or compile.
 * Node 22 marks the module experimental and warns once when it is loaded; that one warning is kept out of
 * chainmail's output (every other warning still shows).
 */
import { existsSync } from "node:fs";
import type { SqliteConnection, SqliteDriver, SqliteStatement } from "./sqlite-types.js";

/** The part of `node:sqlite` used here (the machine's @types/node may predate the module). */
interface NodeSqlite {
  DatabaseSync: new (path: string) => DatabaseSync;
}
interface DatabaseSync {
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  close(): void;
}
interface StatementSync {
  all(...params: unknown[]): object[];
  /** Node ≥ 22.16 and 24. */
  setReturnArrays?(enabled: boolean): void;
  run(...params: unknown[]): { changes: number | bigint };
}

/** Loads `node:sqlite` without its ExperimentalWarning; undefined when this Node has no such module. */
function loadModule(): NodeSqlite | undefined {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const message = typeof warning === "string" ? warning : warning.message;
    if (type === "ExperimentalWarning" && /\bSQLite\b/.test(message)) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    return process.getBuiltinModule?.("node:sqlite") as NodeSqlite | undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

class Statement implements SqliteStatement {
  constructor(private readonly statement: StatementSync) {}

  all(...params: unknown[]): object[] {
    return this.statement.all(...params);
  }

  values(...params: unknown[]): unknown[][] {
    const statement = this.statement;
    // Rows as arrays are a flag of the statement, set for this call only. A Node without it (22.13–22.15) gets
    // the objects' values, in column order (column names are never integer-like keys).
    if (!statement.setReturnArrays) return statement.all(...params).map((row) => Object.values(row));
    statement.setReturnArrays(true);
    try {
      return statement.all(...params) as unknown[][];
    } finally {
      statement.setReturnArrays(false);
    }
  }

  run(...params: unknown[]): number {
    return Number(this.statement.run(...params).changes);
  }
}

class Connection implements SqliteConnection {
  open = true;

  constructor(private readonly db: DatabaseSync) {}

  prepare(sql: string): SqliteStatement {
    return new Statement(this.db.prepare(sql));
  }

  exec(script: string): void {
    this.db.exec(script);
  }

  close(): void {
    if (!this.open) return;
    this.open = false;
    this.db.close();
  }
}

/** An error like SQLite's own when a file that must exist does not (node:sqlite has no open flag for it). */
const cannotOpen = () =>
  Object.assign(new Error("unable to open database file"), { code: "ERR_SQLITE_ERROR", errcode: 14 });

export function nodeSqlite(): SqliteDriver | undefined {
  const sqlite = loadModule();
  if (!sqlite) return undefined;
  return {
    name: "node",
    connect(path, { mustExist }) {
      if (mustExist && path !== ":memory:" && !existsSync(path)) throw cannotOpen();
      return new Connection(new sqlite.DatabaseSync(path));
    },
    // SQLite's result code is in `errcode`; extended codes (SQLITE_BUSY_SNAPSHOT…) keep it in the low byte.
    isBusy: (err) => {
      const code = (err as { errcode?: unknown } | undefined)?.errcode;
      return typeof code === "number" && (code & 0xff) === 5;
    },
  };
}
