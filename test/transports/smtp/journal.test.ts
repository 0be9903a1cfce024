/**
 * src/transports/smtp/journal.ts on its own, in a real file: the last line of a CustomID says what became of its
 * message after a crash (a result is the result, `data` without one is delivery unknown, `attempt` alone or no line
 * is not sent); a line cut short is skipped; a journal (or its directory) that cannot be written fails with
 * storage_error.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ChainmailError, MessageErrorCode } from "../../../src/core/errors.js";
import { parseJson } from "../../../src/core/json.js";
import type { MessageResult } from "../../../src/schemas/email.js";
import { SmtpJournal } from "../../../src/transports/smtp/journal.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => new SmtpJournal(join(dir, `nested-${++n}`, "deeper", "journal.jsonl"));

const accepted: MessageResult = {
  Status: "success",
  To: [{ Email: "a@example.test", MessageUUID: "u-1", MessageID: 2n ** 60n + 1n, MessageHref: "" }],
};
const codeOf = (result: MessageResult | undefined) => result?.Errors?.[0]?.ErrorCode;

describe("SmtpJournal", () => {
  it("creates its directory and appends one JSON line per step, with the CustomID and a time", async () => {
    const journal = fresh();
    await journal.note("order-1", { step: "attempt" });
    await journal.note("order-1", { step: "data" });
    journal.noteNow("order-1", { step: "result", result: accepted });
    const lines = readFileSync(journal.path, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => parseJson(l) as any);
    expect(lines.map((l) => [l.custom_id, l.step])).toEqual([
      ["order-1", "attempt"],
      ["order-1", "data"],
      ["order-1", "result"],
    ]);
    for (const line of lines) expect(Number.isNaN(Date.parse(line.at))).toBe(false);
  });

  it("answers by the last line of each CustomID: result, delivery unknown after data, not sent otherwise", async () => {
    const journal = fresh();
    await journal.note("done", { step: "attempt" });
    await journal.note("done", { step: "data" });
    await journal.note("cut", { step: "attempt" });
    await journal.note("cut", { step: "data" });
    await journal.note("before-data", { step: "attempt" });
    await journal.note("done", { step: "result", result: accepted });
    const found = journal.lookup(["done", "cut", "before-data", "never"]);
    expect([...found.keys()]).toEqual(["done", "cut", "before-data", "never"]);
    // The result as written, its 64-bit MessageID exact.
    expect(found.get("done")).toEqual(accepted);
    expect(codeOf(found.get("cut"))).toBe(MessageErrorCode.DELIVERY_UNKNOWN);
    expect(codeOf(found.get("before-data"))).toBe(MessageErrorCode.NOT_SENT);
    expect(codeOf(found.get("never"))).toBe(MessageErrorCode.NOT_SENT);
  });

  it("a later attempt after a result wins: the message is being sent again", async () => {
    const journal = fresh();
    await journal.note("again", { step: "result", result: accepted });
    await journal.note("again", { step: "attempt" });
    expect(codeOf(journal.lookup(["again"]).get("again"))).toBe(MessageErrorCode.NOT_SENT);
  });

  it("skips a line cut short by a crash and blank lines; a missing journal means nothing was sent", async () => {
    const journal = fresh();
    await journal.note("x", { step: "data" });
    appendFileSync(journal.path, '\n\n{"custom_id":"x","step":"res');
    expect(codeOf(journal.lookup(["x"]).get("x"))).toBe(MessageErrorCode.DELIVERY_UNKNOWN);
    const missing = new SmtpJournal(join(dir, "absent", "journal.jsonl"));
    expect(codeOf(missing.lookup(["x"]).get("x"))).toBe(MessageErrorCode.NOT_SENT);
  });

  it("fails with storage_error naming the journal when a line or its directory cannot be written; other read errors are thrown", async () => {
    const file = join(dir, "a-file");
    writeFileSync(file, "");
    const path = join(file, "journal.jsonl");
    const journal = new SmtpJournal(path);
    let err: unknown;
    try {
      journal.noteNow("x", { step: "attempt" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ChainmailError);
    expect((err as ChainmailError).code).toBe("storage_error");
    expect((err as ChainmailError).shortMessage).toMatch(`Writing the SMTP journal ${path} failed`);
    expect((err as ChainmailError).details).toEqual({ smtp_journal: path });
    expect((err as ChainmailError).cause).toHaveProperty("code", "ENOTDIR");
    // Its directory cannot be made either: the step is refused before it happens, as storage_error too.
    const refused = await journal.note("x", { step: "attempt" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ChainmailError);
    expect((refused as ChainmailError).code).toBe("storage_error");
    expect((refused as ChainmailError).shortMessage).toMatch(
      `Creating the directory ${file} of the SMTP journal failed: `,
    );
    expect((refused as ChainmailError).shortMessage).toMatch(/ENOTDIR|EEXIST/);
    expect((refused as ChainmailError).details).toEqual({ smtp_journal: path });
    expect((refused as ChainmailError).cause).toHaveProperty("syscall", "mkdir");
    expect(() => journal.lookup(["x"])).toThrow(/ENOTDIR/);
  });
});
