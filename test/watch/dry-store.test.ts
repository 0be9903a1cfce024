/**
 * The dry run's store (`previewWatch` runs the watch's own run over it): it reads the real journal (SQLite here)
 * and keeps every write in memory, so a preview takes and claims records like a poll and leaves the store as it was.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { openWatchStore } from "../../src/watch/db-store.js";
import { DryRunStore } from "../../src/watch/dry-store.js";
import type { Mail } from "../../src/watch/store.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const record = (block: number) => ({ block_number: block }) as unknown as TransactionRecord;
const taken = (key: string, block: number) => ({ key, position: { block, date: "" }, record: record(block) });
const mail = (customId: string) =>
  ({ customId, rule: "r", state: "pending", message: { Subject: customId }, attempts: 1 }) as unknown as Mail;

describe("the dry run's store", () => {
  it("reads the real store and keeps its own writes in memory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chainmail-dry-"));
    dirs.push(dir);
    const where = join(dir, "watch.sqlite");
    const real = await openWatchStore(where);
    await real.startRule("r", "fp", { block: 100, date: "" });
    await real.take("r", [taken("a", 101)], { block: 101, date: "" });

    const dry = new DryRunStore(real, where, 12);
    expect((await dry.ruleState("r"))?.floor).toEqual({ block: 100, date: "" });
    await dry.take("r", [taken("b", 102)], { block: 102, date: "" });
    expect([...(await dry.knownKeys("r", ["a", "b", "c"]))].sort()).toEqual(["a", "b"]);
    expect((await dry.queued("r", 10)).map((q) => q.key)).toEqual(["a", "b"]);
    await dry.journal("r", [{ mail: mail("m1"), keys: ["a", "b"] }]);
    expect(await dry.queued("r", 10)).toEqual([]);
    expect(dry.recordsOf.get("m1")).toBe(2);
    // A rule that never ran starts reorg_depth blocks back, so its newest records preview its template.
    await dry.startRule("fresh", "fp2", { block: 500, date: "2026-01-01T00:00:00" });
    expect((await dry.ruleState("fresh"))?.floor).toEqual({ block: 487, date: "" });

    // Nothing reached the real store.
    expect((await real.ruleState("r"))?.read).toEqual({ block: 101, date: "" });
    expect((await real.queued("r", 10)).map((q) => q.key)).toEqual(["a"]);
    expect(await real.knownKeys("r", ["b"])).toEqual(new Set());
    expect(await real.ruleState("fresh")).toBeUndefined();
    expect(await real.mails(["pending", "retry", "sent"])).toEqual([]);
    await dry.close();
  });
});
