/**
 * The database layer on its own (src/db): parameters and types, bulk inserts, transactions, errors, migrations and
 * the writer lock — on SQLite here, on PostgreSQL under `npm run test:services` (test/services/db.pg.test.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, displayTarget, identifier, isPostgresUrl, openDatabase } from "../../src/db/database.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";

let backend: IndexBackend;
const open: Database[] = [];

async function database(name: string): Promise<Database> {
  const db = await openDatabase(await backend.target(name));
  open.push(db);
  return db;
}

beforeAll(async () => {
  backend = await openBackend("db");
});

afterAll(async () => {
  await Promise.all(open.map((db) => db.close()));
  await backend?.close();
});

describe("statements", () => {
  it("take $n parameters and give integers as numbers, wide numbers as exact text", async () => {
    const db = await database("types");
    await db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, big TEXT, n BIGINT, flag INTEGER, note TEXT)");
    await db.run("INSERT INTO t (id, big, n, flag, note) VALUES ($1, $2, $3, $4, $5)", [
      1,
      (2n ** 200n).toString(),
      2 ** 53 - 1,
      1,
      null,
    ]);
    expect(await db.query("SELECT id, big, n, flag, note FROM t WHERE id = $1 AND id = $1", [1])).toEqual([
      { id: 1, big: (2n ** 200n).toString(), n: 2 ** 53 - 1, flag: 1, note: null },
    ]);
    expect(await db.run("UPDATE t SET note = $1 WHERE id > $2", ["x", 0])).toBe(1);
    expect(await db.query("SELECT count(*) AS c FROM t")).toEqual([{ c: 1 }]);
  });

  it("insert many rows at once, ignoring or updating existing keys", async () => {
    const db = await database("bulk");
    await db.exec("CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
    const rows = Array.from({ length: 12_001 }, (_, k) => ({ k, v: `v${k}` }));
    expect(await db.insertMany("kv", ["k", "v"], rows)).toBe(12_001);
    expect(
      await db.insertMany(
        "kv",
        ["k", "v"],
        [
          { k: 1, v: "again" },
          { k: 20_000, v: "new" },
        ],
        "ignore",
      ),
    ).toBe(1);
    expect(
      await db.insertMany("kv", ["k", "v"], [{ k: 2, v: "updated" }], { key: ["k"], update: ["v"] }),
    ).toBeGreaterThan(0);
    expect(await db.query("SELECT k, v FROM kv WHERE k IN (1, 2, 20000) ORDER BY k")).toEqual([
      { k: 1, v: "v1" },
      { k: 2, v: "updated" },
      { k: 20_000, v: "new" },
    ]);
    // No column to update keeps the stored row, on either engine.
    expect(await db.insertMany("kv", ["k", "v"], [{ k: 2, v: "kept?" }], { key: ["k"], update: [] })).toBe(0);
    expect(await db.query("SELECT v FROM kv WHERE k = 2")).toEqual([{ v: "updated" }]);
    expect(await db.insertMany("kv", ["k", "v"], [])).toBe(0);
    await expect(db.insertMany("kv; DROP TABLE kv", ["k"], [{ k: 1 }])).rejects.toThrow(/identifier/);
  });

  it("insert in bulk exactly what one statement a row inserts, duplicates within one call included", async () => {
    const db = await database("bulk-same");
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ k: fc.integer({ min: 0, max: 40 }), v: fc.string({ maxLength: 3 }) }), { maxLength: 120 }),
        fc.constantFrom<"ignore" | "update">("ignore", "update"),
        async (rows, mode) => {
          const bulk = `b${n}`;
          const single = `s${n++}`;
          for (const t of [bulk, single]) await db.exec(`CREATE TABLE ${t} (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`);
          const onConflict = mode === "ignore" ? ("ignore" as const) : { key: ["k"], update: ["v"] };
          const clause = mode === "ignore" ? "ON CONFLICT DO NOTHING" : "ON CONFLICT (k) DO UPDATE SET v = excluded.v";
          let changes = 0;
          for (const row of rows)
            changes += await db.run(`INSERT INTO ${single} (k, v) VALUES ($1, $2) ${clause}`, [row.k, row.v]);
          expect(await db.insertMany(bulk, ["k", "v"], rows, onConflict)).toBe(changes);
          const table = (t: string) => db.query(`SELECT k, v FROM ${t} ORDER BY k`);
          expect(await table(bulk)).toEqual(await table(single));
        },
      ),
      { numRuns: 60 },
    );
  });

  it("commit a transaction when its work resolves and roll it all back when it throws", async () => {
    const db = await database("tx");
    await db.exec("CREATE TABLE n (k INTEGER PRIMARY KEY)");
    expect(
      await db.transaction(async (tx) => {
        await tx.run("INSERT INTO n (k) VALUES ($1)", [1]);
        return tx.insertMany("n", ["k"], [{ k: 2 }, { k: 3 }]);
      }),
    ).toBe(2);
    await expect(
      db.transaction(async (tx) => {
        await tx.run("INSERT INTO n (k) VALUES ($1)", [4]);
        await tx.run("INSERT INTO n (k) VALUES ($1)", [1]); // duplicate key
      }),
    ).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
    expect(await db.query("SELECT k FROM n ORDER BY k")).toEqual([{ k: 1 }, { k: 2 }, { k: 3 }]);
    // Statements issued meanwhile from outside wait for the transaction instead of joining it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = db.transaction(async (t) => {
      await t.run("INSERT INTO n (k) VALUES (10)");
      await held;
      throw new Error("rolled back on purpose");
    });
    const outside = db.run("INSERT INTO n (k) VALUES (11)");
    release();
    await expect(tx).rejects.toThrow(/on purpose/);
    await outside;
    expect(await db.query("SELECT k FROM n WHERE k >= 10")).toEqual([{ k: 11 }]);
  });

  it("give rows as arrays in column order, the same values as objects, also in a transaction and after the table changes", async () => {
    const db = await database("values");
    await db.exec("CREATE TABLE v (id INTEGER PRIMARY KEY, n BIGINT, note TEXT)");
    await db.run("INSERT INTO v (id, n, note) VALUES (1, $1, 'a'), (2, 7, NULL)", [2 ** 53 - 1]);
    const sql = "SELECT note, n, id FROM v WHERE id >= $1 ORDER BY id";
    for (let i = 0; i < 3; i++) {
      expect(await db.queryValues(sql, [1])).toEqual([
        ["a", 2 ** 53 - 1, 1],
        [null, 7, 2],
      ]);
    }
    expect(await db.transaction((tx) => tx.queryValues(sql, [2]))).toEqual([[null, 7, 2]]);
    expect(await db.queryValues("SELECT id FROM v WHERE id > $1", [5])).toEqual([]);
    // A statement the server forgot (as behind a pooler) still answers.
    if (db.engine === "postgres") {
      await db.exec("DEALLOCATE ALL");
      expect(await db.queryValues("SELECT id FROM v WHERE id > $1", [1])).toEqual([[2]]);
    }
    // A statement prepared before the table changed shape still answers, with the new column type.
    await db.exec("ALTER TABLE v ADD COLUMN extra TEXT");
    if (db.engine === "postgres") await db.exec("ALTER TABLE v ALTER COLUMN note TYPE INTEGER USING length(note)");
    else await db.exec("UPDATE v SET note = length(note)");
    for (let i = 0; i < 2; i++) {
      expect(await db.queryValues(sql, [1])).toEqual([
        [db.engine === "postgres" ? 1 : "1", 2 ** 53 - 1, 1],
        [null, 7, 2],
      ]);
    }
  });

  it("report a failure as storage_error naming the database", async () => {
    const db = await database("errors");
    const failure = db.query("SELECT * FROM no_such_table");
    await expect(failure).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringContaining(displayTarget(db.target)) }),
    );
  });
});

describe("migrations", () => {
  /** A module's migration folder with the same SQL for both engines. */
  function folder(name: string, files: Record<string, string>): URL {
    const dir = join(backend.dir, name);
    for (const engine of ["sqlite", "postgres"]) {
      mkdirSync(join(dir, engine), { recursive: true });
      for (const [file, sql] of Object.entries(files)) writeFileSync(join(dir, engine, file), sql);
    }
    return pathToFileURL(`${dir}/`);
  }

  it("apply numbered files once, in order, and record them per module", async () => {
    const db = await database("migrations");
    const v1 = folder("v1", { "0001_notes.sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);" });
    expect(await db.migrate("notes", v1)).toBe(1);
    expect(await db.migrate("notes", v1)).toBe(0);
    const v3 = folder("v3", {
      "0001_notes.sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
      "0002_tag.sql": "ALTER TABLE notes ADD COLUMN tag TEXT;",
      "0003_seed.sql": "INSERT INTO notes (id, body, tag) VALUES (1, 'hello', 'x');",
    });
    expect(await db.migrate("notes", v3)).toBe(2);
    expect(await db.query("SELECT id, body, tag FROM notes")).toEqual([{ id: 1, body: "hello", tag: "x" }]);
    expect(await db.query("SELECT module, version, name FROM schema_migrations ORDER BY version")).toEqual([
      { module: "notes", version: 1, name: "notes" },
      { module: "notes", version: 2, name: "tag" },
      { module: "notes", version: 3, name: "seed" },
    ]);
    // An older chainmail (knowing fewer migrations) refuses the newer database instead of misreading it.
    await expect(db.migrate("notes", v1)).rejects.toThrow(
      /notes schema version 3, newer than this chainmail knows \(1\)/,
    );
  });

  it("apply nothing of a batch when one file fails", async () => {
    const db = await database("failing");
    await db.migrate("other", folder("other", { "0001_x.sql": "CREATE TABLE x (id INTEGER PRIMARY KEY);" }));
    const broken = folder("broken", {
      "0001_a.sql": "CREATE TABLE a (id INTEGER PRIMARY KEY);",
      "0002_b.sql": "CREATE TABLE b (id INTEGER PRIMARY KEY, nonsense NOT A TYPE (;",
    });
    await expect(db.migrate("broken", broken)).rejects.toThrow(expect.objectContaining({ code: "storage_error" }));
    await expect(db.query("SELECT * FROM a")).rejects.toThrow();
    expect(await db.query("SELECT count(*) AS c FROM schema_migrations WHERE module = 'broken'")).toEqual([{ c: 0 }]);
  });

  it("are applied once when several processes open the database at the same time", async () => {
    const target = await backend.target("concurrent");
    const dbs = await Promise.all([openDatabase(target), openDatabase(target), openDatabase(target)]);
    open.push(...dbs);
    const dir = folder("concurrent", {
      "0001_c.sql": "CREATE TABLE c (id INTEGER PRIMARY KEY);",
      "0002_c.sql": "INSERT INTO c (id) VALUES (1);",
    });
    const applied = await Promise.all(dbs.map((db) => db.migrate("c", dir)));
    expect(applied.sort()).toEqual([0, 0, 2]);
    expect(await dbs[0]!.query("SELECT id FROM c")).toEqual([{ id: 1 }]);
  });

  it("refuse a file name that is not NNNN_name.sql, and a gap in the numbers", async () => {
    const db = await database("bad-names");
    await expect(db.migrate("bad", folder("bad", { "1_first.sql": "SELECT 1;" }))).rejects.toThrow(/NNNN_/);
    await expect(db.migrate("gap", folder("gap", { "0002_second.sql": "SELECT 1;" }))).rejects.toThrow(
      /versions must run 1, 2, 3/,
    );
  });
});

