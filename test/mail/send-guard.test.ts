/**
 * src/mail/send-guard.ts on its own, with a real mail store in SQLite: suppressed recipients taken out of a request
 * before any transport sees it (each answered with a `suppressed` entry), a message left without a `To` not handed
 * over; the transport's outcome for the kept messages turned back into one for the whole input; and the records
 * kept of what went out.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChainmailError, MessageErrorCode } from "../../src/core/errors.js";
import { holdSuppressed, mergeHeld, sendRecords } from "../../src/mail/send-guard.js";
import { ANY_SENDER, type MailStore, openMailStore } from "../../src/mail/store.js";
import type { EmailMessage, EmailRequest, MessageResult } from "../../src/schemas/email.js";
import { applyGlobals } from "../../src/transports/message-rules.js";
import { batchError, messageStatuses, notSentResult } from "../../src/transports/outcome.js";
import type { SendOutcome } from "../../src/transports/types.js";

const dir = mkdtempSync(join(tmpdir(), "chainmail-send-guard-"));
let store: MailStore;
const SINCE = Date.UTC(2026, 0, 2, 3, 4, 5) / 1000;

beforeAll(async () => {
  store = await openMailStore(join(dir, "mail.sqlite"));
  await store.suppress({
    sender: "News@Chainmail.test",
    email: "Bounced@Example.test",
    reason: "hard_bounce",
    since: SINCE,
  });
  await store.suppress({ sender: ANY_SENDER, email: "spam@example.test", reason: "spam", since: SINCE });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const msg = (from: string, to: string[], extra: Record<string, unknown> = {}) => ({
  From: { Email: from },
  To: to.map((Email) => ({ Email })),
  TextPart: "x",
  ...extra,
});
const request = (...messages: ReturnType<typeof msg>[]) => ({ Messages: messages }) as EmailRequest;
let id = 1000;
const success = (m: { To: { Email: string }[]; Cc?: { Email: string }[] }): MessageResult => ({
  Status: "success",
  To: m.To.map((r) => ({ Email: r.Email, MessageUUID: `u-${++id}`, MessageID: id, MessageHref: "" })),
  Cc: (m.Cc ?? []).map((r) => ({ Email: r.Email, MessageUUID: `u-${++id}`, MessageID: id, MessageHref: "" })),
});

describe("holdSuppressed", () => {
  it("without a store, or with SendToSuppressed, hands over every message as given (without SendToSuppressed)", async () => {
    const input = { ...request(msg("news@chainmail.test", ["bounced@example.test"])), SendToSuppressed: true as const };
    for (const held of [await holdSuppressed(undefined, input), await holdSuppressed(store, input)]) {
      expect(held.request).toEqual({ Messages: input.Messages });
      expect(held.kept).toEqual([0]);
      expect(held.entries.size).toBe(0);
      expect(held.total).toBe(1);
    }
  });

  it("takes out the recipients suppressed for the message's sender or for every sender, whatever their case", async () => {
    const input = request(
      msg("news@chainmail.test", ["ok@example.test"], {
        Cc: [{ Email: " BOUNCED@example.test" }, { Email: "cc-ok@example.test" }],
        Bcc: [{ Email: "Spam@Example.test" }],
      }),
      // Another sender: only the every-sender entry holds.
      msg("other@chainmail.test", ["bounced@example.test"], { Bcc: [{ Email: "spam@example.test" }] }),
    );
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([0, 1]);
    expect(held.request.Messages[0]).toEqual({
      ...input.Messages[0],
      Cc: [{ Email: "cc-ok@example.test" }],
      Bcc: [],
    });
    expect(held.request.Messages[1]).toEqual({ ...input.Messages[1], Bcc: [] });
    const first = held.entries.get(0)!;
    const extra = (e: object) => e as { Reason?: string; Since?: string };
    expect(first.map((e) => [e.ErrorCode, e.ErrorRelatedTo, e.StatusCode, extra(e).Reason, extra(e).Since])).toEqual([
      [MessageErrorCode.SUPPRESSED, ["Cc[0].Email"], 400, "hard_bounce", new Date(SINCE * 1000).toISOString()],
      [MessageErrorCode.SUPPRESSED, ["Bcc[0].Email"], 400, "spam", new Date(SINCE * 1000).toISOString()],
    ]);
    expect(first[0]!.ErrorMessage).toMatch(
      /^Cc\[0\]\.Email = " BOUNCED@example.test" is on the suppression list of news@chainmail.test \(hard_bounce since 2026-01-02T03:04:05.000Z\)/,
    );
    expect(first[0]!.ErrorMessage).toContain("SendToSuppressed: true");
    expect(first[1]!.ErrorMessage).toContain("on the suppression list of every sender (spam since");
  });

  it("does not hand over a message left without a To; the sender may come from Globals", async () => {
    const input = {
      Globals: { From: { Email: "NEWS@chainmail.test" } },
      Messages: [
        { To: [{ Email: "bounced@example.test" }], Cc: [{ Email: "cc@example.test" }], TextPart: "x" },
        msg("news@chainmail.test", ["fine@example.test"]),
      ],
    } as unknown as EmailRequest;
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([1]);
    expect(held.request.Messages).toEqual([input.Messages[1]]);
    expect(held.request).toHaveProperty("Globals", input.Globals);
    expect(held.entries.get(0)!.map((e) => e.ErrorRelatedTo)).toEqual([["To[0].Email"]]);
    expect(held.total).toBe(2);
  });

  it("asks once per sender as the list keys it: spaces and case do not make another sender", async () => {
    const asked: string[] = [];
    const counting = {
      suppressed(sender: string, emails: readonly string[]) {
        asked.push(sender);
        return store.suppressed(sender, emails);
      },
    };
    const input = request(
      msg(" News@Chainmail.test", ["bounced@example.test"]),
      msg("news@chainmail.test ", ["Bounced@Example.test", "fine@example.test"]),
    );
    const held = await holdSuppressed(counting, input);
    expect(asked).toEqual(["news@chainmail.test"]);
    expect(held.kept).toEqual([1]);
    expect(held.entries.get(1)!.map((e) => e.ErrorRelatedTo)).toEqual([["To[0].Email"]]);
  });
});

describe("mergeHeld", () => {
  it("nothing held: the transport's outcome as it is", async () => {
    const input = request(msg("news@chainmail.test", ["a@example.test"]));
    const held = await holdSuppressed(store, input);
    const outcome: SendOutcome = { "messages sent": { Messages: [success(input.Messages[0]!)] } };
    expect(mergeHeld(held, outcome)).toBe(outcome);
  });

  it("one result per input message: held ones are errors, partly held ones list who got it and who was held", async () => {
    const input = request(
      msg("news@chainmail.test", ["bounced@example.test"]),
      msg("news@chainmail.test", ["b@example.test"], { Cc: [{ Email: "spam@example.test" }] }),
      msg("news@chainmail.test", ["c@example.test"]),
    );
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([1, 2]);
    const sent = held.request.Messages.map(success);
    const merged = mergeHeld(held, {
      "messages sent": { Messages: sent },
      response: { status: 200, headers: {}, body: "" },
    });
    const results = merged["messages sent"]!.Messages;
    expect(results).toHaveLength(3);
    expect(results[0]).toEqual({ Status: "error", Errors: held.entries.get(0) });
    expect(results[1]).toEqual({ ...sent[0], Status: "error", Errors: held.entries.get(1) });
    expect(results[2]).toBe(sent[1]);
    expect(merged.response?.status).toBe(200);
    expect(messageStatuses(results)).toEqual({ sent: [1, 2], not_sent: [0], unknown: [] });
  });

  it("nothing handed over: every message is an error of its own, and there is no batch error", async () => {
    const input = request(msg("news@chainmail.test", ["bounced@example.test"]));
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([]);
    const merged = mergeHeld(held, undefined);
    expect(merged).toEqual({ "messages sent": { Messages: [{ Status: "error", Errors: held.entries.get(0) }] } });
  });

  it("a batch that failed: kept messages without a result are not sent, and details.messages names input indexes", async () => {
    const input = request(
      msg("news@chainmail.test", ["bounced@example.test"]),
      msg("news@chainmail.test", ["a@example.test"]),
      msg("news@chainmail.test", ["b@example.test"], { Cc: [{ Email: "spam@example.test" }] }),
    );
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([1, 2]);
    // The transport saw two messages: its index 0 went out, its index 1 did not.
    const transportResults = [success(held.request.Messages[0]!), notSentResult("down")];
    const failure = new ChainmailError("UPSTREAM_TIMEOUT", "timed out");
    const error = batchError(failure, messageStatuses(transportResults), { error: "partly", hint: "h" });
    const merged = mergeHeld(held, { "messages sent": { Messages: transportResults }, error });
    expect(merged.error!.details.messages).toEqual({ sent: [1], not_sent: [2], unknown: [] });
    const results = merged["messages sent"]!.Messages;
    expect(results[2]!.Errors!.map((e) => e.ErrorCode)).toEqual([
      MessageErrorCode.NOT_SENT,
      MessageErrorCode.SUPPRESSED,
    ]);

    // A transport that answered with no results at all: its kept messages are not sent, with what was held.
    const bare = mergeHeld(held, { error });
    expect(bare["messages sent"]!.Messages.map((r) => r.Errors!.map((e) => e.ErrorCode))).toEqual([
      [MessageErrorCode.SUPPRESSED],
      [MessageErrorCode.NOT_SENT],
      [MessageErrorCode.NOT_SENT, MessageErrorCode.SUPPRESSED],
    ]);
  });
});

describe("sendRecords", () => {
  it("one record per recipient that got a MessageID, with the message's CustomID, payload and sender", async () => {
    const input = {
      Globals: { From: { Email: "news@chainmail.test" }, EventPayload: "global-payload" },
      Messages: [
        { To: [{ Email: "bounced@example.test" }], TextPart: "x" },
        { To: [{ Email: "a@example.test" }], Cc: [{ Email: "c@example.test" }], TextPart: "x", CustomID: "order-7" },
        {
          From: { Email: "other@chainmail.test" },
          To: [{ Email: "b@example.test" }],
          TextPart: "x",
          EventPayload: "own",
        },
      ],
    } as unknown as EmailRequest;
    const held = await holdSuppressed(store, input);
    const sent = [
      success({ To: [{ Email: "a@example.test" }], Cc: [{ Email: "c@example.test" }] }),
      success({ To: [{ Email: "b@example.test" }] }),
    ];
    sent[0]!.To![0]!.MessageID = 2n ** 60n;
    const outcome = mergeHeld(held, { "messages sent": { Messages: sent } });
    const records = sendRecords(held, outcome, "mailjet");
    expect(records).toEqual([
      {
        messageId: String(2n ** 60n),
        messageUuid: sent[0]!.To![0]!.MessageUUID,
        customId: "order-7",
        email: "a@example.test",
        sender: "news@chainmail.test",
        transport: "mailjet",
        payload: "global-payload",
        fact: "sent",
      },
      expect.objectContaining({ email: "c@example.test", customId: "order-7", fact: "sent" }),
      expect.objectContaining({
        email: "b@example.test",
        sender: "other@chainmail.test",
        customId: undefined,
        payload: "own",
      }),
    ]);
  });

  it("the outbox queues; sandbox results (MessageID 0) and an outcome without results record nothing", async () => {
    const input = request(msg("news@chainmail.test", ["a@example.test"]));
    const held = await holdSuppressed(store, input);
    const result = success(input.Messages[0]!);
    expect(sendRecords(held, { "messages sent": { Messages: [result] } }, "outbox")[0]!.fact).toBe("queued");
    const sandbox: MessageResult = {
      Status: "success",
      To: [{ Email: "a@example.test", MessageUUID: "", MessageID: 0, MessageHref: "" }],
    };
    expect(sendRecords(held, { "messages sent": { Messages: [sandbox] } }, "mailjet")).toEqual([]);
    expect(sendRecords(held, {}, "mailjet")).toEqual([]);
  });
});

describe("holdSuppressed: Globals' Cc and Bcc", () => {
  /** Whom each message handed over really goes to in `list`, with Globals applied as Mailjet applies them. */
  const recipientsOf = (held: Awaited<ReturnType<typeof holdSuppressed>>, list: "Cc" | "Bcc") =>
    held.request.Messages.map((m) =>
      ((applyGlobals(held.request.Globals as never, m as never) as EmailMessage)[list] ?? []).map((r) => r.Email),
    );

  it("holds back a suppressed recipient of Globals.Cc or Globals.Bcc too: Mailjet adds them to every message", async () => {
    const input = {
      Globals: {
        From: { Email: "news@chainmail.test" },
        Subject: "Shared",
        Bcc: [{ Email: "audit@example.test" }, { Email: "SPAM@example.test" }],
      },
      Messages: [
        { To: [{ Email: "a@example.test" }], Bcc: [{ Email: "own@example.test" }], TextPart: "x" },
        { To: [{ Email: "b@example.test" }], TextPart: "x" },
      ],
    } as unknown as EmailRequest;
    const held = await holdSuppressed(store, input);
    expect(held.kept).toEqual([0, 1]);
    expect(recipientsOf(held, "Bcc")).toEqual([["audit@example.test", "own@example.test"], ["audit@example.test"]]);
    for (const i of [0, 1]) {
      const entries = held.entries.get(i)!;
      expect(entries.map((e) => [e.ErrorCode, e.ErrorRelatedTo])).toEqual([
        [MessageErrorCode.SUPPRESSED, ["Globals.Bcc[1].Email"]],
      ]);
    }
    // What Globals says besides its lists still holds for every message.
    expect(held.request.Globals).toEqual({ From: { Email: "news@chainmail.test" }, Subject: "Shared" });
  });

  it("only for the senders whose list has the recipient; Globals is left as given when nobody is held back", async () => {
    const input = {
      Globals: { Cc: [{ Email: "bounced@example.test" }] },
      Messages: [msg("news@chainmail.test", ["a@example.test"]), msg("other@chainmail.test", ["b@example.test"])],
    } as unknown as EmailRequest;
    const held = await holdSuppressed(store, input);
    expect(recipientsOf(held, "Cc")).toEqual([[], ["bounced@example.test"]]);
    expect(held.entries.get(0)!.map((e) => e.ErrorRelatedTo)).toEqual([["Globals.Cc[0].Email"]]);
    expect(held.entries.has(1)).toBe(false);

    const clean = { Globals: { Cc: [{ Email: "fine@example.test" }] }, Messages: input.Messages } as EmailRequest;
    const untouched = await holdSuppressed(store, clean);
    expect(untouched.request).toEqual(clean);
    expect(untouched.entries.size).toBe(0);
  });
});
