/**
 * src/mail/open.ts on its own, with real SQLite files: the store CHAINMAIL_MAIL_DB names is opened once per
 * database (and soft-bounce limit) and shared; no setting, no store; a failed open is tried again next time;
 * `closeMailStores` closes them all and a later use opens again.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { closeMailStores, mailStoreOf } from "../../src/mail/open.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-open-"));
afterEach(() => closeMailStores());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("mailStoreOf", () => {
  it("answers no store when CHAINMAIL_MAIL_DB is not set", () => {
    expect(mailStoreOf({})).toBeUndefined();
    expect(mailStoreOf({ CHAINMAIL_MAIL_DB: undefined })).toBeUndefined();
  });

  it("opens the store once and shares it: the same promise for the same database and limit", async () => {
    const target = join(dir, "shared.sqlite");
    const env = { CHAINMAIL_MAIL_DB: target };
    const first = mailStoreOf(env)!;
    expect(mailStoreOf({ ...env })).toBe(first);
    // Named explicitly (a watch's own store), the same database is the same store.
    expect(mailStoreOf({}, target)).toBe(first);
    const store = await first;
    expect(store.where).toContain("shared.sqlite");
    // It is a working, migrated store.
    expect(await store.suppress({ sender: "*", email: "x@example.test", reason: "manual" })).toBe(true);
    expect([...(await store.suppressed("a@chainmail.test", ["X@example.test"])).keys()]).toEqual(["x@example.test"]);
  });

  it("a different soft-bounce limit or database is another store", async () => {
    const target = join(dir, "limits.sqlite");
    const plain = mailStoreOf({ CHAINMAIL_MAIL_DB: target })!;
    const strict = mailStoreOf({ CHAINMAIL_MAIL_DB: target, CHAINMAIL_SOFT_BOUNCE_LIMIT: "1" })!;
    const other = mailStoreOf({ CHAINMAIL_MAIL_DB: join(dir, "other.sqlite") })!;
    expect(strict).not.toBe(plain);
    expect(other).not.toBe(plain);
    expect(mailStoreOf({ CHAINMAIL_MAIL_DB: target, CHAINMAIL_SOFT_BOUNCE_LIMIT: "1" })).toBe(strict);
    await Promise.all([plain, strict, other]);
  });

  it("a failed open is not remembered: the next use tries again", async () => {
    const blocked = join(dir, "blocked");
    writeFileSync(blocked, "a file where a directory should be");
    const target = join(blocked, "mail.sqlite");
    const failed = mailStoreOf({ CHAINMAIL_MAIL_DB: target })!;
    await expect(failed).rejects.toThrow();
    rmSync(blocked);
    mkdirSync(blocked);
    const again = mailStoreOf({ CHAINMAIL_MAIL_DB: target })!;
    expect(again).not.toBe(failed);
    await expect(again).resolves.toHaveProperty("where");
  });

  it("closeMailStores closes every store opened here; a later use opens a new one", async () => {
    const env = { CHAINMAIL_MAIL_DB: join(dir, "closed.sqlite") };
    const before = await mailStoreOf(env)!;
    await closeMailStores();
    await expect(before.suppressions()).rejects.toThrow();
    const after = mailStoreOf(env)!;
    expect(await after).not.toBe(before);
    expect(await (await after).suppressions()).toEqual([]);
  });
});
