/**
 * One SQL database interface over the two engines chainmail keeps data in: SQLite (a file, the embedded default)
 * and PostgreSQL (a `postgres://` URL). Whoever stores something (the own index, the watch journal) writes its
 * statements once against this interface:
 *
 * - parameters are `$1, $2, …` on both engines;
 * - integers up to 2^53 come back as numbers; anything wider must be stored as text (SQLite) / NUMERIC
 *   (PostgreSQL) and comes back as a string;
 * - every failure is a `ChainmailError` with code `storage_error` naming the database (never its password);
 * - `migrate(module)` applies `migrations/<module>/<engine>/NNNN_name.sql`, numbered files in one transaction,
 *   recorded in `schema_migrations (module, version)`;
 * - `lockWriter(name)` makes this process the only writer of `name` until it releases the lock or dies.
 */
import { type Database, isPostgresUrl, type OpenOptions } from "./sql.js";

export * from "./sql.js";

/** Opens the database a setting names: `postgres://…` / `postgresql://…` is PostgreSQL, anything else a file. */
export async function openDatabase(target: string, options: OpenOptions = {}): Promise<Database> {
  // Each driver is loaded only when used: an SQLite user never loads pg, and the other way round.
  if (isPostgresUrl(target)) return (await import("./postgres.js")).openPostgres(target);
  return (await import("./sqlite.js")).openSqlite(target, options);
}
