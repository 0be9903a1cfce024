/**
 * src/db/sqlite-better.ts on its own: the better-sqlite3 adapter keeps the connection interface's contract
 * (sqlite-types.ts) over real files: `all` runs a statement that returns no rows instead of refusing it, `values`
 * gives arrays for that call only, `run` the rows changed, `$n` bound from an object keyed n, a file that must
 * exist is not created, `close` twice is safe, and `isBusy` is true exactly for SQLite's busy codes. Skipped where
 * better-sqlite3 cannot be loaded (test/db/sqlite-driver.test.ts says what the engine does then).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SqliteDriver } from "../../src/db/sqlite-types.js";

/** The adapter, where better-sqlite3 loads here: its native part (built for one Node) loads at the first connection. */
const driver: SqliteDriver | undefined = await import("../../src/db/sqlite-better.js").then(
  (m) => {
    const adapter = m.betterSqlite3();
    try {
      adapter.connect(":memory:", { mustExist: false }).close();
      return adapter;
    } catch {
      return undefined;
    }
  },
  () => undefined,
);
const dir = mkdtempSync(join(tmpdir(), "chainmail-better-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a failing call threw. */
const thrown = (work: () => unknown): unknown => {
  try {
    work();
  } catch (err) {
    return err;
  }
  throw new Error("it did not throw");
};

describe.runIf(driver)("the better-sqlite3 adapter", () => {
  const sqlite = driver!;

  it("is named better-sqlite3, creates a file unless it must exist", () => {
    expect(sqlite.name).toBe("better-sqlite3");
    const absent = join(dir, "absent.sqlite");
    expect(thrown(() => sqlite.connect(absent, { mustExist: true }))).toBeInstanceOf(Error);
    expect(existsSync(absent)).toBe(false);
    const made = sqlite.connect(join(dir, "made.sqlite"), { mustExist: false });
    expect(made.open).toBe(true);
    made.close();
    made.close();
    expect(made.open).toBe(false);
    expect(existsSync(join(dir, "made.sqlite"))).toBe(true);
    sqlite.connect(join(dir, "made.sqlite"), { mustExist: true }).close();
  });

  it("runs statements: all() of one without rows runs it, values() gives arrays for that call only, run() counts", () => {
    const db = sqlite.connect(join(dir, "statements.sqlite"), { mustExist: false });
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER); CREATE TABLE u (x INTEGER)");
      // An INSERT through all(): better-sqlite3 refuses all() on it; the adapter runs it and gives no rows.
      expect(db.prepare("INSERT INTO t (id, name, n) VALUES ($1, $2, $3)").all({ 1: 1, 2: "a", 3: 10 })).toEqual([]);
      const insert = db.prepare("INSERT INTO t (id, name, n) VALUES (?, ?, ?)");
      expect(insert.run(2, "b", 20)).toBe(1);
      expect(insert.run(3, null, 30)).toBe(1);
      expect(db.prepare("UPDATE t SET n = n + 1 WHERE id >= $1").run({ 1: 2 })).toBe(2);
      expect(db.prepare("DELETE FROM u").run()).toBe(0);
      const select = db.prepare("SELECT n, name, id FROM t WHERE id >= $1 ORDER BY id");
      expect(select.values({ 1: 2 })).toEqual([
        [21, "b", 2],
        [31, null, 3],
      ]);
      // The same statement gives objects again afterwards.
      expect(select.all({ 1: 3 })).toEqual([{ n: 31, name: null, id: 3 }]);
      expect(select.values({ 1: 9 })).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("tells a busy database (another connection's write lock) from any other failure", () => {
    const path = join(dir, "busy.sqlite");
    const writer = sqlite.connect(path, { mustExist: false });
    const other = sqlite.connect(path, { mustExist: false });
    try {
      writer.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE");
      other.exec("PRAGMA busy_timeout = 0");
      const busy = thrown(() => other.exec("BEGIN IMMEDIATE"));
      expect(sqlite.isBusy(busy)).toBe(true);
      expect(sqlite.isBusy(thrown(() => other.prepare("SELECT * FROM nowhere")))).toBe(false);
      expect(sqlite.isBusy(thrown(() => other.exec("NOT SQL")))).toBe(false);
      // Extended busy codes are busy too; nothing else is.
      expect(sqlite.isBusy(Object.assign(new Error("x"), { code: "SQLITE_BUSY_SNAPSHOT" }))).toBe(true);
      expect(sqlite.isBusy(Object.assign(new Error("x"), { code: "SQLITE_LOCKED" }))).toBe(false);
      expect(sqlite.isBusy(undefined)).toBe(false);
      expect(sqlite.isBusy("SQLITE_BUSY")).toBe(false);
    } finally {
      writer.close();
      other.close();
    }
  });
});
