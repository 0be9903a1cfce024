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
import { adapterContract, thrown } from "../support/sqlite-adapter.js";

const nodeHasSqlite = process.getBuiltinModule?.("node:sqlite") !== undefined;
const driver = nodeSqlite();
const dir = mkdtempSync(join(tmpdir(), "chainmail-node-sqlite-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the node:sqlite adapter", () => {
  it("is there exactly where this Node has node:sqlite", () => {
    if (nodeHasSqlite) expect(driver?.name).toBe("node");
    else expect(driver).toBeUndefined();
  });
});

describe.runIf(driver)("the node:sqlite adapter's connections", () => {
  const sqlite = driver!;
  adapterContract(sqlite, dir);

  it("reads busy from SQLite's result code in errcode, extended codes by their low byte", () => {
    expect(sqlite.isBusy({ errcode: 5 })).toBe(true);
    expect(sqlite.isBusy({ errcode: 517 })).toBe(true); // SQLITE_BUSY_SNAPSHOT
    expect(sqlite.isBusy({ errcode: 6 })).toBe(false); // SQLITE_LOCKED
    expect(sqlite.isBusy({ errcode: 1 })).toBe(false);
    expect(sqlite.isBusy({ errcode: "5" })).toBe(false);
    expect(sqlite.isBusy(undefined)).toBe(false);
  });

  it("fails as SQLite would on a file that must exist and does not, and opens :memory: that must", () => {
    const absent = join(dir, "absent-too.sqlite");
    const err = thrown(() => sqlite.connect(absent, { mustExist: true })) as Error & { errcode?: number };
    expect(err.message).toBe("unable to open database file");
    expect(err.errcode).toBe(14);
    expect(existsSync(absent)).toBe(false);
    sqlite.connect(":memory:", { mustExist: true }).close();
  });
});
