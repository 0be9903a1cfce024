/**
 * src/db/migrate.ts on its own, over real databases (SQLite files here; PostgreSQL under `npm run test:services`,
 * test/services/db-migrate.pg.test.ts): `loadMigrations` reads a module's numbered files per engine (the package's
 * own too), `migrate` applies what is pending in one transaction and records it, refuses a database newer than it
 * knows, and `appliedVersion` reads 0 where nothing was ever applied. test/db/database.test.ts covers migrations
 * through `Database.migrate` beside the rest of the database layer.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { type Database, openDatabase } from "../../src/db/database.js";
import { appliedVersion, isMissingTable, loadMigrations, migrate } from "../../src/db/migrate.js";
import {
  type IndexBackend,
  openBackend,
  postgresUrl,
  TEST_POSTGRES_URL,
  testEngine,
} from "../support/index-backend.js";

let backend: IndexBackend;
const open: Database[] = [];
let folders = 0;

beforeAll(async () => {
  backend = await openBackend("migrate");
});

afterAll(async () => {
  await Promise.all(open.map((db) => db.close()));
  await backend?.close();
});

async function database(name: string): Promise<Database> {
  const db = await openDatabase(await backend.target(name));
  open.push(db);
  return db;
}

/** A fresh migrations folder holding `files` for both engines (each folder new: loadMigrations keeps what it read). */
function folder(files: Record<string, string>): URL {
  const dir = join(backend.dir, `m${folders++}`);
  for (const engine of ["sqlite", "postgres"]) {
    mkdirSync(join(dir, engine), { recursive: true });
    for (const [file, sql] of Object.entries(files)) writeFileSync(join(dir, engine, file), sql);
  }
  return pathToFileURL(`${dir}/`);
}

