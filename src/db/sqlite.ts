/**
 * The SQLite engine (WAL; node:sqlite or better-sqlite3, see sqlite-driver.ts): one connection per `Database`,
 * statements prepared once. Writers and readers in other processes share the file (WAL lets readers go on while
 * one writer commits). The writer lock is an open write transaction on a side file (`<file>-<name>.lock`): the
 * operating system drops it when the holder dies, so a waiting process takes over at once.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
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
import {
  type SqliteConnection as Connection,
  type SqliteDriver,
  type SqliteStatement as Statement,
  sqliteDriver,
} from "./sqlite-driver.js";

/** Prepared statements kept per connection; beyond this the cache starts over (statements are cheap to prepare). */
const STATEMENT_CACHE = 500;
/** Rows `insertMany` runs between two turns of the event loop (about 2-5 ms of work). */
const INSERT_SLICE = 1_000;
/** Rows one `insertMany` statement inserts at most (the index's 17 columns: 425 parameters). */
const ROWS_AT_ONCE = 25;
/** Parameters of one statement, at most: the lowest limit an SQLite build may have. */
const MAX_PARAMETERS = 999;
/** How long a statement waits for another connection's write transaction before failing. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Runs `work`, retrying while another connection holds the write lock, without blocking the event loop. `work`
 * may throw the driver's error or a `storage_error` wrapping it.
 */
