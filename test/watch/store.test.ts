/**
 * The watch store's contract (src/watch/store.ts), on the store a watch runs with (db-store.ts over a real SQLite
 * file): a rule's start and read position; records taken once each, queued, claimed by an email intent, settled
 * with its send, dropped when a reorg removed them before their email (queued again when they come back), held for
 * an hour's digest; the journal of emails (pending, retry, sent, failed, unknown), the rule's last mailed record,
 * retractions, and the explicit decision to send again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageResult } from "../../src/schemas/email.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import type { TakenRecord, WatchStore } from "../../src/watch/store.js";
import { pendingMail } from "../support/watch-helpers.js";

let dir: string;
let store: WatchStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-store-"));
  store = await openWatchStore(join(dir, "watch.sqlite"));
  await store.startRule("r", "fp", { block: 99, date: "" });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const taken = (key: string, block: number): TakenRecord => ({
  key,
  position: { block, date: `2026-01-01T00:00:${String(block % 60).padStart(2, "0")}` },
  record: { type: "transfer", block_number: block, token_id: key } as unknown as TransactionRecord,
});
const SENT: MessageResult = { Status: "success" };
const FAILED: MessageResult = { Status: "error", Errors: [] };
const keysOf = (records: { key: string }[]) => records.map((r) => r.key);
const statesOf = async (from = 0) =>
  Object.fromEntries((await store.recordsFrom("r", from)).map((r) => [r.key, r.state]));

describe("rules", () => {
  it("reads a rule that never started as none, and a started one with its floor and nothing read yet", async () => {
    expect(await store.ruleState("other")).toBeUndefined();
    expect(await store.ruleState("r")).toEqual({
      rule: "r",
      fingerprint: "fp",
      floor: { block: 99, date: "" },
      read: undefined,
      lastMailed: undefined,
      digestSince: undefined,
    });
    await store.startRule("listing", "fp2", { block: undefined, date: "2026-01-01T00:00:00" });
    expect((await store.ruleState("listing"))?.floor).toEqual({ block: undefined, date: "2026-01-01T00:00:00" });
  });
});

describe("taking records", () => {
  it("queues new records with the read position, the digest start only when none is running", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101)], { block: 101, date: "d1" }, 1000);
    await store.take("r", [taken("c", 102)], { block: 102, date: "d2" }, 2000);
    const state = await store.ruleState("r");
    expect(state?.read).toEqual({ block: 102, date: "d2" });
    expect(state?.digestSince).toBe(1000);
    expect(keysOf(await store.queued("r", 10))).toEqual(["a", "b", "c"]);
    expect(await store.knownKeys("r", ["a", "c", "z"])).toEqual(new Set(["a", "c"]));
    expect(await store.knownKeys("other", ["a"])).toEqual(new Set());
  });

  it("takes a record once: a key taken again leaves the first one as it is", async () => {
    await store.take("r", [taken("a", 100)], { block: 100, date: "" });
    await store.journal("r", [{ mail: pendingMail("m"), keys: ["a"] }]);
    await store.take("r", [taken("a", 100), taken("b", 101)], { block: 101, date: "" });
    expect(await statesOf()).toEqual({ a: "claimed", b: "queued" });
    expect(keysOf(await store.queued("r", 10))).toEqual(["b"]);
  });

  it("reads the records of a block range in the order they were taken, and the oldest queued ones up to a limit", async () => {
    await store.take("r", [taken("c", 103), taken("a", 100), taken("b", 101)], { block: 103, date: "" });
    expect(keysOf(await store.recordsFrom("r", 101))).toEqual(["c", "b"]);
    expect(keysOf(await store.recordsFrom("r", 100, 101))).toEqual(["a", "b"]);
    expect(keysOf(await store.queued("r", 2))).toEqual(["c", "a"]);
    const [c] = await store.recordsFrom("r", 103);
    expect(c).toMatchObject({ key: "c", position: taken("c", 103).position, record: taken("c", 103).record });
    expect(c).toMatchObject({ state: "queued", customId: undefined, reorged: false, retracted: false });
  });
});

describe("reorgs", () => {
  it("drops queued records a reorg removed and queues them again when they come back; a sent one stays sent", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101)], { block: 101, date: "" });
    await store.journal("r", [{ mail: pendingMail("m"), keys: ["a"] }]);
    await store.settle([{ customId: "m", state: "sent", result: SENT }]);
    await store.markReorged("r", ["a", "b"], true);
    expect(await statesOf()).toEqual({ a: "sent", b: "dropped" });
    expect((await store.recordsFrom("r", 0)).map((r) => r.reorged)).toEqual([true, true]);
    expect(await store.queued("r", 10)).toEqual([]);
    await store.markReorged("r", ["b"], false);
    expect(await statesOf()).toEqual({ a: "sent", b: "queued" });
    expect(keysOf(await store.queued("r", 10))).toEqual(["b"]);
  });

  it("offers a sent record a reorg removed for one retraction, then no more", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101)], { block: 101, date: "" });
    await store.journal("r", [{ mail: pendingMail("m"), keys: ["a", "b"] }]);
    await store.settle([{ customId: "m", state: "sent", result: SENT }]);
    expect(await store.retractable("r", 10)).toEqual([]);
    await store.markReorged("r", ["b"], true);
    expect(keysOf(await store.retractable("r", 10))).toEqual(["b"]);
    await store.journal("r", [{ mail: pendingMail("x", "retraction"), keys: ["b"] }]);
    expect(await store.retractable("r", 10)).toEqual([]);
    const [, b] = await store.recordsFrom("r", 0);
    expect(b).toMatchObject({ state: "sent", customId: "m", retracted: true });
  });
});

describe("max_per_hour", () => {
  it("holds queued records for an hour's digest: out of the queue, read back once their hour is past", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101), taken("c", 102)], { block: 102, date: "" });
    await store.hold("r", ["a", "b"], 500);
    expect(keysOf(await store.queued("r", 10))).toEqual(["c"]);
    expect(await store.held("r", 500, 10)).toEqual([]);
    expect(keysOf(await store.held("r", 501, 10))).toEqual(["a", "b"]);
    expect((await store.held("r", 501, 1)).map((r) => r.heldHour)).toEqual([500]);
    await store.hold("r", ["a"], 600);
    expect((await store.held("r", 501, 10)).map((r) => r.heldHour)).toEqual([500, 500]);
  });

  it("counts the record emails journalled since a time, not retractions or an hour's digest", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101), taken("c", 102)], { block: 102, date: "" });
    await store.journal("r", [{ mail: pendingMail("m1"), keys: ["a"] }], 1000);
    await store.journal("r", [{ mail: pendingMail("m2"), keys: ["b"] }], 2000);
    await store.journal("r", [{ mail: pendingMail("o", "overflow"), keys: ["c"] }], 2000);
    expect(await store.mailsSince("r", 1000)).toBe(2);
    expect(await store.mailsSince("r", 1001)).toBe(1);
    expect(await store.mailsSince("r", 2001)).toBe(0);
  });
});

describe("the journal of emails", () => {
  it("journals intents as pending emails, claims their records and closes the digest window", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101)], { block: 101, date: "" }, 1000);
    await store.journal("r", [{ mail: pendingMail("o", "overflow"), keys: [] }], 1000);
    expect((await store.ruleState("r"))?.digestSince).toBe(1000);
    await store.journal("r", [{ mail: pendingMail("m"), keys: ["a", "b"] }], 2000);
    expect((await store.ruleState("r"))?.digestSince).toBeUndefined();
    expect(await statesOf()).toEqual({ a: "claimed", b: "claimed" });
    expect((await store.recordsFrom("r", 0)).map((r) => r.customId)).toEqual(["m", "m"]);
    expect(await store.mails(["pending"])).toEqual([
      { ...pendingMail("o", "overflow"), result: undefined },
      { ...pendingMail("m"), kind: "record", result: undefined },
    ]);
  });

  it("reads emails by state, oldest first, up to a limit", async () => {
    await store.journal("r", [{ mail: pendingMail("late"), keys: [] }], 3000);
    await store.journal("r", [{ mail: pendingMail("early"), keys: [] }], 1000);
    await store.journal("r", [{ mail: pendingMail("mid"), keys: [] }], 2000);
    await store.settle([{ customId: "mid", state: "failed", result: FAILED }]);
    expect((await store.mails(["pending", "failed"])).map((m) => m.customId)).toEqual(["early", "mid", "late"]);
    expect((await store.mails(["pending"], 1)).map((m) => m.customId)).toEqual(["early"]);
    expect((await store.mails(["failed"]))[0]).toMatchObject({ state: "failed", result: FAILED });
  });

  it("settles each email and its records, the rule's last mailed record being the newest one an email sent", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101), taken("c", 102)], { block: 102, date: "" });
    await store.journal("r", [
      { mail: pendingMail("m1"), keys: ["a", "b"] },
      { mail: pendingMail("m2"), keys: ["c"] },
    ]);
    await store.settle([
      { customId: "m1", state: "sent", result: SENT },
      { customId: "m2", state: "failed", result: FAILED },
    ]);
    expect(await statesOf()).toEqual({ a: "sent", b: "sent", c: "failed" });
    expect((await store.ruleState("r"))?.lastMailed).toBe("b");
    // A sent email that carries no record (an hour's digest of nothing, a scheduled one) leaves the cursor.
    await store.journal("r", [{ mail: pendingMail("empty"), keys: [] }]);
    await store.settle([{ customId: "empty", state: "sent", result: SENT }]);
    expect((await store.ruleState("r"))?.lastMailed).toBe("b");
  });

  it("leaves the records of an email to retry claimed, and reopens it as pending with one more attempt before the send", async () => {
    await store.take("r", [taken("a", 100)], { block: 100, date: "" });
    await store.journal("r", [{ mail: pendingMail("m"), keys: ["a"] }]);
    await store.settle([{ customId: "m", state: "retry", result: FAILED }]);
    expect(await statesOf()).toEqual({ a: "claimed" });
    expect((await store.mails(["retry"])).map((m) => m.customId)).toEqual(["m"]);
    await store.markSending(["m"]);
    await store.markSending(["m"]); // pending already: not counted twice
    expect(await store.mails(["pending"])).toMatchObject([{ customId: "m", state: "pending", attempts: 2 }]);
  });

  it("sends again, when asked, emails whose delivery is unknown or that failed, and says what each one was", async () => {
    await store.take("r", [taken("a", 100), taken("b", 101), taken("c", 102)], { block: 102, date: "" });
    await store.journal("r", [
      { mail: pendingMail("u"), keys: ["a"] },
      { mail: pendingMail("f"), keys: ["b"] },
      { mail: pendingMail("s"), keys: ["c"] },
    ]);
    await store.settle([
      { customId: "u", state: "unknown", result: FAILED },
      { customId: "f", state: "failed", result: FAILED },
      { customId: "s", state: "sent", result: SENT },
    ]);
    const was = await store.resend(["u", "f", "s", "none"]);
    expect([...was]).toEqual([
      ["u", "unknown"],
      ["f", "failed"],
      ["s", "sent"],
      ["none", undefined],
    ]);
    expect((await store.mails(["retry"])).map((m) => m.customId).sort()).toEqual(["f", "u"]);
    expect(await statesOf()).toEqual({ a: "claimed", b: "claimed", c: "sent" });
  });
});