describe("the writer lock", () => {
  it("lets one holder in at a time; the next waits and gets it when released", async () => {
    const target = await backend.target("lock");
    const [a, b] = [await openDatabase(target), await openDatabase(target)];
    open.push(a, b);
    const first = await a.lockWriter("index");
    let waited = 0;
    let second: Awaited<ReturnType<Database["lockWriter"]>> | undefined;
    const waiting = b.lockWriter("index", { pollMs: 20, onWait: () => waited++ }).then((lock) => {
      second = lock;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(waited).toBe(1);
    expect(second).toBeUndefined();
    // Another name is another lock.
    const c = await openDatabase(target);
    open.push(c);
    await (await c.lockWriter("other")).release();
    await first.release();
    await waiting;
    expect(second).toBeDefined();
    // Waiting stops when its signal aborts.
    const stop = new AbortController();
    const third = a.lockWriter("index", { pollMs: 20, signal: stop.signal });
    stop.abort();
    await expect(third).rejects.toThrow(/abort/i);
    await second!.release();
    await (await a.lockWriter("index")).release();
  });
});

describe("hostile values (property-based)", () => {
  it("any text, integer or 78-digit number goes in as a parameter and comes back exactly", async () => {
    const db = await database("props");
    const numeric = db.engine === "postgres" ? "NUMERIC(78, 0)" : "TEXT";
    await db.exec(`CREATE TABLE p (k INTEGER PRIMARY KEY, s TEXT, n BIGINT, big ${numeric})`);
    let k = 0;
    // Text without NUL: PostgreSQL text cannot hold it (chainmail never stores one: addresses, hashes, decimals).
    const text = fc.string({ unit: "grapheme", maxLength: 200 }).filter((t) => !t.includes("\u0000"));
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            s: fc.oneof(text, fc.constant(null)),
            n: fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
            big: fc.bigInt({ min: 0n, max: 10n ** 78n - 1n }),
          }),
          { minLength: 1, maxLength: 20 },
        ),
        async (rows) => {
          const first = k;
          const keyed = rows.map((r) => ({ k: k++, s: r.s, n: r.n, big: r.big.toString() }));
          expect(await db.insertMany("p", ["k", "s", "n", "big"], keyed)).toBe(rows.length);
          const back = await db.query("SELECT k, s, n, big FROM p WHERE k >= $1 ORDER BY k", [first]);
          expect(back).toEqual(keyed);
          // As arrays (a named prepared statement on PostgreSQL, run again every time): the same values.
          expect(await db.queryValues("SELECT k, s, n, big FROM p WHERE k >= $1 ORDER BY k", [first])).toEqual(
            keyed.map((r) => [r.k, r.s, r.n, r.big]),
          );
          // The same values as parameters of a single statement find exactly their row.
          const one = keyed[0]!;
          expect(
            await db.query("SELECT k FROM p WHERE s IS NOT DISTINCT FROM $1 AND n = $2 AND big = $3 AND k = $4", [
              one.s,
              one.n,
              one.big,
              one.k,
            ]),
          ).toEqual([{ k: one.k }]);
        },
      ),
      { numRuns: 60, seed: 11 },
    );
  });

  it("only plain identifiers reach SQL as table or column names", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (name) => {
        const plain = /^[a-z_][a-z0-9_]{0,62}$/.test(name);
        if (plain) expect(identifier(name)).toBe(name);
        else expect(() => identifier(name)).toThrow(/not a plain SQL identifier/);
      }),
      { numRuns: 2000, seed: 11 },
    );
  });

  it("a database URL is shown without its password or query, whatever they hold", () => {
    const secret = fc.string({ minLength: 3, maxLength: 40 }).filter((t) => /[a-z0-9]/i.test(t));
    fc.assert(
      fc.property(secret, secret, fc.constantFrom("postgres", "postgresql", "POSTGRES"), (password, option, scheme) => {
        const url = `${scheme}://chainmail:${encodeURIComponent(password)}@db.internal:5432/index?sslkey=${encodeURIComponent(option)}`;
        expect(isPostgresUrl(url)).toBe(true);
        const shown = displayTarget(url);
        expect(shown).not.toContain(encodeURIComponent(password));
        expect(shown).not.toContain(encodeURIComponent(option));
        expect(shown).toMatch(/^postgres(ql)?:\/\/chainmail:\*\*\*@db\.internal:5432\/index$/i);
      }),
      { numRuns: 500, seed: 11 },
    );
    expect(displayTarget("./data/index.sqlite")).toBe("./data/index.sqlite");
    expect(isPostgresUrl("./postgres://not-a-url")).toBe(false);
  });
});
