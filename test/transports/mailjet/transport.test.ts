/**
 * src/transports/mailjet/transport.ts on its own, against the local Mailjet server: a batch split into calls of at
 * most 50, sent with at most MAILJET_CONCURRENCY at once, merged back in input order; a failure every call would
 * share stops the calls not yet started, a call refused for its own content does not; a cancelled send starts
 * nothing more. Nothing is ever delivered twice.
 */
import { describe, expect, it } from "vitest";
import type { Logger } from "../../../src/core/node.js";
import type { EmailRequest } from "../../../src/schemas/email.js";
import { mailjetTransport } from "../../../src/transports/mailjet/transport.js";
import { testConfig } from "../../support/helpers.js";
import { useMailjet } from "../../support/mailjet-helpers.js";
import { API_KEY, type MailjetServer, SECRET_KEY, TOO_LARGE } from "../../upstreams/mailjet.js";

const params = { "user id": API_KEY, password: SECRET_KEY };

let mj: MailjetServer;
useMailjet((server) => {
  mj = server;
});

let seq = 0;
const batch = (n: number) =>
  Array.from({ length: n }, () => ({
    From: { Email: "news@chainmail.test" },
    To: [{ Email: `batch-${++seq}@example.org` }],
    TextPart: "Hello",
  }));
type Body = { Messages: { To: { Email: string }[] }[] };
const startsWith = (messages: ReturnType<typeof batch>, index: number) => (body: unknown) =>
  (body as Body).Messages?.[0]?.To[0]?.Email === messages[index]!.To[0]!.Email;

function send(request: EmailRequest, env: Record<string, string> = {}, extra: { signal?: AbortSignal } = {}) {
  const config = testConfig({ MAILJET_BASE_URL: mj.url, MAILJET_MAX_RETRIES: "0", ...env });
  const transport = mailjetTransport(config);
  expect(transport.name).toBe("mailjet");
  return transport.send(request, params, { config, ...extra });
}
const sentSince = (before: number) => mj.requests.slice(before).map((r) => (r.body as Body).Messages.length);

describe("mailjetTransport.send", () => {
  it("splits 120 messages into calls of 50, 50 and 20 and answers one result per message, in input order", async () => {
    const messages = batch(120);
    const before = mj.requests.length;
    const out = await send({ Messages: messages } as EmailRequest, { MAILJET_CONCURRENCY: "3" });
    expect(out.error).toBeUndefined();
    expect(sentSince(before).sort((a, b) => b - a)).toEqual([50, 50, 20]);
    const results = out["messages sent"]!.Messages;
    expect(results.map((r) => r.To![0]!.Email)).toEqual(messages.map((m) => m.To[0]!.Email));
    expect(out.response!.status).toBe(200);
  });

  it("runs at most MAILJET_CONCURRENCY calls at once", async () => {
    mj.takeMaxInFlight();
    mj.fault(...Array.from({ length: 4 }, () => ({ delayMs: 40 })));
    await send({ Messages: batch(200) } as EmailRequest, { MAILJET_CONCURRENCY: "2" });
    expect(mj.takeMaxInFlight()).toBe(2);
  });

  it("passes fields it does not know (Globals, SandboxMode) to every call unchanged", async () => {
    const before = mj.requests.length;
    const request = { Globals: { Subject: "Shared" }, SandboxMode: true, Messages: batch(60) };
    const out = await send(request as EmailRequest, { MAILJET_CONCURRENCY: "1" });
    expect(out.error).toBeUndefined();
    const bodies = mj.requests.slice(before).map((r) => r.body as Record<string, unknown>);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) expect(body).toMatchObject({ Globals: { Subject: "Shared" }, SandboxMode: true });
  });

  it("a failure every call would share (credentials) stops the calls not started: they are not_attempted", async () => {
    const before = mj.requests.length;
    const warnings: unknown[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (obj) => void warnings.push(obj), error() {} };
    const config = testConfig({ MAILJET_BASE_URL: mj.url, MAILJET_CONCURRENCY: "1" });
    const out = await mailjetTransport(config).send(
      { Messages: batch(120) } as EmailRequest,
      { "user id": API_KEY, password: "wrong-secret-0000" },
      { config, logger },
    );
    expect(mj.requests.length - before).toBe(1);
    expect(out.error!.details.code).toBe("upstream_auth");
    const chunks = out.error!.details.chunks as { status: string; error_code: string }[];
    expect(chunks.map((c) => [c.status, c.error_code])).toEqual([
      ["not_sent", "upstream_auth"],
      ["not_sent", "not_attempted"],
      ["not_sent", "not_attempted"],
    ]);
    expect(warnings).toEqual([{ transport: "mailjet", chunk: 0, status: "not_sent", code: "upstream_auth" }]);
  });

  it("a call refused for its own content (413) does not stop the others", async () => {
    const messages = batch(120);
    mj.fault({ match: startsWith(messages, 50), ...TOO_LARGE });
    const out = await send({ Messages: messages } as EmailRequest, { MAILJET_CONCURRENCY: "1" });
    expect(out.error!.details.code).toBe("partial_failure");
    const statuses = out.error!.details.messages as { sent: number[]; not_sent: number[]; unknown: number[] };
    expect(statuses.not_sent).toEqual(Array.from({ length: 50 }, (_, i) => 50 + i));
    expect(statuses.sent).toHaveLength(70);
    expect(statuses.unknown).toEqual([]);
  });

  it("a 5xx stops the batch too, and its messages are delivery unknown", async () => {
    const messages = batch(120);
    mj.fault({ match: startsWith(messages, 0), deliver: true, status: 502, body: "" });
    const out = await send({ Messages: messages } as EmailRequest, { MAILJET_CONCURRENCY: "1" });
    const statuses = out.error!.details.messages as { sent: number[]; not_sent: number[]; unknown: number[] };
    expect(statuses.unknown).toHaveLength(50);
    expect(statuses.not_sent).toHaveLength(70);
    expect(out.error!.details.code).toBe("upstream_server_error");
  });

  it("a send cancelled before it starts sends nothing and says aborted", async () => {
    const before = mj.requests.length;
    const controller = new AbortController();
    controller.abort();
    const out = await send({ Messages: batch(3) } as EmailRequest, {}, { signal: controller.signal });
    expect(mj.requests.length).toBe(before);
    expect(out.error!.details.code).toBe("aborted");
    expect(out.error!.details.messages).toEqual({ sent: [], not_sent: [0, 1, 2], unknown: [] });
  });

  it("looks messages up in Mailjet's message history", async () => {
    const messages = batch(1).map((m) => ({ ...m, CustomID: "transport-lookup-1" }));
    await send({ Messages: messages } as EmailRequest);
    const config = testConfig({ MAILJET_BASE_URL: mj.url });
    const found = await mailjetTransport(config).lookup(["transport-lookup-1"], params, { config });
    expect(found.get("transport-lookup-1")!.To!.map((r) => r.Email)).toEqual([messages[0]!.To[0]!.Email]);
  });
});
