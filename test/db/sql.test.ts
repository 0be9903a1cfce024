/**
 * src/db/sql.ts on its own: target detection and display, storage_error, identifiers, the conflict clause, Serial.
 * test/db/database.test.ts covers them through both engines (insertMany, failures, migrations).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { conflictClause, displayTarget, identifier, isPostgresUrl, Serial, storageError } from "../../src/db/sql.js";
import { deferred } from "../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 37);

describe("isPostgresUrl", () => {
  it.each([
    ["postgres://h/db", true],
    ["postgresql://u:p@h:5432/db", true],
    ["POSTGRES://h/db", true],
    ["PostgreSQL://h/db", true],
    ["postgres:/h/db", false],
    ["postgresx://h/db", false],
    [" postgres://h/db", false],
    ["./postgres://h/db", false],
    ["data/index.sqlite", false],
    ["", false],
  ])("%j → %s", (target, expected) => {
    expect(isPostgresUrl(target)).toBe(expected);
  });
});

describe("displayTarget", () => {
  it("leaves an SQLite path as it is, whatever it holds", () => {
    for (const path of ["./data/index.sqlite", "/tmp/a b?.db", ":memory:", "file:x.db?mode=ro"]) {
      expect(displayTarget(path)).toBe(path);
    }
  });

  it("hides a PostgreSQL URL's password and drops its query string", () => {
    expect(displayTarget("postgres://app:s3cret@db.example:5432/index?sslmode=require&password=other")).toBe(
      "postgres://app:***@db.example:5432/index",
    );
    expect(displayTarget("postgresql://app@db/index")).toBe("postgresql://app@db/index");
    expect(displayTarget("postgres://db/index?password=x")).toBe("postgres://db/index");
  });

  it("says so, without any of it, when the URL cannot be parsed", () => {
    const shown = displayTarget("postgres://app:s3cret@db:99999/index");
    expect(shown).toBe("(a PostgreSQL URL that cannot be parsed)");
  });

  it("never shows the password or the query of any URL (property)", () => {
    const secret = fc.string({ minLength: 4, maxLength: 30 }).map((s) => `S${s}`);
    fc.assert(
      fc.property(secret, secret, (password, query) => {
        const url = `postgres://user:${encodeURIComponent(password)}@host:5432/db?k=${encodeURIComponent(query)}`;
        const shown = displayTarget(url);
        expect(shown).not.toContain(encodeURIComponent(password));
        expect(shown).not.toContain(encodeURIComponent(query));
        expect(shown).toBe("postgres://user:***@host:5432/db");
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("storageError", () => {
  it("passes a ChainmailError through as it is", () => {
    const original = new ChainmailError("INVALID_INPUT", "bad");
    expect(storageError("x.db", original)).toBe(original);
  });

  it("wraps any other failure as storage_error naming the shown target and the reason", () => {
    const cause = new Error("disk I/O error");
    const err = storageError("postgres://u:pw@h/db?x=1", cause, "could not be opened");
    expect(err).toBeInstanceOf(ChainmailError);
    expect(err.code).toBe("storage_error");
    expect(err.retryable).toBe(true);
    expect(err.shortMessage).toBe("The database postgres://u:***@h/db could not be opened: disk I/O error.");
    expect(err.message).not.toContain("pw");
    expect(err.hint).toMatch(/INDEX_DB/);
    expect(err.cause).toBe(cause);
  });

  it("says `failed` by default and takes a thrown non-Error as its text", () => {
    expect(storageError("a.db", "locked").shortMessage).toBe("The database a.db failed: locked.");
    expect(storageError("a.db", 42).shortMessage).toBe("The database a.db failed: 42.");
  });
});

describe("identifier", () => {
  it("accepts plain lower-case identifiers up to 63 characters", () => {
    for (const name of ["a", "_", "kv", "block_number", "t2", `a${"b".repeat(62)}`]) {
      expect(identifier(name)).toBe(name);
    }
  });

  it.each(["", "Kv", "2t", "a-b", "a b", "kv; DROP TABLE kv", '"kv"', "kv\n", "é", `a${"b".repeat(63)}`])(
    "refuses %j, quoting it",
    (name) => {
      expect(() => identifier(name)).toThrow(`not a plain SQL identifier: ${JSON.stringify(name)}`);
    },
  );
});

describe("conflictClause", () => {
  it("is empty without a policy, DO NOTHING for ignore", () => {
    expect(conflictClause(undefined)).toBe("");
    expect(conflictClause("ignore")).toBe(" ON CONFLICT DO NOTHING");
  });

  it("updates the given columns from the excluded row on the given key, in order", () => {
    expect(conflictClause({ key: ["chain", "tx_hash"], update: ["block", "price_usd"] })).toBe(
      " ON CONFLICT (chain, tx_hash) DO UPDATE SET block = excluded.block, price_usd = excluded.price_usd",
    );
  });

  it("keeps the stored row on the key when there is no column to update; refuses an empty key as internal", () => {
    expect(conflictClause({ key: ["chain", "tx_hash"], update: [] })).toBe(" ON CONFLICT (chain, tx_hash) DO NOTHING");
    for (const update of [[], ["v"]]) {
      expect(() => conflictClause({ key: [], update })).toThrow(
        expect.objectContaining({ code: "internal", message: expect.stringMatching(/onConflict names no key column/) }),
      );
    }
  });

  it("refuses a key or column that is not a plain identifier", () => {
    expect(() => conflictClause({ key: ["k; --"], update: ["v"] })).toThrow(/not a plain SQL identifier/);
    expect(() => conflictClause({ key: ["k"], update: ["v = 1, w"] })).toThrow(/not a plain SQL identifier/);
  });

  it("names every key and column once, in order (property)", () => {
    const name = fc.stringMatching(/^[a-z_][a-z0-9_]{0,10}$/);
    fc.assert(
      fc.property(
        fc.array(name, { minLength: 1, maxLength: 5 }),
        fc.array(name, { minLength: 1, maxLength: 5 }),
        (key, update) => {
          const clause = conflictClause({ key, update });
          expect(clause).toBe(
            ` ON CONFLICT (${key.join(", ")}) DO UPDATE SET ${update.map((c) => `${c} = excluded.${c}`).join(", ")}`,
          );
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("Serial", () => {
  it("starts a task only when the one before it has settled, in call order", async () => {
    const serial = new Serial();
    const started: number[] = [];
    const first = deferred<string>();
    const second = deferred<string>();
    const a = serial.run(() => {
      started.push(1);
      return first.promise;
    });
    const b = serial.run(() => {
      started.push(2);
      return second.promise;
    });
    const c = serial.run(() => {
      started.push(3);
      return "sync";
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(started).toEqual([1]);
    second.resolve("b"); // settling a later task out of order starts nothing
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([1]);
    first.resolve("a");
    expect(await a).toBe("a");
    expect(await b).toBe("b");
    expect(await c).toBe("sync");
    expect(started).toEqual([1, 2, 3]);
  });

  it("a failing task rejects its own call only; the queue goes on", async () => {
    const serial = new Serial();
    const failing = serial.run(async () => {
      throw new Error("boom");
    });
    const throwing = serial.run(() => {
      throw new Error("sync boom");
    });
    const after = serial.run(() => 7);
    await expect(failing).rejects.toThrow("boom");
    await expect(throwing).rejects.toThrow("sync boom");
    expect(await after).toBe(7);
  });

  it("never runs two tasks at once, however they interleave (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 12 }), async (ticks) => {
        const serial = new Serial();
        let running = 0;
        let most = 0;
        const order: number[] = [];
        const results = await Promise.all(
          ticks.map((n, i) =>
            serial.run(async () => {
              running++;
              most = Math.max(most, running);
              for (let t = 0; t < n; t++) await Promise.resolve();
              order.push(i);
              running--;
              return i;
            }),
          ),
        );
        expect(most).toBe(1);
        expect(order).toEqual(ticks.map((_, i) => i));
        expect(results).toEqual(order);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
