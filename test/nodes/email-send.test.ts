import { describe, expect, it } from "vitest";
import { stringifyJson } from "../../src/core/json.js";
import type { Logger } from "../../src/core/node.js";
import { runNode } from "../../src/core/node.js";
import { emailSend } from "../../src/nodes/index.js";
import { recipientCount, splitIntoChunks } from "../../src/transports/mailjet/chunks.js";
import { interpretSend } from "../../src/transports/mailjet/client.js";
import { testConfig } from "../support/helpers.js";
import { useMailjet } from "../support/mailjet-helpers.js";
import {
  API_KEY,
  FIRST_MESSAGE_ID,
  type MailjetServer,
  SECRET_KEY,
  SUSPENDED_KEY,
  startMailjet,
  TOO_LARGE,
  TOO_MANY_REQUESTS,
} from "../upstreams/mailjet.js";

let mj: MailjetServer;
const params = { "user id": API_KEY, password: SECRET_KEY };
const BASIC_TOKEN = Buffer.from(`${API_KEY}:${SECRET_KEY}`).toString("base64");

let seq = 0;
/** A fresh recipient address per call, so "delivered at most once" is checked across the whole file. */
const addr = (tag = "to") => `${tag}-${++seq}@example.org`;

type Msg = Record<string, unknown>;
const message = (to: string | string[], extra: Msg = {}): Msg => ({
  From: { Email: "news@chainmail.test", Name: "Chainmail" },
  To: [to].flat().map((Email) => ({ Email, Name: "Reader" })),
  Subject: "Hello",
  TextPart: "Hello there",
  ...extra,
});
const batch = (n: number, extra: Msg = {}) => Array.from({ length: n }, () => message(addr(), extra));
type Sent = { Messages?: { To: { Email: string }[] }[] };
/** A fault's `match` for the call that starts with `messages[index]` (chunks start at multiples of 50). */
const callStartingAt = (messages: unknown[], index: number) => {
  const first = (messages[index] as { To: { Email: string }[] }).To[0]!.Email;
  return (body: unknown) => (body as Sent).Messages?.[0]?.To[0]?.Email === first;
};

/** Runs the node against the local server; every output and log line is checked for the secret. */
async function send(request: unknown, env: Record<string, string> = {}, p: unknown = params) {
  const logged: unknown[] = [];
  const log = (obj: object, msg?: string) => logged.push([obj, msg]);
  const logger: Logger = { debug: log, info: log, warn: log, error: log };
  const config = testConfig({ MAILJET_BASE_URL: mj.url, ...env });
  const input = p === undefined ? { request } : { params: p, request };
  const out = await runNode(emailSend, input, { config, logger });
  const seen = stringifyJson(out) + stringifyJson(logged);
  // The API key is half of the login: as secret as the password.
  expect(seen).not.toContain(API_KEY);
  expect(seen).not.toContain(SECRET_KEY);
  expect(seen).not.toContain(BASIC_TOKEN);
  return out;
}

const statuses = (out: Awaited<ReturnType<typeof send>>) => out["messages sent"]?.Messages.map((m) => m.Status);
const errorCodes = (out: Awaited<ReturnType<typeof send>>) =>
  out["messages sent"]?.Messages.map((m) => m.Errors?.[0]?.ErrorCode ?? null);
const chunkStatuses = (out: Awaited<ReturnType<typeof send>>) =>
  (out.error?.details.chunks as { status: string }[] | undefined)?.map((c) => c.status);

useMailjet((server) => {
  mj = server;
});

