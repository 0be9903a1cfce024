/**
 * The mail lifecycle through the service: Mailjet's event callback (Basic or bearer, single or grouped, 400 naming
 * the field), `GET /messages/<id>`, messages recorded at send time, suppressed recipients held back by `email-send`
 * (and the explicit override). Real sockets, a real SQLite store, the outbox transport.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { stringifyJson } from "../../src/core/json.js";
import { startServer } from "../../src/server/index.js";
import { call as rawCall } from "../support/server-helpers.js";

/** Bodies written with stringifyJson: the MessageIDs read back are bigints. */
const call = (target: string, method: "GET" | "POST", body?: unknown, headers: Record<string, string> = {}) =>
  rawCall(target, method, body === undefined || typeof body === "string" ? body : stringifyJson(body), {
    "content-type": "application/json",
    ...headers,
  });

const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-service-"));
const env = {
  EMAIL_TRANSPORT: "outbox",
  OUTBOX_DIR: join(dir, "outbox"),
  CHAINMAIL_MAIL_DB: join(dir, "mail.sqlite"),
  CHAINMAIL_EVENTS_USER: "mailjet",
  CHAINMAIL_EVENTS_PASSWORD: "callback-secret-1",
  CHAINMAIL_SOFT_BOUNCE_LIMIT: "2",
};
const TOKEN = "service-token-0123456789";
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const server = await startServer({ port: 0, config: loadConfig(env), tokens: [TOKEN] });
  url = server.url;
  close = server.close;
});
afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`,
});
const MAILJET = basic("mailjet", "callback-secret-1");
const BEARER = { authorization: `Bearer ${TOKEN}` };

const send = (request: object) => call(`${url}/nodes/email-send`, "POST", { request }, BEARER);
const message = (to: string[], extra: object = {}) => ({
  From: { Email: "News@chainmail.test" },
  To: to.map((Email) => ({ Email })),
  Subject: "Sales",
  TextPart: "Two sales today",
  ...extra,
});

describe("POST /events/mailjet", () => {
  it("refuses a caller without Basic credentials or a token, and wrong ones", async () => {
    const event = { event: "open", time: 1, MessageID: 1, email: "a@example.com" };
    const none = await call(`${url}/events/mailjet`, "POST", event);
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toContain("Basic");
    expect((await call(`${url}/events/mailjet`, "POST", event, basic("mailjet", "wrong"))).status).toBe(403);
    expect(
      (await call(`${url}/events/mailjet`, "POST", event, { authorization: "Bearer not-the-token-at-all" })).status,
    ).toBe(403);
    expect((await call(`${url}/events/mailjet`, "POST", event, BEARER)).status).toBe(200);
  });

  it("records a send, takes events in any order and answers them with the EventPayload", async () => {
    const sent = await send({
      Messages: [message(["reader@example.com"], { CustomID: "digest-1", EventPayload: "rule=sales" })],
    });
    expect(sent.status).toBe(200);
    const recipient = sent.body["messages sent"].Messages[0].To[0];
    let status = await call(`${url}/messages/digest-1`, "GET", undefined, BEARER);
    expect(status.body.messages).toMatchObject([{ State: "queued", Transport: "outbox", From: "news@chainmail.test" }]);
    const event = (kind: string, time: number, extra: object = {}) => ({
      event: kind,
      time,
      MessageID: recipient.MessageID,
      Message_GUID: recipient.MessageUUID,
      email: "reader@example.com",
      CustomID: "digest-1",
      Payload: "rule=sales",
      ...extra,
    });
    // Grouped (version 2), the open before its sent, one repeated.
    const grouped = [
      event("open", 20),
      event("sent", 10),
      event("open", 20),
      event("click", 30, { url: "https://x.test/" }),
    ];
    const stored = await call(`${url}/events/mailjet`, "POST", grouped, MAILJET);
    expect(stored).toMatchObject({ status: 200, body: { stored: 3, repeated: 1, ignored: 0 } });
    // Version 1: one event per POST; a replay of the same changes nothing.
    expect((await call(`${url}/events/mailjet`, "POST", event("sent", 10), MAILJET)).body).toEqual({
      stored: 0,
      repeated: 1,
      ignored: 0,
    });
    for (const id of [String(recipient.MessageID), recipient.MessageUUID, "digest-1"]) {
      status = await call(`${url}/messages/${encodeURIComponent(id)}`, "GET", undefined, BEARER);
      expect(status.status).toBe(200);
      expect(status.body.messages[0].State).toBe("clicked");
      expect(status.body.messages[0].MessageID).toEqual(recipient.MessageID);
      expect(status.body.messages[0].Events.map((e: { event: string }) => e.event)).toEqual(["sent", "open", "click"]);
      for (const e of status.body.messages[0].Events) expect(e.Payload).toBe("rule=sales");
    }
  });

  it("acknowledges kinds it does not know, and refuses a malformed event naming the field (nothing stored)", async () => {
    const unknown = await call(`${url}/events/mailjet`, "POST", [{ event: "future_kind", anything: 1 }], MAILJET);
    expect(unknown).toMatchObject({ status: 200, body: { stored: 0, ignored: 1 } });
    const bad = [
      { event: "open", time: 5, MessageID: 77, email: "x@example.com" },
      { event: "bounce", time: "yesterday", MessageID: 78, email: "y@example.com" },
    ];
    const refused = await call(`${url}/events/mailjet`, "POST", bad, MAILJET);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.code).toBe("invalid_input");
    expect(refused.body.error.details.violations.map((v: { field: string }) => v.field)).toEqual(["body[1].time"]);
    expect((await call(`${url}/messages/77`, "GET", undefined, BEARER)).status).toBe(404);
    const notJson = await call(`${url}/events/mailjet`, "POST", "{oops", MAILJET);
    expect(notJson.status).toBe(400);
  });

  it("keeps integers beyond 2^53 exact", async () => {
    const body = '{"event":"open","time":7,"MessageID":18446744073709551615,"email":"big@example.com"}';
    expect((await call(`${url}/events/mailjet`, "POST", body, MAILJET)).status).toBe(200);
    const status = await call(`${url}/messages/18446744073709551615`, "GET", undefined, BEARER);
    expect(status.text).toContain('"MessageID":18446744073709551615');
  });

  it("answers only 200 or 400 to any body, never a failure of its own", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 4 }),
          fc.array(
            fc.record(
              {
                event: fc.oneof(fc.constantFrom("sent", "open", "bounce", "spam", "unsub"), fc.string()),
                time: fc.oneof(fc.nat(), fc.double(), fc.string()),
                MessageID: fc.oneof(fc.bigInt({ min: -1n, max: 2n ** 65n }), fc.string()),
                email: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 300 })),
                Payload: fc.string({ maxLength: 50 }),
                __proto__: fc.jsonValue({ maxDepth: 2 }),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 5 },
          ),
        ),
        async (value) => {
          const text = JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v)) ?? "null";
          const answer = await call(`${url}/events/mailjet`, "POST", text, MAILJET);
          expect([200, 400]).toContain(answer.status);
          if (answer.status === 400) expect(answer.body.error.details.code).toBe("invalid_input");
        },
      ),
      { numRuns: Number(process.env.PROPS_RUNS ?? 150), seed: 20261128 },
    );
  });
});

describe("suppression", () => {
  it("holds back suppressed recipients per message, sends the rest, and sends to them on an explicit override", async () => {
    const first = await send({ Messages: [message(["spammy@example.com"], { CustomID: "s-1" })] });
    const id = first.body["messages sent"].Messages[0].To[0].MessageID;
    const spam = { event: "spam", time: 1_700_000_000, MessageID: id, email: "spammy@example.com", source: "JMRPP" };
    expect((await call(`${url}/events/mailjet`, "POST", spam, MAILJET)).status).toBe(200);

    const next = await send({
      Messages: [
        message(["spammy@example.com"]),
        message(["Spammy@Example.com", "fine@example.com"]),
        message(["fine@example.com"]),
      ],
    });
    expect(next.status).toBe(200);
    const [held, partly, clean] = next.body["messages sent"].Messages;
    expect(held.Status).toBe("error");
    expect(held.Errors).toEqual([
      expect.objectContaining({
        ErrorCode: "suppressed",
        Reason: "spam",
        Since: "2023-11-14T22:13:20.000Z",
        ErrorRelatedTo: ["To[0].Email"],
      }),
    ]);
    expect(held.To).toBeUndefined();
    expect(partly.To.map((r: { Email: string }) => r.Email)).toEqual(["fine@example.com"]);
    expect(partly.Errors.map((e: { ErrorCode: string }) => e.ErrorCode)).toEqual(["suppressed"]);
    expect(clean.Status).toBe("success");

    // Another sender is not held back by this one's list.
    const other = await send({
      Messages: [message(["spammy@example.com"], { From: { Email: "other@chainmail.test" } })],
    });
    expect(other.body["messages sent"].Messages[0].Status).toBe("success");

    const override = await send({ SendToSuppressed: true, Messages: [message(["spammy@example.com"])] });
    expect(override.body["messages sent"].Messages[0].Status).toBe("success");
  });

  it("suppresses after the configured number of soft bounces", async () => {
    const first = await send({ Messages: [message(["soft@example.com"])] });
    const id = first.body["messages sent"].Messages[0].To[0].MessageID;
    const bounce = (time: number) => ({
      event: "bounce",
      time,
      MessageID: id,
      email: "soft@example.com",
      hard_bounce: false,
    });
    await call(`${url}/events/mailjet`, "POST", [bounce(1)], MAILJET);
    expect((await send({ Messages: [message(["soft@example.com"])] })).body["messages sent"].Messages[0].Status).toBe(
      "success",
    );
    await call(`${url}/events/mailjet`, "POST", [bounce(2)], MAILJET);
    const held = await send({ Messages: [message(["soft@example.com"])] });
    expect(held.body["messages sent"].Messages[0].Errors[0]).toMatchObject({
      ErrorCode: "suppressed",
      Reason: "soft_bounce",
    });
  });
});

describe("GET /messages/<id>", () => {
  it("needs the bearer token, and names a bad id", async () => {
    expect((await call(`${url}/messages/x`, "GET")).status).toBe(401);
    const control = await call(`${url}/messages/a%0Ab`, "GET", undefined, BEARER);
    expect(control.status).toBe(400);
    expect(control.body.error.details.violations[0].field).toBe("id");
  });

  it("says when the service keeps no lifecycle", async () => {
    const bare = await startServer({
      port: 0,
      config: loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: join(dir, "o2") }),
    });
    try {
      const answer = await call(`${bare.url}/messages/x`, "GET");
      expect(answer.status).toBe(503);
      expect(answer.body.error.details).toMatchObject({ code: "not_configured", setting: "CHAINMAIL_MAIL_DB" });
    } finally {
      await bare.close();
    }
  });
});
