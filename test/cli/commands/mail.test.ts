/** `chainmail mail status` and `chainmail mail suppressions list|add|remove`, run as a user would (dist/). */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import { readMailjetEvents } from "../../../src/mail/events.js";
import { openMailStore } from "../../../src/mail/store.js";
import { runCli } from "../../support/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-cli-"));
const db = join(dir, "mail.sqlite");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("chainmail mail", () => {
  it("manages the suppression list: add, list, remove (explicit), and names a bad address", async () => {
    const env = { CHAINMAIL_MAIL_DB: db };
    const add = await runCli(
      ["mail", "suppressions", "add", "--sender", "News@x.test", "--email", "Reader@Example.com"],
      { env },
    );
    expect(add.code, add.stderr).toBe(0);
    expect(parseJson(add.stdout)).toMatchObject({ suppressed: true, changed: true });
    const list = await runCli(["mail", "suppressions", "list"], { env });
    expect(parseJson(list.stdout)).toEqual([
      expect.objectContaining({ sender: "news@x.test", email: "reader@example.com", reason: "manual" }),
    ]);
    const removed = await runCli(
      ["mail", "suppressions", "remove", "--sender", "news@x.test", "--email", "reader@example.com"],
      { env },
    );
    expect(parseJson(removed.stdout)).toMatchObject({ removed: true });
    expect(parseJson((await runCli(["mail", "suppressions", "list"], { env })).stdout)).toEqual([]);
    const bad = await runCli(["mail", "suppressions", "add", "--sender", "*", "--email", "not-an-address"], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("email");
  });

  it("prints a message's state and events by any of its ids, exactly", async () => {
    const store = await openMailStore(db);
    await store.recordSends([
      {
        messageId: "18446744073709551615",
        messageUuid: "uuid-1",
        customId: "cid-1",
        email: "a@example.com",
        sender: "n@x.test",
        transport: "mailjet",
        payload: "p",
        fact: "sent",
      },
    ]);
    await store.applyEvents(
      readMailjetEvents({
        event: "open",
        time: 1_700_000_000,
        MessageID: 18446744073709551615n,
        email: "a@example.com",
      }).events,
    );
    await store.close();
    for (const id of ["18446744073709551615", "uuid-1", "cid-1"]) {
      const out = await runCli(["mail", "status", id, "--db", db]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain('"MessageID": 18446744073709551615');
      expect(parseJson(out.stdout)).toMatchObject({
        messages: [{ State: "opened", EventPayload: "p", Events: [{ event: "open", Payload: "p" }] }],
      });
    }
    const missing = await runCli(["mail", "status", "nope", "--db", db]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no message");
    const unset = await runCli(["mail", "status", "x"]);
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain("CHAINMAIL_MAIL_DB");
  });
});