async function whenFree<T>(driver: SqliteDriver, work: () => T): Promise<T> {
  const started = Date.now();
  for (let wait = 1; ; wait = Math.min(wait * 2, 50)) {
    try {
      return work();
    } catch (err) {
      const busy = driver.isBusy(err) || (err instanceof Error && driver.isBusy(err.cause));
      if (!busy || Date.now() - started > BUSY_TIMEOUT_MS) throw err;
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
  const driver = await sqliteDriver();
  return new SqliteDatabase(path, driver, await whenFree(driver, () => connect(driver, path, create)));
}

function connect(driver: SqliteDriver, path: string, create: boolean): Connection {
  let connection: Connection | undefined;
  try {
    if (create && path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    connection = driver.connect(path, { mustExist: !create });
    // SQLite's own busy wait would block the event loop (and with it a writer in this same process): never
    // wait inside SQLite; `whenFree` retries asynchronously instead.
    connection.exec("PRAGMA busy_timeout = 0");
    // WAL: one process writes while others read, neither blocking the other. A database the writer made is WAL
    // already (the mode is kept in the file); a reader leaves any other file as it found it.
    if (create) connection.exec("PRAGMA journal_mode = WAL");
    connection.exec("PRAGMA synchronous = NORMAL");
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
    return this.attempt(() => this.prepare(sql).all(...(params.length ? [bindings(params)] : [])) as T[]);
  }

  queryValuesSync(sql: string, params: readonly unknown[] = []): unknown[][] {
    return this.attempt(() => this.prepare(sql).values(...(params.length ? [bindings(params)] : [])));
  }

  runSync(sql: string, params: readonly unknown[] = []): number {
    return this.attempt(() => this.prepare(sql).run(...(params.length ? [bindings(params)] : [])));
  }

  async query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.querySync<T>(sql, params);
  }

  async queryValues(sql: string, params?: readonly unknown[]): Promise<unknown[][]> {
    return this.queryValuesSync(sql, params);
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

  // Long on purpose: the index's one write path (every record goes through these loops); its locals are bound
  // once per call, not per row.
  async insertMany(
    table: string,
    columns: readonly string[],
    rows: readonly Row[],
    onConflict?: OnConflict,
  ): Promise<number> {
    if (rows.length === 0) return 0;
    const names = columns.map(identifier);
    // Prepared statements of up to ROWS_AT_ONCE rows (the rest one row at a time), their parameters positional from one
    // array refilled per statement: a row costs one bind of each value and a share of one call into the driver
    // (named parameters cost an object per row and a lookup each). SQLite inserts the rows of a VALUES list one
    // after the other, conflicts included, as it does separate statements.
    const into = `INSERT INTO ${identifier(table)} (${names.join(", ")}) VALUES `;
    const tuple = `(${names.map(() => "?").join(", ")})`;
    const conflict = conflictClause(onConflict);
    const group = Math.max(1, Math.min(ROWS_AT_ONCE, Math.floor(MAX_PARAMETERS / names.length)));
    const many = `${into}${Array(group).fill(tuple).join(", ")}${conflict}`;
    const one = `${into}${tuple}${conflict}`;
    const values: unknown[] = new Array(names.length * group);
    const single: unknown[] = new Array(names.length);
    let inserted = 0;
    for (let start = 0; start < rows.length; start += INSERT_SLICE) {
      // Between slices the event loop runs (the transaction stays open; `Serial` keeps other statements out):
      // network reads in flight, such as the indexer's next range, go on meanwhile instead of waiting for the end.
      if (start > 0) await setImmediate();
      inserted += this.attempt(() => {
        const end = Math.min(rows.length, start + INSERT_SLICE);
        let changes = 0;
        let r = start;
        if (end - r >= group) {
          const statement = this.prepare(many);
          for (; end - r >= group; r += group) {
            let v = 0;
            for (let k = r; k < r + group; k++) {
              const row = rows[k]!;
              for (let i = 0; i < names.length; i++) values[v++] = bindable(row[names[i]!]);
            }
            changes += statement.run(...values);
          }
        }
        if (r < end) {
          const statement = this.prepare(one);
          for (; r < end; r++) {
            const row = rows[r]!;
            for (let i = 0; i < names.length; i++) single[i] = bindable(row[names[i]!]);
            changes += statement.run(...single);
          }
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
    private readonly driver: SqliteDriver,
    connection: Connection,
  ) {
    this.statements = new SqliteStatements(connection, target);
  }

  query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.serial.run(() => whenFree(this.driver, () => this.statements.querySync<T>(sql, params)));
  }

  queryValues(sql: string, params?: readonly unknown[]): Promise<unknown[][]> {
    return this.serial.run(() => whenFree(this.driver, () => this.statements.queryValuesSync(sql, params)));
  }

  run(sql: string, params?: readonly unknown[]): Promise<number> {
    return this.serial.run(() => whenFree(this.driver, () => this.statements.runSync(sql, params)));
  }

  exec(script: string): Promise<void> {
    return this.serial.run(() => whenFree(this.driver, () => this.statements.execSync(script)));
  }

  insertMany(table: string, columns: readonly string[], rows: readonly Row[], onConflict?: OnConflict) {
    return this.transaction((tx) => tx.insertMany(table, columns, rows, onConflict));
  }

  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    return this.serial.run(async () => {
      // IMMEDIATE: take the write lock up front, so two writers never deadlock upgrading from a read.
      await whenFree(this.driver, () => this.statements.runSync("BEGIN IMMEDIATE"));
      try {
        const result = await work(this.statements);
        this.statements.runSync("COMMIT");
        return result;
      } catch (err) {
        rollback(this.statements.connection);
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
      holder = this.driver.connect(lockFile, { mustExist: false });
      // Never block the event loop waiting: try, and poll from here.
      holder.exec("PRAGMA busy_timeout = 0");
    } catch (err) {
      throw storageError(lockFile, err, "could not be opened");
    }
    let waiting = false;
    for (;;) {
      try {
        holder.exec("BEGIN IMMEDIATE");
        return { release: async () => holder.close() };
      } catch (err) {
        if (!this.driver.isBusy(err)) {
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
    return this.serial.run(() => this.statements.connection.close());
  }
}

/**
 * Ends the open transaction after a failure. SQLite may have rolled it back itself already (some errors do), and
 * a COMMIT that failed may have left it open: either way none is open afterwards.
 */
function rollback(connection: Connection): void {
  try {
    connection.exec("ROLLBACK");
  } catch {
    // "cannot rollback - no transaction is active": nothing left to undo.
  }
}