describe("email-send: sending", () => {
  it("sends with HTTP Basic auth and keeps MessageIDs beyond 2^53 exact", async () => {
    const to = addr();
    const before = mj.requests.length;
    const out = await send({ Messages: [message(to, { CustomID: "order-1" })] });
    expect(out.error).toBeUndefined();
    expect(out.response?.status).toBe(200);
    const result = out["messages sent"]!.Messages[0]!;
    expect(result.Status).toBe("success");
    expect((result as { CustomID?: string }).CustomID).toBe("order-1");
    const id = result.To![0]!.MessageID;
    expect(typeof id).toBe("bigint");
    expect(id as bigint).toBeGreaterThanOrEqual(FIRST_MESSAGE_ID);
    expect(out.response!.body).toContain(String(id)); // every digit, as sent
    expect(result.To![0]!.MessageHref).toBe(`https://api.mailjet.com/v3/REST/message/${id}`);
    const request = mj.requests[before]!;
    expect(mj.requests.length).toBe(before + 1);
    expect(request.authorization).toBe(`Basic ${BASIC_TOKEN}`);
    expect(request.contentType).toBe("application/json");
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("reports a mixed batch (upstream 400) on messages sent with the upstream's per-message errors", async () => {
    const [a, b, c, d] = [addr(), addr(), addr(), addr()];
    const out = await send({
      Messages: [
        message(a),
        message(b, { From: { Email: "someone@unverified.org" } }),
        message(c, { TextPart: undefined, TemplateID: 999 }),
        message(d),
      ],
    });
    expect(out.error).toBeUndefined();
    expect(out.response?.status).toBe(400);
    expect(statuses(out)).toEqual(["success", "error", "error", "success"]);
    expect(errorCodes(out)).toEqual([null, "send-0008", "send-0010", null]);
    const entry = out["messages sent"]!.Messages[1]!.Errors![0]!;
    expect(entry.StatusCode).toBe(403);
    expect(entry.ErrorRelatedTo).toEqual(["From"]);
    expect(entry.ErrorIdentifier).toMatch(/^[0-9a-f-]{36}$/);
    expect([a, b, c, d].map((e) => mj.deliveredTo.get(e) ?? 0)).toEqual([1, 0, 0, 1]);
  });

  it("splits 120 recipients into calls of at most 50 and merges the results in input order", async () => {
    const before = mj.requests.length;
    // 40 messages with To + Cc + Bcc = 120 recipients: 16 + 16 + 8 messages.
    const messages = Array.from({ length: 40 }, () =>
      message(addr(), { Cc: [{ Email: addr("cc") }], Bcc: [{ Email: addr("bcc") }] }),
    );
    const out = await send({ Messages: messages }, { MAILJET_CONCURRENCY: "3" });
    expect(out.error).toBeUndefined();
    const calls = mj.requests.slice(before);
    expect(calls).toHaveLength(3);
    const sizes = calls.map((r) => (r.body as { Messages: unknown[] }).Messages.length).sort((x, y) => y - x);
    expect(sizes).toEqual([16, 16, 8]);
    // The response port holds the answer of the call with the last messages, whole, whichever finished last.
    const last = JSON.parse(out.response!.body) as { Messages: { To: { Email: string }[] }[] };
    expect(last.Messages.map((m) => m.To[0]!.Email)).toEqual(
      messages.slice(32).map((m) => (m.To as { Email: string }[])[0]!.Email),
    );
    const results = out["messages sent"]!.Messages;
    expect(results).toHaveLength(40);
    results.forEach((result, i) => {
      const input = messages[i] as { To: { Email: string }[]; Cc: { Email: string }[]; Bcc: { Email: string }[] };
      expect(result.To![0]!.Email).toBe(input.To[0]!.Email);
      expect(result.Cc![0]!.Email).toBe(input.Cc[0]!.Email);
      expect(result.Bcc![0]!.Email).toBe(input.Bcc[0]!.Email);
    });
    for (const m of messages as { Cc: { Email: string }[] }[]) expect(mj.deliveredTo.get(m.Cc[0]!.Email)).toBe(1);
  });

  it("keeps at most MAILJET_CONCURRENCY calls in flight", async () => {
    const before = mj.requests.length;
    mj.takeMaxInFlight();
    // Six calls, each answered after a pause, so that the workers overlap.
    mj.fault(...Array.from({ length: 6 }, () => ({ delayMs: 60 })));
    const out = await send({ Messages: batch(300) }, { MAILJET_CONCURRENCY: "2" });
    expect(out.error).toBeUndefined();
    expect(mj.requests.length - before).toBe(6);
    expect(mj.takeMaxInFlight()).toBe(2);
  });

  it("keeps every slot busy: a slow call does not hold back the calls after it, and results stay in input order", async () => {
    const messages = batch(300).map((m, i): Msg => ({ ...m, CustomID: `slot-${seq}-${i}` }));
    const first = (messages[0]!.To as { Email: string }[])[0]!.Email;
    // The first call (messages 0-49) is answered 400 ms late; the other five at once.
    mj.fault({ match: (body) => stringifyJson(body).includes(first), delayMs: 400 });
    mj.takeMaxInFlight();
    const out = await send({ Messages: messages }, { MAILJET_CONCURRENCY: "2" });
    expect(out.error).toBeUndefined();
    expect(mj.takeMaxInFlight()).toBe(2);
    const at = (i: number) => mj.deliveries.find((d) => d.customId === `slot-${seq}-${i}`)!.at;
    // The second slot took calls 2..6 one after the other while the first was still waiting: waiting for the
    // slowest of each pair would have delivered messages 100-299 only after message 0.
    for (const i of [50, 100, 150, 200, 250, 299]) expect(at(i)).toBeLessThan(at(0));
    const results = out["messages sent"]!.Messages;
    expect(results.map((r) => (r as { CustomID?: string }).CustomID)).toEqual(messages.map((m) => m.CustomID));
  });

  it("counts Globals Cc/Bcc for every message and a repeated address once when splitting", () => {
    const one = (to: string, extra: Msg = {}) => message(to, extra);
    const messages = Array.from({ length: 30 }, (_, i) =>
      one(`g${i}@example.org`, { Cc: [{ Email: `G${i}@example.org` }] }),
    );
    // Each message: 1 distinct recipient (To and Cc differ only in case) + 1 global Bcc = 2: 25 per call.
    const chunks = splitIntoChunks(messages, { Bcc: [{ Email: "archive@example.org" }] });
    expect(chunks).toEqual([
      { index: 0, first: 0, last: 24 },
      { index: 1, first: 25, last: 29 },
    ]);
    // 50 messages per call at most, even with no recipients counted.
    expect(splitIntoChunks(Array.from({ length: 101 }, () => ({}))).map((c) => c.last - c.first + 1)).toEqual([
      50, 50, 1,
    ]);
    // A message above the limit (rejected by the node's check) still gets a call of its own.
    expect(
      recipientCount(one("a@example.org", { Bcc: Array.from({ length: 60 }, (_, i) => ({ Email: `b${i}@x.org` })) })),
    ).toBe(61);
  });

  it("forwards fields the schema does not list, and the root fields to every call", async () => {
    const before = mj.requests.length;
    const messages = batch(60, { ReplyTo: { Email: "help@chainmail.test" }, Priority: 3, TrackOpens: "disabled" });
    const request = {
      Messages: messages,
      Globals: { Headers: { "X-Campaign": "spring" } },
      AdvanceErrorHandling: true,
    };
    const out = await send(request);
    expect(statuses(out)).toEqual(Array(60).fill("success"));
    const calls = mj.requests.slice(before).map((r) => r.body as Record<string, unknown>);
    expect(calls).toHaveLength(2);
    for (const body of calls) {
      expect(body.Globals).toEqual({ Headers: { "X-Campaign": "spring" } });
      expect(body.AdvanceErrorHandling).toBe(true);
      const first = (body.Messages as Msg[])[0]!;
      expect(first.ReplyTo).toEqual({ Email: "help@chainmail.test" });
      expect(first.Priority).toBe(3);
      expect(first.TrackOpens).toBe("disabled");
    }
  });

  it("passes SandboxMode results (empty MessageUUID, MessageID 0) through and delivers nothing", async () => {
    const to = addr();
    const out = await send({ Messages: [message(to)], SandboxMode: true });
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages[0]!.To).toEqual([
      { Email: to, MessageUUID: "", MessageID: 0, MessageHref: "https://api.mailjet.com/v3/REST/message/0" },
    ]);
    expect(mj.deliveredTo.get(to)).toBeUndefined();
  });

  it("uses the operator's MAILJET_API_KEY / MAILJET_SECRET_KEY when params are omitted", async () => {
    const to = addr();
    const out = await send(
      { Messages: [message(to)] },
      { MAILJET_API_KEY: API_KEY, MAILJET_SECRET_KEY: SECRET_KEY },
      undefined,
    );
    expect(statuses(out)).toEqual(["success"]);
    expect(mj.deliveredTo.get(to)).toBe(1);
  });
});

describe("email-send: the API key (user id) is a secret", () => {
  const echo = (text: string) => `${text} (API key ${API_KEY})`;

  it("never reaches messages sent, response or error when Mailjet echoes it", async () => {
    const to = addr();
    mj.fault({
      status: 400,
      body: JSON.stringify({
        Messages: [
          {
            Status: "error",
            Errors: [
              {
                ErrorIdentifier: "1c5d1c2a-1111-4d3e-8f00-000000000001",
                ErrorCode: "send-0008",
                StatusCode: 403,
                ErrorMessage: echo('"x@y.z" is not an authorized sender'),
                ErrorRelatedTo: ["From"],
              },
            ],
          },
        ],
      }),
      headers: { "content-type": "application/json", "x-mj-key": API_KEY },
    });
    const processed = await send({ Messages: [message(to)] });
    const text = stringifyJson(processed);
    expect(text).toContain("is not an authorized sender (API key [REDACTED])");
    expect(processed.response?.headers["x-mj-key"]).toBe("[REDACTED]");

    mj.fault({
      status: 401,
      body: JSON.stringify({ ErrorIdentifier: "x", StatusCode: 401, ErrorMessage: echo("Unknown") }),
      headers: { "content-type": "application/json" },
    });
    const refused = await send({ Messages: [message(addr())] });
    expect(refused.error?.details.code).toBe("upstream_auth");
    expect(refused.error?.error).toContain("[REDACTED]");
    // `send` has checked that the key appears nowhere in the outputs or the log lines.
  });

  it("is not echoed by a validation error about it", async () => {
    const out = await send({ Messages: [message(addr())] }, {}, { "user id": 123456789, password: SECRET_KEY });
    expect(out.error?.details.code).toBe("invalid_input");
    expect(stringifyJson(out)).not.toContain("123456789");
  });
});

describe("email-send: validation", () => {
  it("reports every violation at once, naming message index and field, and sends nothing", async () => {
    const before = mj.requests.length;
    const out = await send(
      {
        SandboxMode: false,
        Messages: [
          message(["ok@example.org", "not-an-address"], { TemplateLanguage: false }),
          message("x@123.4", {
            Cc: [{ Email: "cc@example" }],
            Attachments: [{ ContentType: "text/plain", Filename: "a.txt", Base64Content: "not base64!" }],
          }),
          message(addr(), { TextPart: undefined }),
          message(
            Array.from({ length: 51 }, (_, i) => `r${i}@example.org`),
            { Subject: "s".repeat(256), DeduplicateCampaign: true },
          ),
          message(addr(), { Headers: { "X-Ok": "1", "Message-Id": "<x@y>" }, TemplateID: "12" }),
        ],
      },
      {},
      { "user id": API_KEY },
    );
    expect(out["messages sent"]).toBeUndefined();
    expect(out.error?.details.code).toBe("invalid_input");
    const fields = (out.error!.details.violations as { field: string }[]).map((v) => v.field).sort();
    expect(fields).toEqual(
      [
        "params.password",
        "request.SandboxMode",
        "request.Messages[0].TemplateLanguage",
        "request.Messages[0].To[1].Email",
        "request.Messages[1].To[0].Email",
        "request.Messages[1].Cc[0].Email",
        "request.Messages[1].Attachments[0].Base64Content",
        "request.Messages[2]",
        "request.Messages[3]",
        "request.Messages[3].Subject",
        "request.Messages[3].DeduplicateCampaign",
        'request.Messages[4].Headers["Message-Id"]',
        "request.Messages[4].TemplateID",
      ].sort(),
    );
    expect(out.error!.error).toContain("request.SandboxMode = false is invalid: must be true");
    expect(out.error!.error).toContain(
      'request.Messages[1].To[0].Email = "x@123.4" is invalid: must be an email address',
    );
    expect(out.error!.error).toContain("request.Messages[3] has 51 recipients");
    expect(out.error!.error).toContain("request.Messages[2] has no content");
    expect(mj.requests.length).toBe(before);
  });

  it("applies Mailjet's own rules (50 recipients per message, no colon in the API key) only with mailjet", async () => {
    const before = mj.requests.length;
    const big = message(Array.from({ length: 51 }, (_, i) => `big${i}@example.org`));
    const out = await send({ Messages: [big] }, {}, { "user id": "key:part", password: SECRET_KEY });
    expect(out.error?.details.code).toBe("invalid_input");
    const fields = (out.error!.details.violations as { field: string }[]).map((v) => v.field).sort();
    expect(fields).toEqual(['params["user id"]', "request.Messages[0]"]);
    expect(mj.requests.length).toBe(before);
  });

  it("accepts Base64 with line breaks, TemplateID without parts, and plus-addressed or international addresses", async () => {
    const to = addr();
    const out = await send({
      Messages: [
        message(to, {
          TextPart: undefined,
          TemplateID: 4242,
          TemplateLanguage: true,
          Variables: { name: "Ada", items: [1, 2] },
          Cc: [{ Email: "ada+news@example.org" }],
          Attachments: [{ ContentType: "text/plain", Filename: "a.txt", Base64Content: "SGVsbG8g\r\nd29ybGQ=" }],
        }),
      ],
    });
    expect(out.error).toBeUndefined();
    expect(statuses(out)).toEqual(["success"]);
  });
});

describe("email-send: failures, retries and never twice", () => {
  it("retries a 429 (nothing was delivered) and sends once", async () => {
    const to = addr();
    const before = mj.requests.length;
    mj.fault(TOO_MANY_REQUESTS);
    const out = await send({ Messages: [message(to)] });
    expect(out.error).toBeUndefined();
    expect(statuses(out)).toEqual(["success"]);
    expect(mj.requests.length - before).toBe(2);
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("reports 429 after every retry as not sent, with the HTML answer on response", async () => {
    const to = addr();
    const before = mj.requests.length;
    mj.fault(TOO_MANY_REQUESTS, TOO_MANY_REQUESTS, TOO_MANY_REQUESTS);
    const out = await send({ Messages: [message(to)] }, { MAILJET_MAX_RETRIES: "2" });
    expect(out.error?.details.code).toBe("upstream_rate_limited");
    expect(out["messages sent"]).toBeUndefined();
    expect(out.response?.status).toBe(429);
    expect(out.response?.body).toContain("429 Too Many Requests");
    expect(out.error?.details.chunks).toEqual([
      { index: 0, messages: [0, 0], status: "not_sent", http_status: 429, error_code: "upstream_rate_limited" },
    ]);
    expect(out.error?.details.messages).toEqual({ sent: [], not_sent: [0], unknown: [] });
    expect(mj.requests.length - before).toBe(3);
    expect(mj.deliveredTo.get(to)).toBeUndefined();
  });

  it("never retries a timeout, and says delivery is unknown", async () => {
    const to = addr();
    const before = mj.requests.length;
    mj.fault({ deliver: true, delayMs: 1_500 });
    const out = await send({ Messages: [message(to)] }, { MAILJET_TIMEOUT_MS: "300" });
    expect(out.error?.details.code).toBe("upstream_timeout");
    expect(out.error?.details.chunks).toEqual([
      { index: 0, messages: [0, 0], status: "unknown", error_code: "upstream_timeout" },
    ]);
    expect(errorCodes(out)).toEqual(["chainmail-delivery-unknown"]);
    // One rule for every transport: 409 (below 500) so Mailjet's safe-retry rule never resends it (was 0).
    expect(out["messages sent"]!.Messages[0]!.Errors![0]!.StatusCode).toBe(409);
    expect(out["messages sent"]!.Messages[0]!.Errors![0]!.ErrorRelatedTo).toEqual([]);
    expect(out.error?.details.messages).toEqual({ sent: [], not_sent: [], unknown: [0] });
    expect(mj.requests.length - before).toBe(1);
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("an answer that starts at once and then trickles past the timeout: upstream_timeout, delivery unknown, not resent", async () => {
    const to = addr();
    const before = mj.requests.length;
    mj.fault({ deliver: true, trickleMs: 50 });
    const out = await send({ Messages: [message(to)] }, { MAILJET_TIMEOUT_MS: "300" });
    expect(out.error?.details.code).toBe("upstream_timeout");
    expect(out.error?.details.chunks).toEqual([
      { index: 0, messages: [0, 0], status: "unknown", error_code: "upstream_timeout" },
    ]);
    expect(out.error?.error).not.toContain("UNKNOWN");
    expect(errorCodes(out)).toEqual(["chainmail-delivery-unknown"]);
    expect(mj.requests.length - before).toBe(1);
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("never retries a 500 once the request reached the upstream, and keeps its ErrorIdentifier", async () => {
    const to = addr();
    const before = mj.requests.length;
    const identifier = "1b0e4c5a-0000-4000-8000-000000000500";
    mj.fault({
      deliver: true,
      status: 500,
      body: JSON.stringify({ ErrorIdentifier: identifier, StatusCode: 500, ErrorMessage: "Internal Server Error" }),
    });
    const out = await send({ Messages: [message(to)] });
    expect(out.error?.details.code).toBe("upstream_server_error");
    expect(out.error?.details.upstream_identifier).toBe(identifier);
    expect(out.error?.error).toContain(identifier);
    expect(chunkStatuses(out)).toEqual(["unknown"]);
    expect(errorCodes(out)).toEqual(["chainmail-delivery-unknown"]);
    // The HTTP status stays in details.chunks; the entry follows the one rule (was 500, which invites a resend).
    expect(out["messages sent"]!.Messages[0]!.Errors![0]!.StatusCode).toBe(409);
    expect(out.error!.details.chunks).toMatchObject([{ http_status: 500, status: "unknown" }]);
    expect(mj.requests.length - before).toBe(1);
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("never retries an empty 503 or a dropped connection", async () => {
    const [a, b] = [addr(), addr()];
    const before = mj.requests.length;
    mj.fault({ status: 503, headers: { "content-type": "text/html" } });
    const first = await send({ Messages: [message(a)] });
    expect(first.error?.details.code).toBe("upstream_server_error");
    mj.fault({ deliver: true, destroy: true });
    const second = await send({ Messages: [message(b)] });
    expect(second.error?.details.code).toBe("upstream_unreachable");
    expect(second.error?.details.request_sent).toBe(true);
    expect(chunkStatuses(second)).toEqual(["unknown"]);
    expect(mj.requests.length - before).toBe(2);
    expect(mj.deliveredTo.get(b)).toBe(1);
  });

  it("retries a refused connection (never delivered) and reports it as not sent", async () => {
    const closed = await startMailjet();
    const url = closed.url;
    await closed.close();
    const config = testConfig({ MAILJET_BASE_URL: url, MAILJET_MAX_RETRIES: "2" });
    const attempts: string[] = [];
    const out = await runNode(
      emailSend,
      { params, request: { Messages: [message(addr())] } },
      { config, onUpstreamAttempt: (e) => attempts.push(e.outcome.kind) },
    );
    expect(out.error?.details.code).toBe("upstream_unreachable");
    expect(out.error?.details.request_sent).toBe(false);
    expect(chunkStatuses(out)).toEqual(["not_sent"]);
    expect(out["messages sent"]).toBeUndefined();
    expect(attempts).toEqual(["network", "network", "network"]);
  });

  it("reports bad credentials as upstream_auth, stops the batch and never shows the password", async () => {
    const before = mj.requests.length;
    const wrong = "wrong-secret-0123456789";
    const messages = batch(120);
    const out = await send(
      { Messages: messages },
      { MAILJET_CONCURRENCY: "1" },
      { "user id": API_KEY, password: wrong },
    );
    expect(out.error?.details.code).toBe("upstream_auth");
    expect(out.error?.error).toContain("API key authentication/authorization failure");
    expect(out["messages sent"]).toBeUndefined();
    expect(out.response?.status).toBe(401);
    expect(chunkStatuses(out)).toEqual(["not_sent", "not_sent", "not_sent"]);
    expect((out.error!.details.chunks as { error_code: string }[]).map((c) => c.error_code)).toEqual([
      "upstream_auth",
      "not_attempted",
      "not_attempted",
    ]);
    expect(mj.requests.length - before).toBe(1);
    expect(stringifyJson(out)).not.toContain(wrong);
    expect(stringifyJson(out)).not.toContain(Buffer.from(`${API_KEY}:${wrong}`).toString("base64"));
  });

  it("names a suspended key (mj-0001)", async () => {
    const out = await send({ Messages: [message(addr())] }, {}, { "user id": SUSPENDED_KEY, password: SECRET_KEY });
    expect(out.error?.details.code).toBe("upstream_auth");
    expect(out.error?.details.upstream_code).toBe("mj-0001");
    expect(out.error?.error).toContain("suspended");
  });

  it("reports 413 (HTML) as too large and not sent", async () => {
    const to = addr();
    mj.fault(TOO_LARGE);
    const out = await send({ Messages: [message(to)] });
    expect(out.error?.details.code).toBe("upstream_too_large");
    expect(chunkStatuses(out)).toEqual(["not_sent"]);
    expect(out.response?.body).toContain("413 Request Entity Too Large");
    expect(mj.deliveredTo.get(to)).toBeUndefined();
  });

  it("reports a request-level rejection with the upstream's identifiers in details", async () => {
    const out = await send({ Messages: [message(addr(), { ReplyTo: "help@chainmail.test" })] });
    expect(out.error?.details.code).toBe("upstream_rejected");
    expect(out.error?.details.upstream_code).toBe("mj-0004");
    expect(out.error?.details.upstream_related_to).toEqual(["Messages.ReplyTo"]);
    expect(out.error?.details.upstream_identifier).toMatch(/^[0-9a-f-]{36}$/);
    expect(out["messages sent"]).toBeUndefined();
  });

  it("a request-level rejection (422 or 400) says nothing was sent and what to fix before sending again", async () => {
    mj.fault({
      status: 422,
      body: JSON.stringify({
        ErrorIdentifier: "9b2c0d6e-2222-4a1b-9c3d-000000000422",
        ErrorCode: "mj-0004",
        StatusCode: 422,
        ErrorMessage: "Type mismatch.",
        ErrorRelatedTo: ["Messages.Variables"],
      }),
      headers: { "content-type": "application/json" },
    });
    const out = await send({ Messages: [message(addr())] });
    expect(out.error?.details).toMatchObject({ code: "upstream_rejected", status: 422 });
    expect(out.error?.error).toContain(
      "Nothing of this call was sent. Fix Messages.Variables as Mailjet says, then send these messages again.",
    );
    mj.fault({ status: 422, body: "", headers: { "content-type": "text/plain" } });
    const bare = await send({ Messages: [message(addr())] });
    expect(bare.error?.error).toContain("Check the request against the Send API v3.1");
  });

  it("a connection that broke after the request was sent says to check before resending", async () => {
    const to = addr();
    mj.fault({ deliver: true, destroy: true });
    const out = await send({ Messages: [message(to)] });
    expect(out.error?.details).toMatchObject({ code: "upstream_unreachable", request_sent: true });
    expect(out.error?.error).toContain("broke before an answer");
    expect(out.error?.error).toContain("it may have taken effect: check the upstream (for email, its message history)");
    expect(mj.deliveredTo.get(to)).toBe(1);
  });

  it("reports an error inside Globals as a rejection of the whole request", async () => {
    const out = await send({ Messages: [message(addr())], Globals: { To: [{ Email: addr() }] } });
    expect(out.error?.details.code).toBe("upstream_rejected");
    expect(out.error?.details.in).toBe("Globals");
    expect(out.error?.details.upstream_code).toBe("mj-0004");
  });

  it("after a 5xx mid-batch: sent chunks keep their results, later ones are not attempted, a resend of not_sent delivers each message once", async () => {
    const messages = batch(150);
    mj.fault({
      match: callStartingAt(messages, 50),
      deliver: true,
      status: 502,
      body: "",
    });
    const out = await send({ Messages: messages }, { MAILJET_CONCURRENCY: "1" });
    expect(out.error?.details.code).toBe("partial_failure");
    expect(out.error?.details.sent_messages).toBe(50);
    expect(out.error?.details.chunks).toEqual([
      { index: 0, messages: [0, 49], status: "sent", http_status: 200 },
      { index: 1, messages: [50, 99], status: "unknown", http_status: 502, error_code: "upstream_server_error" },
      { index: 2, messages: [100, 149], status: "not_sent", error_code: "not_attempted" },
    ]);
    expect(out.response?.status).toBe(502);
    const codes = errorCodes(out)!;
    expect(codes.slice(0, 50)).toEqual(Array(50).fill(null));
    expect(codes.slice(50, 100)).toEqual(Array(50).fill("chainmail-delivery-unknown"));
    expect(codes.slice(100)).toEqual(Array(50).fill("chainmail-not-sent"));
    const entries = out["messages sent"]!.Messages.map((m) => m.Errors?.[0]);
    expect(new Set(entries.slice(50).map((e) => e!.StatusCode))).toEqual(new Set([409, 503]));
    expect(entries[100]!.StatusCode).toBe(503);
    // The messages of one failed call share their ErrorIdentifier.
    expect(new Set(entries.slice(100).map((e) => e!.ErrorIdentifier)).size).toBe(1);
    const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
    expect(out.error?.details.messages).toEqual({
      sent: range(0, 50),
      unknown: range(50, 100),
      not_sent: range(100, 150),
    });

    // The caller resends exactly the messages of not_sent chunks.
    const notSent = (out.error!.details.chunks as { status: string; messages: [number, number] }[])
      .filter((c) => c.status === "not_sent")
      .flatMap((c) => messages.slice(c.messages[0], c.messages[1] + 1));
    const resend = await send({ Messages: notSent });
    expect(resend.error).toBeUndefined();
    for (const m of messages as { To: { Email: string }[] }[]) expect(mj.deliveredTo.get(m.To[0]!.Email)).toBe(1);
  });

  it("reads a 200 while the next call is on its way: an unreadable one stops the batch after that one call", async () => {
    const messages = batch(200);
    mj.fault({
      match: callStartingAt(messages, 0),
      deliver: true,
      status: 200,
      body: "<html>not the Send API</html>",
    });
    const before = mj.requests.length;
    const out = await send({ Messages: messages }, { MAILJET_CONCURRENCY: "1" });
    expect(out.error?.details.code).toBe("partial_failure");
    // The second call left before the first answer was read; nothing after it.
    expect(mj.requests.length - before).toBe(2);
    expect(chunkStatuses(out)).toEqual(["unknown", "sent", "not_sent", "not_sent"]);
    for (const m of messages.slice(0, 100) as { To: { Email: string }[] }[])
      expect(mj.deliveredTo.get(m.To[0]!.Email)).toBe(1);
    for (const m of messages.slice(100) as { To: { Email: string }[] }[])
      expect(mj.deliveredTo.get(m.To[0]!.Email)).toBeUndefined();
  });

  it("keeps going after a chunk refused for its own content (413), reporting a partial failure", async () => {
    const messages = batch(150);
    mj.fault({
      ...TOO_LARGE,
      match: callStartingAt(messages, 50),
    });
    const out = await send({ Messages: messages }, { MAILJET_CONCURRENCY: "2" });
    expect(out.error?.details.code).toBe("partial_failure");
    expect(chunkStatuses(out)).toEqual(["sent", "not_sent", "sent"]);
    expect(out.error?.error).toContain("chunk 1 (messages 50-99)");
    expect(statuses(out)!.filter((s) => s === "success")).toHaveLength(100);
    expect(out.response?.status).toBe(413);
  });
});

describe("email-send: when messages sent is present on failure (mailjet)", () => {
  it("left out when every message is merely not sent: a send cancelled before any call says aborted", async () => {
    const before = mj.requests.length;
    const controller = new AbortController();
    controller.abort();
    const config = testConfig({ MAILJET_BASE_URL: mj.url });
    const out = await runNode(
      emailSend,
      { params, request: { Messages: batch(60) } },
      { config, signal: controller.signal },
    );
    expect(out["messages sent"]).toBeUndefined();
    expect(out.error?.details.code).toBe("aborted");
    expect(out.error?.details.messages).toEqual({
      sent: [],
      not_sent: Array.from({ length: 60 }, (_, i) => i),
      unknown: [],
    });
    expect(chunkStatuses(out)).toEqual(["not_sent", "not_sent"]);
    expect(mj.requests.length - before).toBe(0);
  });
});

describe("email-send: reading Mailjet answers", () => {
  const raw = (status: number, body: string) => ({ status, headers: {}, body });
  const ok = (n: number) =>
    JSON.stringify({ Messages: Array.from({ length: n }, () => ({ Status: "success", To: [], Cc: [], Bcc: [] })) });

  it("treats answers without one result per message as delivery unknown, or not sent when nothing was processed", () => {
    expect(interpretSend(raw(200, ok(2)), 2, 1).status).toBe("sent");
    const short = interpretSend(raw(200, ok(1)), 2, 1);
    expect(short.status).toBe("unknown");
    expect(short.status !== "sent" && short.error.code).toBe("upstream_bad_response");
    expect(interpretSend(raw(400, ok(1)), 2, 1).status).toBe("unknown");
    expect(interpretSend(raw(200, "<html></html>"), 2, 1).status).toBe("unknown");
    const legacy = interpretSend(
      raw(400, '{"Errors":[{"ErrorCode":"mj-0003","ErrorMessage":"Missing mandatory property."}],"Messages":[]}'),
      2,
      1,
    );
    expect(legacy.status).toBe("not_sent");
    const malformed = interpretSend(
      raw(400, '{"ErrorIdentifier":"06df1144","ErrorCode":"mj-0002","ErrorMessage":"Malformed JSON","StatusCode":400}'),
      2,
      1,
    );
    expect(malformed.status !== "sent" && malformed.error.toPayload().details).toMatchObject({
      code: "upstream_rejected",
      upstream_code: "mj-0002",
      upstream_identifier: "06df1144",
    });
    expect(interpretSend(raw(404, "Not Found"), 2, 1).status).toBe("not_sent");
  });
});
