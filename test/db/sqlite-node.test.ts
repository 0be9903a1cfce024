/**
 * src/db/sqlite-node.ts on its own: the `node:sqlite` adapter is there exactly where this Node has the module, and
 * keeps the connection interface's contract (sqlite-types.ts) over real files: `values` gives arrays for that
 * call only, `run` the rows changed, `$n` bound from an object keyed n, a file that must exist is not created (an
 * error like SQLite's own), `close` twice is safe, and `isBusy` reads SQLite's result code, extended codes
 * included. CI runs the contract on the Nodes that have node:sqlite (22.13 and later); on Node 20 only its absence.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeSqlite } from "../../src/db/sqlite-node.js";

const nodeHasSqlite = process.getBuiltinModule?.("node:sqlite") !== undefined;
const driver = nodeSqlite();
const dir = mkdtempSync(join(tmpdir(), "chainmail-node-sqlite-"));
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

describe("the node:sqlite adapter", () => {
  it("is there exactly where this Node has node:sqlite", () => {
    if (nodeHasSqlite) expect(driver?.name).toBe("node");
    else expect(driver).toBeUndefined();
  });
});

describe.runIf(driver)("the node:sqlite adapter's connections", () => {
  const sqlite = driver!;

  it("reads busy from SQLite's result code in errcode, extended codes by their low byte", () => {
    expect(sqlite.isBusy({ errcode: 5 })).toBe(true);
    expect(sqlite.isBusy({ errcode: 517 })).toBe(true); // SQLITE_BUSY_SNAPSHOT
    expect(sqlite.isBusy({ errcode: 6 })).toBe(false); // SQLITE_LOCKED
    expect(sqlite.isBusy({ errcode: 1 })).toBe(false);
    expect(sqlite.isBusy({ errcode: "5" })).toBe(false);
    expect(sqlite.isBusy(undefined)).toBe(false);
  });

  it("creates a file unless it must exist, failing then as SQLite would", () => {
    const absent = join(dir, "absent.sqlite");
    const err = thrown(() => sqlite.connect(absent, { mustExist: true })) as Error & { errcode?: number };
    expect(err.message).toBe("unable to open database file");
    expect(err.errcode).toBe(14);
    expect(existsSync(absent)).toBe(false);
    const made = sqlite.connect(join(dir, "made.sqlite"), { mustExist: false });
    expect(made.open).toBe(true);
    made.close();
    made.close();
    expect(made.open).toBe(false);
    sqlite.connect(join(dir, "made.sqlite"), { mustExist: true }).close();
    sqlite.connect(":memory:", { mustExist: true }).close();
  });

  it("runs statements: values() gives arrays for that call only, run() counts the rows changed", () => {
    const db = sqlite.connect(join(dir, "statements.sqlite"), { mustExist: false });
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)");
      expect(db.prepare("INSERT INTO t (id, name, n) VALUES ($1, $2, $3)").run({ 1: 1, 2: "a", 3: 10 })).toBe(1);
      const insert = db.prepare("INSERT INTO t (id, name, n) VALUES (?, ?, ?)");
      expect(insert.run(2, "b", 20)).toBe(1);
      expect(insert.run(3, null, 30)).toBe(1);
      expect(db.prepare("UPDATE t SET n = n + 1 WHERE id >= $1").run({ 1: 2 })).toBe(2);
      const select = db.prepare("SELECT n, name, id FROM t WHERE id >= $1 ORDER BY id");
      expect(select.values({ 1: 2 })).toEqual([
        [21, "b", 2],
        [31, null, 3],
      ]);
      expect(select.all({ 1: 3 })).toEqual([{ n: 31, name: null, id: 3 }]);
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
    } finally {
      writer.close();
      other.close();
    }
  });
});
