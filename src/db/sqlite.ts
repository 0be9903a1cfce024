/**
 * The SQLite engine (better-sqlite3, WAL): one connection per `Database`, statements prepared once. Writers and
 * readers in other processes share the file (WAL lets readers go on while one writer commits). The writer lock
 * is an open write transaction on a side file (`<file>-<name>.lock`): the operating system drops it when the
 * holder dies, so a waiting process takes over at once.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import BetterSqlite3 from "better-sqlite3";
import { ChainmailError } from "../core/errors.js";
import { migrate } from "./migrate.js";
import {
  conflictClause,
  type Database,
  identifier,
  type LockOptions,
  type OnConflict,
  type OpenOptions,
  type Row,
  Serial,
  type Sql,
  storageError,
  type WriterLock,
} from "./sql.js";

type Connection = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

/** Prepared statements kept per connection; beyond this the cache starts over (statements are cheap to prepare). */
const STATEMENT_CACHE = 500;
/** Rows `insertMany` runs between two turns of the event loop (about 2-5 ms of work). */
const INSERT_SLICE = 1_000;
/** How long a statement waits for another connection's write transaction before failing. */
const BUSY_TIMEOUT_MS = 10_000;

const isBusy = (err: unknown): boolean => {
  const cause = err instanceof ChainmailError ? err.cause : err;
  return (cause as { code?: string } | undefined)?.code?.startsWith("SQLITE_BUSY") === true;
};

/** Runs `work`, retrying while another connection holds the write lock, without blocking the event loop. */
async function whenFree<T>(work: () => T): Promise<T> {
  const started = Date.now();
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      return work();
    } catch (err) {
      if (!isBusy(err) || Date.now() - started > BUSY_TIMEOUT_MS) throw err;
    }
    await sleep(wait);
  }
}

/**
 * Opens the file, creating it unless `create` is false. Setting WAL mode can find the file busy while another
 * process commits, notably its migrations: retried like any statement rather than refused.
 */
export async function openSqlite(path: string, options: OpenOptions = {}): Promise<Database> {
  const create = options.create ?? true;
  return new SqliteDatabase(path, await whenFree(() => connect(path, create)));
}

function connect(path: string, create: boolean): Connection {
  let connection: Connection | undefined;
  try {
    if (create && path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    connection = new BetterSqlite3(path, { fileMustExist: !create });
    // SQLite's own busy wait would block the event loop (and with it a writer in this same process): never
    // wait inside SQLite; `whenFree` retries asynchronously instead.
    connection.pragma("busy_timeout = 0");
    // WAL: one process writes while others read, neither blocking the other. A database the writer made is WAL
    // already (the mode is kept in the file); a reader leaves any other file as it found it.
    if (create) connection.pragma("journal_mode = WAL");
    connection.pragma("synchronous = NORMAL");
    return connection;
  } catch (err) {
    // A file that opened but is not a usable database (not SQLite, read-only) must not keep its handle.
    connection?.close();
    throw storageError(path, err, "could not be opened");
  }
}

/** A value as SQLite takes it: no undefined, no booleans. */
const bindable = (value: unknown): unknown =>
  value === undefined ? null : typeof value === "boolean" ? Number(value) : value;

/** `$1, $2…` are named parameters to SQLite: bind them from an object keyed 1, 2…. */
function bindings(params: readonly unknown[]): Record<number, unknown> {
  const named: Record<number, unknown> = {};
  params.forEach((value, i) => {
    named[i + 1] = bindable(value);
  });
  return named;
}

class SqliteStatements implements Sql {
  readonly engine = "sqlite" as const;
  private readonly cache = new Map<string, Statement>();

  constructor(
    readonly connection: Connection,
    private readonly path: string,
  ) {}

  private prepare(sql: string): Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      if (this.cache.size >= STATEMENT_CACHE) this.cache.clear();
      statement = this.connection.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  private attempt<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw storageError(this.path, err);
    }
  }

  querySync<T>(sql: string, params: readonly unknown[] = []): T[] {
    return this.attempt(() => {
      const statement = this.prepare(sql);
      const args = params.length ? [bindings(params)] : [];
      if (statement.reader) return statement.all(...args) as T[];
      statement.run(...args);
      return [];
    });
  }

  runSync(sql: string, params: readonly unknown[] = []): number {
    return this.attempt(() => this.prepare(sql).run(...(params.length ? [bindings(params)] : [])).changes);
  }

  async query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.querySync<T>(sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.runSync(sql, params);
  }

  execSync(script: string): void {
    this.attempt(() => this.connection.exec(script));
  }

  async exec(script: string): Promise<void> {
    this.execSync(script);
  }

  async insertMany(
    table: string,
    columns: readonly string[],
    rows: readonly Row[],
    onConflict?: OnConflict,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const names = columns.map(identifier);
    // One prepared single-row statement run per row is SQLite's fastest bulk path inside a transaction; its
    // parameters positional, from one array refilled per row (named ones cost an object per row and a lookup each).
    const sql = `INSERT INTO ${identifier(table)} (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})${conflictClause(onConflict)}`;
    const values: unknown[] = new Array(names.length);
    let inserted = 0;
    for (let start = 0; start < rows.length; start += INSERT_SLICE) {
      // Between slices the event loop runs (the transaction stays open; `Serial` keeps other statements out):
      // network reads in flight, such as the indexer's next range, go on meanwhile instead of waiting for the end.
      if (start > 0) await setImmediate();
      inserted += this.attempt(() => {
        const statement = this.prepare(sql);
        let changes = 0;
        for (let r = start; r < Math.min(rows.length, start + INSERT_SLICE); r++) {
          const row = rows[r]!;
          for (let i = 0; i < names.length; i++) values[i] = bindable(row[names[i]!]);
          changes += statement.run(values).changes;
        }
        return changes;
      });
    }
    return inserted;
  }
}

