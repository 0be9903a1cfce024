/**
 * The SQLite connection interface's contract (src/db/sqlite-types.ts), the same for every adapter: the node:sqlite
 * one and the better-sqlite3 one each run it over real files (test/db/sqlite-node.test.ts, sqlite-better.test.ts),
 * beside what is their own.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import type { SqliteDriver } from "../../src/db/sqlite-types.js";

/** What a failing call threw. */
export const thrown = (work: () => unknown): unknown => {
  try {
    work();
  } catch (err) {
    return err;
  }
  throw new Error("it did not throw");
};

/** The contract's tests, on files under `dir`. */
export function adapterContract(sqlite: SqliteDriver, dir: string): void {
  it("creates a file unless it must exist, and closes twice safely", () => {
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

  it("runs statements: $n bound from an object, run() counts, values() gives arrays for that call only", () => {
    const db = sqlite.connect(join(dir, "statements.sqlite"), { mustExist: false });
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER); CREATE TABLE u (x INTEGER)");
      expect(db.prepare("INSERT INTO t (id, name, n) VALUES ($1, $2, $3)").run({ 1: 1, 2: "a", 3: 10 })).toBe(1);
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
      expect(db.prepare("DELETE FROM t WHERE id > 100").all()).toEqual([]);
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
      expect(sqlite.isBusy(thrown(() => other.exec("BEGIN IMMEDIATE")))).toBe(true);
      expect(sqlite.isBusy(thrown(() => other.prepare("SELECT * FROM nowhere")))).toBe(false);
      expect(sqlite.isBusy(thrown(() => other.exec("NOT SQL")))).toBe(false);
      expect(sqlite.isBusy(undefined)).toBe(false);
    } finally {
      writer.close();
      other.close();
    }
  });
}
