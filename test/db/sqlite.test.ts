/**
 * src/db/sqlite.ts on its own, over real SQLite files: `openSqlite` makes the file (and its directory) in WAL mode
 * for a writer, and for a reader opens only an existing file, left in the mode it was in; a file that is not a
 * database is a storage_error. Two connections to one file wait for each other's write transaction instead of
 * failing (`whenFree`), values are bound as SQLite takes them, `insertMany` groups rows by what a statement may
 * hold, a failed transaction leaves none open, and the writer lock is a side file's write transaction. The
 * behaviour both engines share is test/db/database.test.ts.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Database } from "../../src/db/sql.js";
import { openSqlite } from "../../src/db/sqlite.js";
import { deferred } from "../support/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-sqlite-"));
const open: Database[] = [];

afterAll(async () => {
  await Promise.all(open.map((db) => db.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function sqlite(name: string, options?: { create?: boolean }): Promise<Database> {
  const db = await openSqlite(join(dir, name), options);
  open.push(db);
  return db;
}

const journalMode = async (db: Database) =>
  ((await db.query<{ journal_mode: string }>("PRAGMA journal_mode"))[0]?.journal_mode ?? "").toLowerCase();

describe("openSqlite", () => {
  it("makes a writer's file and its directories, in WAL mode", async () => {
    const db = await sqlite("deep/er/index.sqlite");
    expect(existsSync(join(dir, "deep/er/index.sqlite"))).toBe(true);
    expect(await journalMode(db)).toBe("wal");
    expect([db.engine, db.target]).toEqual(["sqlite", join(dir, "deep/er/index.sqlite")]);
  });

  it("opens only an existing file for a reader, making nothing, leaving its journal mode as it was", async () => {
    const absent = join(dir, "nowhere/index.sqlite");
    await expect(openSqlite(absent, { create: false })).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringContaining("could not be opened") }),
    );
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
    // A file some other program made, in SQLite's default rollback journal.
    const made = await sqlite("plain.sqlite");
    await made.exec("PRAGMA journal_mode = DELETE; CREATE TABLE t (x INTEGER)");
    const reader = await sqlite("plain.sqlite", { create: false });
    expect(await journalMode(reader)).toBe("delete");
    expect(await reader.query("SELECT count(*) AS c FROM t")).toEqual([{ c: 0 }]);
  });

  it("refuses a file that is not a database as storage_error naming it", async () => {
    const path = join(dir, "not-a-database.sqlite");
    writeFileSync(path, "this is a text file, long enough to fill SQLite's header and more: ".repeat(20));
    const err = await openSqlite(path).then(
      async (db) => {
        open.push(db);
        return db.query("SELECT 1 FROM sqlite_master").catch((e: unknown) => e);
      },
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: "storage_error", message: expect.stringContaining(path) });
  });
});

describe("statements", () => {
  it("bind undefined as NULL and booleans as 1 and 0", async () => {
    const db = await sqlite("bind.sqlite");
    await db.exec("CREATE TABLE b (k INTEGER PRIMARY KEY, flag INTEGER, note TEXT)");
    await db.run("INSERT INTO b (k, flag, note) VALUES ($1, $2, $3)", [1, true, undefined]);
    await db.insertMany("b", ["k", "flag", "note"], [{ k: 2, flag: false }]);
    expect(await db.query("SELECT k, flag, note FROM b ORDER BY k")).toEqual([
      { k: 1, flag: 1, note: null },
      { k: 2, flag: 0, note: null },
    ]);
    expect(await db.query("SELECT k FROM b WHERE flag = $1", [false])).toEqual([{ k: 2 }]);
  });

  it("keep answering past the statement cache (more distinct statements than it holds)", async () => {
    const db = await sqlite("cache.sqlite");
    await db.exec("CREATE TABLE c (k INTEGER PRIMARY KEY)");
    for (let i = 0; i < 1_100; i++) await db.run(`INSERT INTO c (k) VALUES (${i})`);
    expect(await db.query("SELECT count(*) AS n FROM c")).toEqual([{ n: 1_100 }]);
    expect(await db.query("SELECT k FROM c WHERE k = $1", [7])).toEqual([{ k: 7 }]);
  });

  it("insertMany: every row of a table too wide for many rows a statement, and of a narrow one across slices", async () => {
    const db = await sqlite("wide.sqlite");
    // 400 columns: two rows would pass SQLite's 999 parameters, so one row a statement.
    const columns = Array.from({ length: 400 }, (_, i) => `c${i}`);
    await db.exec(`CREATE TABLE w (${columns.map((c) => `${c} INTEGER`).join(", ")})`);
    const rows = Array.from({ length: 7 }, (_, r) => Object.fromEntries(columns.map((c, i) => [c, r * 1_000 + i])));
    expect(await db.insertMany("w", columns, rows)).toBe(7);
    expect(await db.query("SELECT count(*) AS n, sum(c399) AS s FROM w")).toEqual([
      { n: 7, s: 7 * 399 + 1_000 * (0 + 1 + 2 + 3 + 4 + 5 + 6) },
    ]);
    // 3 columns: 25 rows a statement, 1 000 rows a slice; 2 531 rows end in a part group.
    await db.exec("CREATE TABLE n (k INTEGER PRIMARY KEY, a TEXT, b INTEGER)");
    const narrow = Array.from({ length: 2_531 }, (_, k) => ({ k, a: `a${k}`, b: k * 2 }));
    expect(await db.insertMany("n", ["k", "a", "b"], narrow)).toBe(2_531);
    expect(await db.query("SELECT k, a, b FROM n ORDER BY k")).toEqual(narrow);
  });
});

describe("two connections to one file", () => {
  it("wait for each other's write transaction instead of failing busy", async () => {
    const path = "shared.sqlite";
    const [a, b] = [await sqlite(path), await sqlite(path)];
    await a.exec("CREATE TABLE s (k INTEGER PRIMARY KEY, who TEXT)");
    const hold = deferred<void>();
    const inTransaction = deferred<void>();
    const first = a.transaction(async (tx) => {
      await tx.run("INSERT INTO s (k, who) VALUES (1, 'a')");
      inTransaction.resolve();
      await hold.promise;
      await tx.run("INSERT INTO s (k, who) VALUES (2, 'a')");
    });
    await inTransaction.promise;
    let written = false;
    const second = b.run("INSERT INTO s (k, who) VALUES (3, 'b')").then((n) => {
      written = true;
      return n;
    });
    // b is held off while a's transaction is open (it would fail at once without the wait)...
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toBe(false);
    // ... and gets in when a commits.
    hold.resolve();
    await first;
    expect(await second).toBe(1);
    expect(await b.query("SELECT k, who FROM s ORDER BY k")).toEqual([
      { k: 1, who: "a" },
      { k: 2, who: "a" },
      { k: 3, who: "b" },
    ]);
  });

  it("a transaction that failed leaves none open: the file is free for the other connection", async () => {
    const path = "rolled.sqlite";
    const [a, b] = [await sqlite(path), await sqlite(path)];
    await a.exec("CREATE TABLE r (k INTEGER PRIMARY KEY)");
    await expect(
      a.transaction(async (tx) => {
        await tx.run("INSERT INTO r (k) VALUES (1)");
        await tx.run("INSERT INTO r (k) VALUES (1)");
      }),
    ).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
    expect(await b.run("INSERT INTO r (k) VALUES (2)")).toBe(1);
    expect(await a.transaction((tx) => tx.query("SELECT k FROM r"))).toEqual([{ k: 2 }]);
  });
});

describe("lockWriter", () => {
  it("holds a write transaction on `<file>-<name>.lock`, another connection waiting until it is released", async () => {
    const path = "locked.sqlite";
    const [a, b] = [await sqlite(path), await sqlite(path)];
    const lock = await a.lockWriter("index");
    expect(existsSync(join(dir, "locked.sqlite-index.lock"))).toBe(true);
    let waits = 0;
    const next = b.lockWriter("index", { pollMs: 10, onWait: () => waits++ });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(waits).toBe(1);
    await lock.release();
    await (await next).release();
    await expect(a.lockWriter("Not A Name")).rejects.toThrow(/not a plain SQL identifier/);
  });

  it("is no lock at all for an in-memory database", async () => {
    const db = await openSqlite(":memory:");
    open.push(db);
    const first = await db.lockWriter("index");
    const second = await db.lockWriter("index");
    await first.release();
    await second.release();
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });
});
