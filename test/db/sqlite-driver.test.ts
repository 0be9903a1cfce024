/**
 * Which SQLite library the engine runs on (src/db/sqlite-driver.ts): node:sqlite where this Node has it, else
 * better-sqlite3; `CHAINMAIL_SQLITE_DRIVER` picks one, and a choice that cannot be honoured says what to do.
 * The engine's behaviour itself is test/db/database.test.ts, on whichever driver the Node running it uses (CI runs it on
 * Node 20: better-sqlite3, and on Node 22.13, 24 and 26: node:sqlite).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { loadSqliteDriver, sqliteDriver } from "../../src/db/sqlite-driver.js";
import { thrown } from "../support/sqlite-adapter.js";

const nodeHasSqlite = process.getBuiltinModule?.("node:sqlite") !== undefined;
const dir = mkdtempSync(join(tmpdir(), "chainmail-drivers-"));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(env: Record<string, string>): Promise<ChainmailError> {
  const err = await sqliteDriver(env).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ChainmailError);
  return err as ChainmailError;
}

describe("the SQLite driver", () => {
  it("is node:sqlite where this Node has it, else better-sqlite3", async () => {
    expect((await sqliteDriver({})).name).toBe(nodeHasSqlite ? "node" : "better-sqlite3");
  });

  it("is the one CHAINMAIL_SQLITE_DRIVER names, or a storage_error saying what to install", async () => {
    if (nodeHasSqlite) {
      expect((await sqliteDriver({ CHAINMAIL_SQLITE_DRIVER: "node" })).name).toBe("node");
    } else {
      const err = await refusal({ CHAINMAIL_SQLITE_DRIVER: "node" });
      expect(err.code).toBe("storage_error");
      expect(err.message).toContain(`Node ${process.version} has no node:sqlite (22.13 and later have it)`);
      expect(err.message).toContain("npm install better-sqlite3@^12");
    }
    const better = await loadSqliteDriver("better-sqlite3");
    if (better) expect((await sqliteDriver({ CHAINMAIL_SQLITE_DRIVER: "better-sqlite3" })).name).toBe(better.name);
    else expect((await refusal({ CHAINMAIL_SQLITE_DRIVER: "better-sqlite3" })).message).toMatch(/better-sqlite3/);
  });

  it("refuses any other CHAINMAIL_SQLITE_DRIVER as every setting is, naming it and the two values", async () => {
    for (const value of ["sqlite3", "NODE", "node:sqlite", "x".repeat(200)]) {
      const err = await refusal({ CHAINMAIL_SQLITE_DRIVER: value });
      expect(err.code).toBe("invalid_input");
      expect(err.message).toContain(`Setting CHAINMAIL_SQLITE_DRIVER=${JSON.stringify(value)} is invalid`);
      expect(err.message).toContain("must be one of node, better-sqlite3");
    }
  });

  it("tells a busy database from other failures", async () => {
    const driver = await sqliteDriver();
    const path = join(dir, "busy.sqlite");
    const writer = driver.connect(path, { mustExist: false });
    const other = driver.connect(path, { mustExist: false });
    try {
      writer.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); BEGIN IMMEDIATE");
      other.exec("PRAGMA busy_timeout = 0");
      expect(driver.isBusy(thrown(() => other.exec("BEGIN IMMEDIATE")))).toBe(true);
      const missing = thrown(() => other.prepare("SELECT * FROM nowhere").all());
      expect(missing).toBeInstanceOf(Error);
      expect(driver.isBusy(missing)).toBe(false);
    } finally {
      writer.close();
      other.close();
      other.close();
    }
    expect(writer.open).toBe(false);
  });

  it("opens only an existing file when told it must exist", async () => {
    const driver = await sqliteDriver();
    expect(() => driver.connect(join(dir, "absent.sqlite"), { mustExist: true })).toThrow(
      /unable to open database file/,
    );
  });

  it("prints no warning of its own when loaded (Node 22 calls node:sqlite experimental), and keeps others", async () => {
    const script = `
      const { openDatabase } = await import(${JSON.stringify(new URL("../../src/db/database.ts", import.meta.url).href)});
      const db = await openDatabase(${JSON.stringify(join(dir, "quiet.sqlite"))});
      await db.exec("CREATE TABLE IF NOT EXISTS t (x INTEGER)");
      await db.close();
      process.emitWarning("another experiment", "ExperimentalWarning");`;
    const stderr = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ["--import", "tsx", "--input-type=module", "-e", script],
        { env: { PATH: process.env.PATH ?? "" } },
        (error, _stdout, err) => (error ? reject(error) : resolve(err)),
      ),
    );
    expect(stderr).toContain("ExperimentalWarning: another experiment");
    expect(stderr).not.toMatch(/SQLite/);
  });
});
