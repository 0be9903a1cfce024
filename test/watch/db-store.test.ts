/**
 * src/watch/db-store.ts on SQLite: what the store on the index's database adds to the contract (test/watch/store.test.ts):
 * it says where it is, keeps everything across a reopen, takes key lists longer than a statement's parameters in
 * slices, and lets one watch at a time write (another waits and takes over when the first lets go).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import type { TakenRecord } from "../../src/watch/store.js";
import { deferred } from "../support/helpers.js";
import { pendingMail } from "../support/watch-helpers.js";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-db-store-"));
  file = join(dir, "watch.sqlite");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const taken = (key: string, block: number): TakenRecord => ({
  key,
  position: { block, date: "" },
  record: { block_number: block } as unknown as TransactionRecord,
});

describe("the watch store on SQLite", () => {
  it("says where it is and keeps rules, records and emails across a reopen", async () => {
    const first = await openWatchStore(file);
    expect(first.where).toBe(file);
    await first.startRule("r", "fp", { block: 9, date: "" });
    await first.take("r", [taken("a", 10)], { block: 10, date: "d" }, 77);
    await first.journal("r", [{ mail: pendingMail("m"), keys: ["a"] }]);
    await first.close();
    const again = await openWatchStore(file);
    try {
      expect(await again.ruleState("r")).toMatchObject({ fingerprint: "fp", read: { block: 10, date: "d" } });
      expect((await again.recordsFrom("r", 0)).map((r) => [r.key, r.state, r.customId])).toEqual([
        ["a", "claimed", "m"],
      ]);
      expect((await again.mails(["pending"])).map((m) => m.customId)).toEqual(["m"]);
    } finally {
      await again.close();
    }
  });

  it("takes, finds, holds and claims more keys than one statement's parameters, in slices", async () => {
    const store = await openWatchStore(file);
    try {
      await store.startRule("r", "fp", { block: 0, date: "" });
      const records = Array.from({ length: 1234 }, (_, i) => taken(`k${i}`, 1 + i));
      const keys = records.map((r) => r.key);
      await store.take("r", records, { block: 1234, date: "" });
      expect((await store.knownKeys("r", [...keys, "nope"])).size).toBe(1234);
      await store.hold("r", keys.slice(0, 1100), 5);
      expect(await store.held("r", 6, 5000)).toHaveLength(1100);
      expect(await store.queued("r", 5000)).toHaveLength(134);
      await store.journal("r", [{ mail: pendingMail("big"), keys }]);
      expect(await store.queued("r", 5000)).toHaveLength(0);
      // Held records are still queued: the email claims them too.
      expect((await store.recordsFrom("r", 0)).filter((r) => r.customId === "big")).toHaveLength(1234);
    } finally {
      await store.close();
    }
  });

  it("lets one watch write at a time: a second waits, and takes over when the first lets go", async () => {
    const one = await openWatchStore(file);
    const two = await openWatchStore(file);
    try {
      const lock = await one.lockWriter({});
      const waiting = deferred<void>();
      const second = two.lockWriter({ onWait: () => waiting.resolve() });
      await waiting.promise;
      const gaveUp = two.lockWriter({ signal: AbortSignal.abort() });
      await expect(gaveUp).rejects.toMatchObject({ name: "AbortError" });
      await lock.release();
      await (await second).release();
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("refuses a file that is no database", async () => {
    writeFileSync(file, "not a database, just text that is long enough to be read as a header".repeat(20));
    await expect(openWatchStore(file)).rejects.toThrow();
  });
});
