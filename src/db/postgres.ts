/**
 * The PostgreSQL engine (node-postgres): a connection pool per `Database`, so many readers (service replicas,
 * requests) share one database. The writer lock is a session advisory lock keyed by the schema and the name; the
 * process that holds it then runs every statement on that one connection, so its writes can only happen while
 * it holds the lock, and PostgreSQL releases the lock as soon as the connection dies (`kill -9` included).
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { migrate } from "./migrate.js";
import {
  conflictClause,
  type Database,
  displayTarget,
  identifier,
  type LockOptions,
  type OnConflict,
  type Row,
  Serial,
  type Sql,
  storageError,
  type WriterLock,
} from "./sql.js";

/** Rows per statement of `insertMany` (one JSON parameter each). */
const INSERT_CHUNK = 5_000;
const INT8 = 20;

/** int8 (block numbers, counts) as a number when it fits, else the exact string; NUMERIC stays a string. */
const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 && format !== "binary") {
      return (value: string) => {
        const n = Number(value);
        return Number.isSafeInteger(n) ? n : value;
      };
    }
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** JSON for `json_populate_recordset`: bigints as their exact decimal text. */
const toJson = (rows: readonly Row[]): string =>
  JSON.stringify(rows, (_key, value) => (typeof value === "bigint" ? value.toString() : value));

/**
 * `queryValues` statements run as named prepared statements: each connection parses one once and then only binds
 * and executes it (a page's statement costs a quarter less). The name is a hash of the text, so that one name means
 * one text in every process (a pooler such as PgBouncer may hand one server connection to several). The first
 * PREPARED texts are named (an unbounded set would fill every connection); any other runs unnamed, and so does a
 * text the server once refused as a prepared statement (see `refusedPrepared`).
 */
const PREPARED = 200;
const preparedNames = new Map<string, string | null>();

function statementName(sql: string): string | undefined {
  let name = preparedNames.get(sql);
  if (name === undefined) {
    const hash = createHash("sha256").update(sql).digest("hex").slice(0, 32);
    name = preparedNames.size < PREPARED ? `chainmail_${hash}` : null;
    preparedNames.set(sql, name);
  }
  return name ?? undefined;
}

/**
 * The server refusing a prepared statement rather than the query: its table changed shape ("cached plan must not
 * change result type"), or a pooler in transaction mode lost it or already holds it on another connection.
 */
function refusedPrepared(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (code === "26000" || code === "42P05") return true;
  return code === "0A000" && /cached plan/i.test(String((err as Error).message));
}

interface Client {
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  query(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult>;
}

class PostgresStatements implements Sql {
  readonly engine = "postgres" as const;

  constructor(
    private readonly client: () => Client,
    private readonly target: string,
  ) {}

  private async attempt(text: string, values?: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.client().query(text, values as unknown[] | undefined);
    } catch (err) {
      throw storageError(this.target, err);
    }
  }