describe("loadMigrations", () => {
  it("reads the package's own modules: every file of the engine's folder, by version from 1", () => {
    const root = new URL("../../migrations/", import.meta.url);
    for (const module of ["index", "watch", "mail", "enrichment"]) {
      for (const engine of ["sqlite", "postgres"] as const) {
        const files = readdirSync(new URL(`${module}/${engine}/`, root)).filter((f) => f.endsWith(".sql"));
        const migrations = loadMigrations(module, engine);
        expect(migrations.map((m) => m.version)).toEqual(files.map((_, i) => i + 1));
        expect(migrations.map((m) => `${String(m.version).padStart(4, "0")}_${m.name}.sql`)).toEqual(files.sort());
        expect(migrations.every((m) => m.sql.length > 0)).toBe(true);
      }
    }
  });

  it("orders by version, ignores other files, and finds none for a missing folder", () => {
    const dir = folder({
      "0002_b.sql": "SELECT 2;",
      "0010_j.sql": "SELECT 10;",
      "0001_a.sql": "SELECT 1;",
      "README.md": "not a migration",
      ...Object.fromEntries([3, 4, 5, 6, 7, 8, 9].map((v) => [`000${v}_n${v}.sql`, `SELECT ${v};`])),
    });
    const migrations = loadMigrations("ordered", "sqlite", dir);
    expect(migrations.map((m) => m.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(migrations[9]).toEqual({ version: 10, name: "j", sql: "SELECT 10;" });
    expect(loadMigrations("nothing", "sqlite", pathToFileURL(join(backend.dir, "absent/")))).toEqual([]);
    expect(loadMigrations("no_such_module", "postgres")).toEqual([]);
  });

  it("refuses a file not named NNNN_lower_case_name.sql, and versions that skip, naming the folder", () => {
    for (const bad of ["1_a.sql", "0001_Upper.sql", "0001-a.sql", "0001_a b.sql"]) {
      expect(() => loadMigrations("named", "sqlite", folder({ [bad]: "SELECT 1;" }))).toThrow(
        `migrations/named/sqlite/${bad}: name it NNNN_lower_case_name.sql`,
      );
    }
    expect(() => loadMigrations("gap", "sqlite", folder({ "0001_a.sql": "", "0003_c.sql": "" }))).toThrow(
      "migrations/gap/sqlite: versions must run 1, 2, 3…; found 3",
    );
    expect(() => loadMigrations("twice", "sqlite", folder({ "0001_a.sql": "", "0001_b.sql": "" }))).toThrow(
      /versions must run 1, 2, 3…; found 1/,
    );
  });
});

describe("migrate", () => {
  it("applies what is pending, once, recording each file; later files apply on their own", async () => {
    const db = await database("pending");
    const v1 = folder({ "0001_notes.sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);" });
    expect(await appliedVersion(db, "notes")).toBe(0);
    expect(await migrate(db, "notes", v1)).toBe(1);
    expect(await migrate(db, "notes", v1)).toBe(0);
    const v2 = folder({
      "0001_notes.sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);",
      "0002_seed.sql": "INSERT INTO notes (id, body) VALUES (1, 'one');",
    });
    expect(await migrate(db, "notes", v2)).toBe(1);
    expect(await appliedVersion(db, "notes")).toBe(2);
    expect(await db.query("SELECT id, body FROM notes")).toEqual([{ id: 1, body: "one" }]);
    const recorded = await db.query<{ module: string; version: number; name: string; applied_at: unknown }>(
      "SELECT module, version, name, applied_at FROM schema_migrations ORDER BY version",
    );
    expect(recorded.map(({ module, version, name }) => ({ module, version, name }))).toEqual([
      { module: "notes", version: 1, name: "notes" },
      { module: "notes", version: 2, name: "seed" },
    ]);
    expect(recorded.every((r) => r.applied_at !== null)).toBe(true);
  });

  it("counts versions per module: another module's migrations are its own", async () => {
    const db = await database("modules");
    await migrate(db, "first", folder({ "0001_a.sql": "CREATE TABLE a (id INTEGER);", "0002_b.sql": "SELECT 1;" }));
    expect(await migrate(db, "second", folder({ "0001_c.sql": "CREATE TABLE c (id INTEGER);" }))).toBe(1);
    expect([
      await appliedVersion(db, "first"),
      await appliedVersion(db, "second"),
      await appliedVersion(db, "third"),
    ]).toEqual([2, 1, 0]);
  });

  it("applies nothing of a batch when one file fails, and leaves no record of it", async () => {
    const db = await database("failing");
    const broken = folder({
      "0001_a.sql": "CREATE TABLE a (id INTEGER PRIMARY KEY);",
      "0002_b.sql": "INSERT INTO a (id) VALUES (1);",
      "0003_c.sql": "INSERT INTO no_such_table (id) VALUES (1);",
    });
    await expect(migrate(db, "broken", broken)).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
    expect(await appliedVersion(db, "broken")).toBe(0);
    await expect(db.query("SELECT * FROM a")).rejects.toThrow();
  });

  it("refuses a database newer than the migrations it knows, saying what to do", async () => {
    const db = await database("newer");
    await migrate(db, "newer", folder({ "0001_a.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;" }));
    const err = await migrate(db, "newer", folder({ "0001_a.sql": "SELECT 1;" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainmailError);
    expect((err as ChainmailError).code).toBe("storage_error");
    expect((err as ChainmailError).message).toContain(
      "has newer schema version 2, newer than this chainmail knows (1).",
    );
    expect((err as ChainmailError).hint).toMatch(/Upgrade chainmail/);
    expect((err as ChainmailError).details).toEqual({ module: "newer", applied: 2 });
    // An up-to-date database takes nothing and says nothing.
    expect(await migrate(db, "newer", folder({ "0001_a.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;" }))).toBe(0);
  });

  it("applies the package's own module migrations to a fresh database", async () => {
    const db = await database("own");
    expect(await migrate(db, "enrichment")).toBe(loadMigrations("enrichment", db.engine).length);
    expect(await db.query("SELECT key, value, stored_at FROM enrichment_cache")).toEqual([]);
  });
});

describe("appliedVersion and isMissingTable", () => {
  it("read no table as nothing applied", async () => {
    const db = await database("versions");
    expect(await appliedVersion(db, "any")).toBe(0);
  });

  it("pass any other failure on: another tool's schema_migrations, even in a database whose path reads like one", async () => {
    // Rails and golang-migrate keep a schema_migrations table too, without a module column: not "nothing applied".
    for (const name of ["foreign", "no such table/foreign", "does not exist/foreign"]) {
      const db = await database(name);
      await db.exec("CREATE TABLE schema_migrations (version TEXT PRIMARY KEY)");
      await expect(appliedVersion(db, "index")).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
    }
  });

  it.runIf(testEngine() === "postgres")(
    "pass on a PostgreSQL server's refusal of the role or the database",
    async () => {
      for (const url of [
        postgresUrl(TEST_POSTGRES_URL.replace("://postgres@", "://no_such_role@"), "test"),
        postgresUrl(TEST_POSTGRES_URL, "no_such_database"),
      ]) {
        const db = await openDatabase(url);
        open.push(db);
        await expect(appliedVersion(db, "index")).rejects.toThrow(/does not exist/);
      }
    },
  );

  it("tells a missing table in either engine's words from other failures", async () => {
    const db = await database("missing");
    const missing = await db.query("SELECT * FROM not_here").catch((e: unknown) => e);
    expect(isMissingTable(missing)).toBe(true);
    expect(isMissingTable(new Error('relation "schema_migrations" does not exist'))).toBe(true);
    expect(isMissingTable(new Error("no such table: schema_migrations"))).toBe(true);
    expect(isMissingTable(new Error("database is locked"))).toBe(false);
    // PostgreSQL words a missing column, schema, database or role alike: only undefined_table (42P01) is a table.
    const pg = (message: string, code: string) =>
      new ChainmailError("STORAGE_ERROR", `The database postgres://u@h/d failed: ${message}.`, {
        cause: Object.assign(new Error(message), { code }),
      });
    expect(isMissingTable(pg('relation "activity" does not exist', "42P01"))).toBe(true);
    expect(isMissingTable(pg('column "module" does not exist', "42703"))).toBe(false);
    expect(isMissingTable(pg('role "reader" does not exist', "28000"))).toBe(false);
    expect(isMissingTable(pg('database "index" does not exist', "3D000"))).toBe(false);
    expect(isMissingTable(new Error('column "module" does not exist'))).toBe(false);
    expect(isMissingTable("no such table")).toBe(false);
    expect(isMissingTable(undefined)).toBe(false);
  });
});
