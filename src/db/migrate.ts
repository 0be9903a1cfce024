/**
 * Versioned schema migrations: `migrations/<module>/<engine>/NNNN_name.sql` at the package root, applied in
 * version order in one transaction and recorded in `schema_migrations (module, version, name, applied_at)`.
 * A module (the index, the watch journal, …) owns its folder; versions count per module and per engine.
 * Concurrent openers are safe: the write transaction is exclusive (SQLite `BEGIN IMMEDIATE`, a PostgreSQL
 * transaction lock) and re-reads what is applied before applying anything.
 */
import { readdirSync, readFileSync } from "node:fs";
import { ChainmailError } from "../core/errors.js";
import { type Database, displayTarget, type Engine, identifier, type Sql } from "./sql.js";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** `migrations/` beside `src/` and `dist/` (this file is two levels below the package root in both). */
const ROOT = new URL("../../migrations/", import.meta.url);
const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

const loaded = new Map<string, Migration[]>();

/**
 * The migrations of one module for one engine, by version, from `<dir>/<engine>/` (default: the package's
 * `migrations/<module>/`); a missing folder has none.
 */
export function loadMigrations(module: string, engine: Engine, dir?: URL): Migration[] {
  const base = dir ?? new URL(`${identifier(module)}/`, ROOT);
  const key = `${identifier(module)}/${engine}`;
  const cacheKey = `${base.href}|${engine}`;
  let migrations = loaded.get(cacheKey);
  if (migrations) return migrations;
  const folder = new URL(`${engine}/`, base.href.endsWith("/") ? base : `${base.href}/`);
  let files: string[] = [];
  try {
    files = readdirSync(folder);
  } catch {
    // no migrations for this engine
  }
  migrations = files
    .filter((file) => file.endsWith(".sql"))
    .map((file) => {
      const match = FILE.exec(file);
      if (!match) throw new Error(`migrations/${key}/${file}: name it NNNN_lower_case_name.sql`);
      return { version: Number(match[1]), name: match[2]!, sql: readFileSync(new URL(file, folder), "utf8") };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations/${key}: versions must run 1, 2, 3…; found ${m.version}`);
  });
  loaded.set(cacheKey, migrations);
  return migrations;
}

const TABLE: Record<Engine, string> = {
  sqlite: `CREATE TABLE IF NOT EXISTS schema_migrations (
    module TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
    applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, PRIMARY KEY (module, version))`,
  postgres: `CREATE TABLE IF NOT EXISTS schema_migrations (
    module TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (module, version))`,
};

/** Applies what is pending; resolves to the number of migrations applied. */
export async function migrate(db: Database, module: string, dir?: URL): Promise<number> {
  const migrations = loadMigrations(module, db.engine, dir);
  // Cheap check first: an up-to-date database (every service start) takes no write lock.
  if ((await appliedVersion(db, module)) === migrations.length) return 0;
  return db.transaction(async (tx) => {
    if (tx.engine === "postgres") await tx.query("SELECT pg_advisory_xact_lock(hashtext('chainmail:migrate'))");
    await tx.exec(TABLE[tx.engine]);
    const applied = await appliedVersion(tx, module);
    if (applied > migrations.length) {
      throw new ChainmailError(
        "STORAGE_ERROR",
        `The database ${displayTarget(db.target)} has ${module} schema version ${applied}, newer than this chainmail knows (${migrations.length}).`,
        { hint: "Upgrade chainmail to the version that last wrote this database.", details: { module, applied } },
      );
    }
    const pending = migrations.slice(applied);
    for (const m of pending) {
      await tx.exec(m.sql);
      await tx.run("INSERT INTO schema_migrations (module, version, name) VALUES ($1, $2, $3)", [
        module,
        m.version,
        m.name,
      ]);
    }
    return pending.length;
  });
}

/** The last version of `module` applied to this database: 0 when none ever was (nothing of it exists there). */
export async function appliedVersion(sql: Sql, module: string): Promise<number> {
  try {
    const [row] = await sql.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM schema_migrations WHERE module = $1",
      [module],
    );
    return Number(row?.version ?? 0);
  } catch (err) {
    // No table yet: nothing applied. Anything else is a real failure.
    if (isMissingTable(err)) return 0;
    throw err;
  }
}

/**
 * Whether a statement failed because a table it names does not exist: SQLite's "no such table", PostgreSQL's
 * undefined_table (42P01). Read from the driver's own error (a storage_error's cause), not from a message that also
 * names the database (a path may say anything), and never a missing column, schema, database or role, which
 * PostgreSQL also words "does not exist".
 */
export function isMissingTable(err: unknown): boolean {
  const own = err instanceof ChainmailError && err.cause !== undefined ? err.cause : err;
  if ((own as { code?: unknown } | null | undefined)?.code === "42P01") return true;
  return own instanceof Error && /^(no such table\b|relation "[^"]*" does not exist$)/i.test(own.message);
}
