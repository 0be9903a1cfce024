/**
 * src/watch/send.ts on its own: a message's journal state from its result (sent, unknown, retry, failed), the
 * watch's emails sent through `email-send` with one result per mail in order, a send that failed as a whole
 * settled per mail, and what became of emails journalled before a crash, asked of the transport. Against a real
 * SMTP server on loopback and its SMTP journal.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmailMessage, MessageResult } from "../../src/schemas/email.js";
import { deliveryUnknownResult, errorEntry, notSentResult } from "../../src/transports/outcome.js";
import { resolveMails, sendMails, stateOf } from "../../src/watch/send.js";
import type { Mail } from "../../src/watch/store.js";
import { testConfig } from "../support/helpers.js";
import { type SmtpTestServer, startSmtp } from "../upstreams/smtp.js";

let smtp: SmtpTestServer;
let dir: string;

beforeAll(async () => {
  smtp = await startSmtp();
  dir = mkdtempSync(join(tmpdir(), "chainmail-send-"));
});
afterAll(async () => {
  await smtp.close();
  rmSync(dir, { recursive: true, force: true });
});

const mail = (customId: string, extra: Partial<EmailMessage> = {}): Mail => ({
  customId,
  rule: "r",
  state: "pending",
  attempts: 1,
  message: {
    From: { Email: "watch@chainmail.test" },
    To: [{ Email: `${customId}@example.test` }],
    Subject: `About ${customId}`,
    TextPart: "A sale.",
    CustomID: customId,
    ...extra,
  } as EmailMessage,
});
const smtpConfig = (journal: string, url = smtp.url()) =>
  testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: url, SMTP_JOURNAL: join(dir, journal) });

describe("stateOf", () => {
  const refused = (...codes: number[]): MessageResult => ({
    Status: "error",
    Errors: codes.map((code) => errorEntry("refused", "refused", [], {}, code)),
  });

  it("reads a success, or an error that still lists recipients, as sent", () => {
    expect(
      stateOf({
        Status: "success",
        To: [{ Email: "a@example.test", MessageUUID: "u", MessageID: 1, MessageHref: "" }],
      } as MessageResult),
    ).toBe("sent");
    expect(stateOf({ ...refused(400), To: [{ Email: "a@example.test" }] } as MessageResult)).toBe("sent");
  });

  it("reads delivery unknown as unknown, surely-not-sent (every error >= 500) as retry, anything else as failed", () => {
    expect(stateOf(deliveryUnknownResult("the connection dropped"))).toBe("unknown");
    expect(stateOf(notSentResult("the server was down"))).toBe("retry");
    expect(stateOf(refused(500, 503))).toBe("retry");
    expect(stateOf(refused(503, 400))).toBe("failed");
    expect(stateOf(refused(400))).toBe("failed");
    expect(stateOf({ Status: "error" })).toBe("failed");
  });
});

describe("sendMails", () => {
  it("sends the mails in one run and reads one result per mail, in order, a refused one as failed", async () => {
    smtp.rules = { rejectSubject: "About refused" };
    try {
      const before = smtp.received.length;
      const results = await sendMails([mail("one"), mail("refused"), mail("two")], { config: smtpConfig("a.jsonl") });
      expect(results.map((r) => [r.customId, r.state])).toEqual([
        ["one", "sent"],
        ["refused", "failed"],
        ["two", "sent"],
      ]);
      expect(results[1]!.result.Errors?.map((e) => e.ErrorCode)).toEqual(["smtp-message-rejected"]);
      expect(smtp.received.slice(before).map((m) => m.to)).toEqual([["one@example.test"], ["two@example.test"]]);
    } finally {
      smtp.rules = {};
    }
  });

  it("reads a send that failed as a whole, nothing sent, as retry for every mail", async () => {
    const closed = await startSmtp();
    const url = closed.url();
    await closed.close();
    const results = await sendMails([mail("a"), mail("b")], { config: smtpConfig("b.jsonl", url) });
    expect(results.map((r) => [r.customId, r.state])).toEqual([
      ["a", "retry"],
      ["b", "retry"],
    ]);
    expect(results[0]!.result.Errors?.[0]?.ErrorCode).toBe("chainmail-not-sent");
  });
});

describe("resolveMails", () => {
  it("reads what the transport's journal says of each mail: sent, or to retry when it never reached the server", async () => {
    const config = smtpConfig("c.jsonl");
    await sendMails([mail("kept")], { config });
    const resolved = await resolveMails([mail("kept"), mail("never")], { config });
    expect(resolved.map((r) => [r.customId, r.state])).toEqual([
      ["kept", "sent"],
      ["never", "retry"],
    ]);
  });

  it("reads a mail whose body the server may have had when the session dropped as unknown, when sent and when resolved", async () => {
    const config = smtpConfig("d.jsonl");
    smtp.rules = { dropDuringData: smtp.dataStarted + 1 };
    try {
      expect((await sendMails([mail("cut")], { config })).map((r) => r.state)).toEqual(["unknown"]);
    } finally {
      smtp.rules = {};
    }
    expect((await resolveMails([mail("cut")], { config })).map((r) => r.state)).toEqual(["unknown"]);
  });

  it("reads every mail as unknown when the transport keeps no record of what it sent", async () => {
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: smtp.url() });
    const resolved = await resolveMails([mail("kept")], { config });
    expect(resolved.map((r) => r.state)).toEqual(["unknown"]);
  });
});
