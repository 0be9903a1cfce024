/**
 * src/db/sqlite-better.ts on its own: the better-sqlite3 adapter keeps the connection interface's contract
 * (sqlite-types.ts) over real files: `all` runs a statement that returns no rows instead of refusing it, `values`
 * gives arrays for that call only, `run` the rows changed, `$n` bound from an object keyed n, a file that must
 * exist is not created, `close` twice is safe, and `isBusy` is true exactly for SQLite's busy codes. Skipped where
 * better-sqlite3 cannot be loaded (test/db/sqlite-driver.test.ts says what the engine does then).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SqliteDriver } from "../../src/db/sqlite-types.js";
import { adapterContract } from "../support/sqlite-adapter.js";

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

describe.runIf(driver)("the better-sqlite3 adapter", () => {
  const sqlite = driver!;
  adapterContract(sqlite, dir);

  it("is named better-sqlite3", () => {
    expect(sqlite.name).toBe("better-sqlite3");
  });

  it("runs a statement that returns no rows through all() (better-sqlite3 refuses that; the adapter runs it)", () => {
    const db = sqlite.connect(join(dir, "all.sqlite"), { mustExist: false });
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)");
      expect(db.prepare("INSERT INTO t (id, name, n) VALUES ($1, $2, $3)").all({ 1: 1, 2: "a", 3: 10 })).toEqual([]);
      expect(db.prepare("SELECT id, name, n FROM t").all()).toEqual([{ id: 1, name: "a", n: 10 }]);
    } finally {
      db.close();
    }
  });

  it("reads busy from better-sqlite3's code, extended busy codes included and nothing else", () => {
    expect(sqlite.isBusy(Object.assign(new Error("x"), { code: "SQLITE_BUSY_SNAPSHOT" }))).toBe(true);
    expect(sqlite.isBusy(Object.assign(new Error("x"), { code: "SQLITE_LOCKED" }))).toBe(false);
    expect(sqlite.isBusy("SQLITE_BUSY")).toBe(false);
  });
});