class SqliteDatabase implements Database {
  readonly engine = "sqlite" as const;
  private readonly statements: SqliteStatements;
  /** Keeps statements of other callers out of an open transaction on the one connection. */
  private readonly serial = new Serial();

  constructor(
    readonly target: string,
    connection: Connection,
  ) {
    this.statements = new SqliteStatements(connection, target);
  }

  query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.serial.run(() => whenFree(() => this.statements.querySync<T>(sql, params)));
  }

  run(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.serial.run(() => whenFree(() => this.statements.runSync(sql, params)));
  }

  exec(script: string): Promise<void> {
    return this.serial.run(() => whenFree(() => this.statements.execSync(script)));
  }

  insertMany(table: string, columns: readonly string[], rows: readonly Row[], onConflict?: OnConflict) {
    return this.transaction((tx) => tx.insertMany(table, columns, rows, onConflict));
  }

  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.serial.run(async () => {
      // IMMEDIATE: take the write lock up front, so two writers never deadlock upgrading from a read.
      await whenFree(() => this.statements.runSync("BEGIN IMMEDIATE"));
      try {
        const result = await work(this.statements);
        this.statements.runSync("COMMIT");
        return result;
      } catch (err) {
        if (this.statements.connection.inTransaction) this.statements.connection.exec("ROLLBACK");
        throw err;
      }
    });
  }

  migrate(module: string, dir?: URL): Promise<number> {
    return migrate(this, module, dir);
  }

  async lockWriter(name: string, options: LockOptions = {}): Promise<WriterLock> {
    if (this.target === ":memory:") return { release: async () => {} };
    const lockFile = `${this.target}-${identifier(name)}.lock`;
    let holder: Connection;
    try {
      holder = new BetterSqlite3(lockFile);
      // Never block the event loop waiting: try, and poll from here.
      holder.pragma("busy_timeout = 0");
    } catch (err) {
      throw storageError(lockFile, err, "could not be opened");
    }
    let waiting = false;
    for (;;) {
      try {
        holder.exec("BEGIN IMMEDIATE");
        return {
          release: async () => {
            if (holder.open) holder.close();
          },
        };
      } catch (err) {
        if ((err as { code?: string }).code !== "SQLITE_BUSY") {
          holder.close();
          throw storageError(lockFile, err);
        }
      }
      if (!waiting) {
        waiting = true;
        options.onWait?.();
      }
      try {
        await sleep(options.pollMs ?? 250, undefined, options.signal ? { signal: options.signal } : undefined);
      } catch (err) {
        holder.close();
        throw err;
      }
    }
  }

  close(): Promise<void> {
    return this.serial.run(() => {
      if (this.statements.connection.open) this.statements.connection.close();
    });
  }
}
