/**
 * Which SQLite library runs the SQLite engine: Node's own `node:sqlite` where the running Node has it without a
 * flag (22.13 and later), else better-sqlite3, an optional peer dependency (Node 20 needs it). Both are reached
 * through the same small connection interface, one adapter per library (sqlite-node.ts, sqlite-better.ts), so
 * sqlite.ts holds the engine's behaviour once. `CHAINMAIL_SQLITE_DRIVER=node|better-sqlite3` picks one explicitly
 * (tests, benchmarks, or to keep better-sqlite3 on a Node that has both).
 */
import { setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import type { SqliteDriver, SqliteDriverName } from "./sqlite-types.js";

export type { SqliteConnection, SqliteDriver, SqliteDriverName, SqliteStatement } from "./sqlite-types.js";

const loaded = new Map<SqliteDriverName, Promise<SqliteDriver | undefined>>();

/** A driver by name, or undefined when this Node cannot load it (no `node:sqlite`; better-sqlite3 not installed). */
export function loadSqliteDriver(name: SqliteDriverName): Promise<SqliteDriver | undefined> {
  let driver = loaded.get(name);
  if (!driver) {
    driver = name === "node" ? import("./sqlite-node.js").then((m) => m.nodeSqlite()) : loadBetterSqlite3();
    loaded.set(name, driver);
  }
  return driver;
}

async function loadBetterSqlite3(): Promise<SqliteDriver | undefined> {
  try {
    return (await import("./sqlite-better.js")).betterSqlite3();
  } catch (err) {
    // Not installed, or installed but unusable here (built for another Node: ERR_DLOPEN_FAILED); say which.
    const notInstalled = (err as { code?: string }).code === "ERR_MODULE_NOT_FOUND";
    betterSqlite3Problem = notInstalled
      ? "better-sqlite3 is not installed"
      : `better-sqlite3 cannot be loaded (${err instanceof Error ? err.message.split("\n")[0] : String(err)})`;
    return undefined;
  }
}

let betterSqlite3Problem = "better-sqlite3 is not installed";

const INSTALL_HINT =
  "Run chainmail on Node 22.13 or later (it has SQLite built in), or install the SQLite library for this Node: npm install better-sqlite3@^12.";

/**
 * The driver the SQLite engine uses: `CHAINMAIL_SQLITE_DRIVER` when set, else `node:sqlite` when this Node has it,
 * else better-sqlite3. Fails with `storage_error` saying what to install when none can be loaded.
 */
export async function sqliteDriver(env: Record<string, string | undefined> = process.env): Promise<SqliteDriver> {
  // An unknown value is refused as every setting is (invalid_input naming it and the values it may take).
  const chosen = setting(env, "CHAINMAIL_SQLITE_DRIVER");
  if (chosen) {
    const driver = await loadSqliteDriver(chosen);
    if (driver) return driver;
    throw unavailable(
      chosen === "node"
        ? `CHAINMAIL_SQLITE_DRIVER=node, but Node ${process.version} has no node:sqlite (22.13 and later have it).`
        : `CHAINMAIL_SQLITE_DRIVER=better-sqlite3, but ${betterSqlite3Problem}.`,
      chosen === "node" ? INSTALL_HINT : "Install it for this Node: npm install better-sqlite3@^12.",
    );
  }
  const driver = (await loadSqliteDriver("node")) ?? (await loadSqliteDriver("better-sqlite3"));
  if (driver) return driver;
  throw unavailable(
    `SQLite is not available: Node ${process.version} has no node:sqlite, and ${betterSqlite3Problem}.`,
    INSTALL_HINT,
  );
}

const unavailable = (message: string, hint: string) => new ChainmailError("STORAGE_ERROR", message, { hint });