  async query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return (await this.attempt(sql, params)).rows as T[];
  }

  async queryValues(sql: string, params?: readonly unknown[]): Promise<unknown[][]> {
    const values = params as unknown[] | undefined;
    const name = statementName(sql);
    try {
      return (await this.client().query({ text: sql, values, rowMode: "array", ...(name ? { name } : {}) })).rows;
    } catch (err) {
      if (!name || !refusedPrepared(err)) throw storageError(this.target, err);
    }
    // This text is never prepared again in this process; this time and from now on it runs unnamed.
    preparedNames.set(sql, null);
    return this.queryValues(sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<number> {
    return (await this.attempt(sql, params)).rowCount ?? 0;
  }

  async exec(script: string): Promise<void> {
    await this.attempt(script);
  }

  async insertMany(
    table: string,
    columns: readonly string[],
    rows: readonly Row[],
    onConflict?: OnConflict,
  ): Promise<number> {
    const names = columns.map(identifier).join(", ");
    // One statement per chunk: the rows travel as one JSON array, typed by the table's own row type.
    const sql = `INSERT INTO ${identifier(table)} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${identifier(table)}, $1)${conflictClause(onConflict)}`;
    let inserted = 0;
    for (const run of distinctRuns(rows, onConflict)) {
      for (let i = 0; i < run.length; i += INSERT_CHUNK) {
        inserted += await this.run(sql, [toJson(run.slice(i, i + INSERT_CHUNK))]);
      }
    }
    return inserted;
  }
}

/**
 * Rows in runs that each hold a conflict key at most once, in order. An upsert statement may not touch one row
 * twice ("ON CONFLICT DO UPDATE command cannot affect row a second time"): a key met again starts a new run, so
 * the later row updates the earlier one, as one statement a row would. Without an update, one run.
 */
function distinctRuns(rows: readonly Row[], onConflict: OnConflict | undefined): Row[][] {
  if (!onConflict || onConflict === "ignore") return [rows as Row[]];
  const runs: Row[][] = [[]];
  let seen = new Set<string>();
  for (const row of rows) {
    // Two keys written alike only start a run sooner: harmless.
    const key = onConflict.key.map((column) => String(row[column])).join("\u0000");
    if (seen.has(key)) {
      runs.push([]);
      seen = new Set();
    }
    seen.add(key);
    runs.at(-1)!.push(row);
  }
  return runs;
}

class PostgresDatabase implements Database {
  readonly engine = "postgres" as const;
  readonly target: string;
  private readonly pool: pg.Pool;
  /** Set while this process holds a writer lock: every statement then runs on the lock's connection. */
  private pinned: { client: pg.PoolClient; serial: Serial; statements: PostgresStatements } | undefined;
  private readonly statements: PostgresStatements;

  constructor(url: string) {
    this.target = displayTarget(url);
    // Idle connections do not keep the process alive: a command or a library call that is done exits at once
    // instead of waiting out the idle timeout (`close()` ends them at once too).
    this.pool = new pg.Pool({
      connectionString: url,
      types,
      max: 10,
      idleTimeoutMillis: 30_000,
      allowExitOnIdle: true,
    });
    // An idle connection that breaks (server restart) is dropped from the pool; the next query reconnects.
    this.pool.on("error", () => {});
    this.statements = new PostgresStatements(() => this.pool, this.target);
  }

  query<T extends object = Row>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    const pinned = this.pinned;
    return pinned
      ? pinned.serial.run(() => pinned.statements.query<T>(sql, params))
      : this.statements.query(sql, params);
  }

  queryValues(sql: string, params?: readonly unknown[]): Promise<unknown[][]> {
    const pinned = this.pinned;
    return pinned
      ? pinned.serial.run(() => pinned.statements.queryValues(sql, params))
      : this.statements.queryValues(sql, params);
  }

  run(sql: string, params?: readonly unknown[]): Promise<number> {
    const pinned = this.pinned;
    return pinned ? pinned.serial.run(() => pinned.statements.run(sql, params)) : this.statements.run(sql, params);
  }

  exec(script: string): Promise<void> {
    const pinned = this.pinned;
    return pinned ? pinned.serial.run(() => pinned.statements.exec(script)) : this.statements.exec(script);
  }

  insertMany(table: string, columns: readonly string[], rows: readonly Row[], onConflict?: OnConflict) {
    // Several statements: atomic only inside a transaction, like every multi-statement write.
    return this.transaction((tx) => tx.insertMany(table, columns, rows, onConflict));
  }

  async transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T> {
    const pinned = this.pinned;
    if (pinned) return pinned.serial.run(() => inTransaction(pinned.client, pinned.statements, work));
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw storageError(this.target, err, "could not be reached");
    }
    let broken = false;
    try {
      return await inTransaction(client, new PostgresStatements(() => client, this.target), work);
    } catch (err) {
      broken = true;
      throw err;
    } finally {
      // A connection whose transaction failed may be in any state: drop it rather than reuse it.
      client.release(broken);
    }
  }

  migrate(module: string, dir?: URL): Promise<number> {
    return migrate(this, module, dir);
  }

  async lockWriter(name: string, options: LockOptions = {}): Promise<WriterLock> {
    if (this.pinned) throw new Error("this database already holds a writer lock");
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw storageError(this.target, err, "could not be reached");
    }
    // A broken lock connection must not crash the process; its next statement fails with storage_error.
    client.on("error", () => {});
    const statements = new PostgresStatements(() => client, this.target);
    const key = "hashtext('chainmail:writer'), hashtext(current_schema() || '/' || $1)";
    let waiting = false;
    try {
      for (;;) {
        const [row] = await statements.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${key}) AS locked`, [
          name,
        ]);
        if (row?.locked) break;
        if (!waiting) {
          waiting = true;
          options.onWait?.();
        }
        await sleep(options.pollMs ?? 250, undefined, options.signal ? { signal: options.signal } : undefined);
      }
    } catch (err) {
      client.release(true);
      throw err;
    }
    const pinned = { client, serial: new Serial(), statements };
    this.pinned = pinned;
    return {
      release: async () => {
        if (this.pinned !== pinned) return;
        this.pinned = undefined;
        // Closing the session releases the lock, also when the connection is already gone.
        await pinned.serial.run(() => undefined);
        client.release(true);
      },
    };
  }

  async close(): Promise<void> {
    if (this.pinned) this.pinned.client.release(true);
    this.pinned = undefined;
    await this.pool.end();
  }
}

async function inTransaction<T>(
  client: pg.ClientBase,
  statements: PostgresStatements,
  work: (tx: Sql) => Promise<T>,
): Promise<T> {
  await statements.exec("BEGIN");
  try {
    const result = await work(statements);
    await statements.exec("COMMIT");
    return result;
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

export function openPostgres(url: string): Database {
  return new PostgresDatabase(url);
}

/**
 * Listens on `channel` (LISTEN/NOTIFY) on a connection of its own: `onNotify` with what follows `<schema>:` in each
 * payload that starts with this URL's schema (a notifier sends `current_schema()` first: other schemas of the
 * database are not heard), `onLost` once if the connection breaks.
 */
export async function listenPostgres(
  url: string,
  channel: string,
  handlers: { onNotify(rest: string): void; onLost(): void },
): Promise<{ close(): Promise<void> }> {
  const target = displayTarget(url);
  const client = new pg.Client({ connectionString: url, types });
  let lost = false;
  const lose = () => {
    if (lost) return;
    lost = true;
    handlers.onLost();
  };
  client.on("error", lose);
  client.on("end", lose);
  try {
    await client.connect();
    const [row] = (await client.query<{ schema: string | null }>("SELECT current_schema() AS schema")).rows;
    const schema = row?.schema ?? "";
    client.on("notification", (note) => {
      const payload = note.payload ?? "";
      if (note.channel === channel && payload.startsWith(`${schema}:`))
        handlers.onNotify(payload.slice(schema.length + 1));
    });
    await client.query(`LISTEN ${identifier(channel)}`);
  } catch (err) {
    lost = true;
    await client.end().catch(() => undefined);
    throw storageError(target, err, "could not be listened to");
  }
  return {
    close: async () => {
      lost = true;
      await client.end().catch(() => undefined);
    },
  };
}
