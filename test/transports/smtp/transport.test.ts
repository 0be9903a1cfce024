import { type AddressObject, simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { type RunContext, runNode } from "../../../src/core/node.js";
import { emailSend } from "../../../src/nodes/index.js";
import type { EmailRequest, MessageResult } from "../../../src/schemas/email.js";
import { smtpTransport } from "../../../src/transports/smtp/transport.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { SMTP_PASSWORD, SMTP_USER, type SmtpTestServer, startSmtp } from "../../upstreams/smtp.js";

const params = { "user id": SMTP_USER, password: SMTP_PASSWORD };
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
const PDF = Buffer.from("%PDF-1.4 fake but faithful bytes\n");

function send(server: SmtpTestServer, request: EmailRequest, p: Record<string, string> = params, env = {}) {
  const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url(null), ...env });
  const ctx: RunContext = { config };
  return smtpTransport(config).send(request, p as never, ctx);
}

const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) => a.value.map((v) => v.address));

const message = (n: number, extra: Record<string, unknown> = {}) => ({
  From: { Email: "sender@chainmail.test", Name: "Chainmail" },
  To: [{ Email: `to${n}@example.test` }],
  Subject: `Message ${n}`,
  TextPart: `Body ${n}`,
  ...extra,
});

describe("smtp transport: what the server receives", () => {
  let server: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtp();
  });
  afterAll(() => server.close());

  it("renders every field as a correct MIME message; Bcc only in the envelope", async () => {
    const out = await send(server, {
      Messages: [
        {
          From: { Email: "sales@chainmail.test", Name: "Chainmail Sales" },
          To: [{ Email: "alice@example.test", Name: "Alice Ä." }, { Email: "bob@example.test" }],
          Cc: [{ Email: "carol@example.test", Name: "Carol" }],
          Bcc: [{ Email: "dave@example.test" }],
          Subject: 'Your sale of {{var:token}} — {{var:missing:"n/a"}}',
          TextPart: 'Hello {{var:name}}, price {{var:price}} ETH. Market: {{ var:market:"unknown" }}',
          HTMLPart: '<p>Hello {{var:name}}</p><img src="cid:logo1">',
          TemplateLanguage: true,
          Variables: { name: "Alice <admin>", price: 1.5, token: "#42" },
          Attachments: [
            { ContentType: "application/pdf", Filename: "receipt.pdf", Base64Content: PDF.toString("base64") },
          ],
          InlinedAttachments: [
            {
              ContentType: "image/png",
              Filename: "logo.png",
              ContentID: "logo1",
              Base64Content: PNG.toString("base64"),
            },
          ],
          Headers: { "X-Campaign-Owner": "team-nft", "Reply-To": "support@chainmail.test" },
          CustomID: "sale-42",
          EventPayload: '{"sale":42}',
        },
      ],
    });
    expect(out.error).toBeUndefined();
    expect(server.received).toHaveLength(1);
    const got = server.received[0]!;
    expect(got.from).toBe("sales@chainmail.test");
    expect(got.to).toEqual(["alice@example.test", "bob@example.test", "carol@example.test", "dave@example.test"]);
    expect(got.user).toBe(SMTP_USER);
    expect(got.raw.toString()).not.toMatch(/^Bcc:/im);
    expect(got.raw.toString()).not.toContain("dave@example.test");

    const mail = await simpleParser(got.raw);
    expect(mail.from?.value).toEqual([{ address: "sales@chainmail.test", name: "Chainmail Sales" }]);
    expect(addresses(mail.to)).toEqual(["alice@example.test", "bob@example.test"]);
    expect((mail.to as AddressObject).value[0]!.name).toBe("Alice Ä.");
    expect(addresses(mail.cc)).toEqual(["carol@example.test"]);
    expect(mail.bcc).toBeUndefined();
    expect(mail.subject).toBe("Your sale of #42 — n/a");
    expect(mail.text?.trim()).toBe("Hello Alice <admin>, price 1.5 ETH. Market: unknown");
    expect(mail.html).toContain("<p>Hello Alice &lt;admin&gt;</p>");
    expect(mail.headers.get("x-campaign-owner")).toBe("team-nft");
    expect(addresses(mail.replyTo)).toEqual(["support@chainmail.test"]);
    expect(mail.headers.get("x-mj-customid")).toBe("sale-42");
    expect(mail.headers.get("x-mj-eventpayload")).toBe('{"sale":42}');
    expect(mail.headers.get("content-type")).toMatchObject({ value: "multipart/mixed" });
    expect(got.raw.toString()).toMatch(/Content-Type: multipart\/alternative/);
    expect(got.raw.toString()).toMatch(/Content-Type: multipart\/related/);

    const pdf = mail.attachments.find((a) => a.filename === "receipt.pdf")!;
    expect(pdf.contentType).toBe("application/pdf");
    expect(pdf.content.equals(PDF)).toBe(true);
    expect(pdf.contentDisposition).toBe("attachment");
    const logo = mail.attachments.find((a) => a.filename === "logo.png")!;
    expect(logo.contentType).toBe("image/png");
    expect(logo.cid).toBe("logo1");
    expect(logo.related).toBe(true);
    expect(logo.content.equals(PNG)).toBe(true);

    const result = out["messages sent"]!.Messages[0]! as MessageResult & { CustomID: string };
    expect(result.Status).toBe("success");
    expect(result.CustomID).toBe("sale-42");
    expect(result.To!.map((r) => r.Email)).toEqual(["alice@example.test", "bob@example.test"]);
    expect(result.Cc!.map((r) => r.Email)).toEqual(["carol@example.test"]);
    expect(result.Bcc!.map((r) => r.Email)).toEqual(["dave@example.test"]);
    const all = [...result.To!, ...result.Cc!, ...result.Bcc!];
    for (const r of all) {
      expect(r.MessageUUID).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof r.MessageID).toBe("bigint");
      expect(r.MessageID as bigint).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));
      expect(r.MessageHref).toBe(`mid:${encodeURIComponent(mail.messageId!.slice(1, -1))}`);
    }
    expect(new Set(all.map((r) => r.MessageUUID)).size).toBe(4);
    expect(new Set(all.map((r) => String(r.MessageID))).size).toBe(4);
    expect(stringifyJson(out["messages sent"])).toMatch(/"MessageID":\d{17,}/);
    expect(out.response).toEqual({ status: 250, headers: {}, body: "250 OK: queued as Q1" });
  });

  it("sends messages in input order, one per transaction, with a result per message", async () => {
    const before = server.received.length;
    const out = await send(server, { Messages: [message(1), message(2), message(3)] });
    expect(out.error).toBeUndefined();
    const got = server.received.slice(before);
    expect(got.map((m) => m.to)).toEqual([["to1@example.test"], ["to2@example.test"], ["to3@example.test"]]);
    expect(out["messages sent"]!.Messages.map((m) => m.Status)).toEqual(["success", "success", "success"]);
    expect(out["messages sent"]!.Messages.map((m) => m.To![0]!.Email)).toEqual([
      "to1@example.test",
      "to2@example.test",
      "to3@example.test",
    ]);
    expect(out.response!.body.split("\n")).toHaveLength(3);
  });

  it("gives TemplateID and a missing variable error entries for those messages only", async () => {
    const before = server.received.length;
    const out = await send(server, {
      Messages: [
        message(1, { TemplateID: 4242 }),
        message(2),
        message(3, { TemplateLanguage: true, TextPart: "Hi {{var:first_name}}", Variables: {} }),
        message(4, { URLTags: "utm_source=x", Headers: { "X-MJ-CustomID": "spoof" } }),
      ],
    });
    expect(out.error).toBeUndefined();
    const [r1, r2, r3, r4] = out["messages sent"]!.Messages;
    expect(r1!.Status).toBe("error");
    expect(r1!.Errors!.map((e) => [e.ErrorCode, e.ErrorRelatedTo])).toEqual([
      ["unsupported-TemplateID", ["TemplateID"]],
    ]);
    expect(r1!.Errors![0]!.ErrorMessage).toMatch(/TemplateID is not supported/);
    expect(r1!.Errors![0]!.StatusCode).toBe(400);
    expect(r2!.Status).toBe("success");
    expect(r3!.Errors!.map((e) => e.ErrorCode)).toEqual(["template-variable-missing"]);
    expect(r3!.Errors![0]!.ErrorMessage).toContain('"first_name"');
    expect(r3!.Errors![0]!.ErrorRelatedTo).toEqual(["Variables", "TextPart"]);
    expect(r4!.Errors!.map((e) => e.ErrorCode).sort()).toEqual(["send-0011", "unsupported-URLTags"]);
    expect(server.received.slice(before).map((m) => m.to)).toEqual([["to2@example.test"]]);
  });

  it("opens no session when no message passes its checks", async () => {
    const before = server.connections;
    const out = await send(server, { Messages: [message(1, { TemplateID: 5 }), message(2, { URLTags: "a=b" })] });
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages.map((m) => m.Status)).toEqual(["error", "error"]);
    expect(server.connections).toBe(before);
  });

  it("through the node, takes what only Mailjet refuses: 51 recipients, a colon in the user id", async () => {
    const before = server.received.length;
    const to = Array.from({ length: 51 }, (_, i) => ({ Email: `many${i}@example.test` }));
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
    const out = await runNode(
      emailSend,
      { params: { "user id": "user:colon", password: "-" }, request: { Messages: [message(1, { To: to })] } },
      { config },
    );
    // The colon rule is Mailjet's: here the user id reaches the SMTP login (and this server refuses it).
    expect(out.error?.details.code).toBe("upstream_auth");
    const ok = await runNode(emailSend, { request: { Messages: [message(1, { To: to })] } }, { config });
    expect(ok.error).toBeUndefined();
    expect(ok["messages sent"]!.Messages[0]!.To).toHaveLength(51);
    expect(server.received.slice(before).map((m) => m.to.length)).toEqual([51]);
  });

  it("SandboxMode validates and sends nothing", async () => {
    const before = server.received.length;
    const connections = server.connections;
    const out = await send(server, { SandboxMode: true, Messages: [message(1), message(2, { TemplateID: 1 })] });
    expect(server.received.length).toBe(before);
    expect(out["messages sent"]!.Messages[0]).toEqual({
      Status: "success",
      CustomID: "",
      To: [{ Email: "to1@example.test", MessageUUID: "", MessageID: 0, MessageHref: "" }],
      Cc: [],
      Bcc: [],
    });
    expect(out["messages sent"]!.Messages[1]!.Status).toBe("error");
    expect(server.connections).toBe(connections);
  });
});

describe("smtp transport: failures", () => {
  let server: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtp();
  });
  afterAll(() => server.close());

  it("a rejected recipient: error entry naming it, the others still delivered", async () => {
    server.rules = { rejectRecipients: ["nobody@example.test", "gone@example.test"] };
    const before = server.received.length;
    const out = await send(server, {
      Messages: [
        message(1, { To: [{ Email: "to1@example.test" }], Cc: [{ Email: "nobody@example.test" }] }),
        message(2, { To: [{ Email: "gone@example.test" }] }),
        message(3),
      ],
    });
    expect(out.error).toBeUndefined();
    const [r1, r2, r3] = out["messages sent"]!.Messages;
    // Delivered to to1, refused for nobody: one copy went out, the entry says who did not get it.
    expect(r1!.Status).toBe("error");
    expect(r1!.To!.map((r) => r.Email)).toEqual(["to1@example.test"]);
    expect(r1!.Cc).toEqual([]);
    expect(r1!.Errors!.map((e) => [e.ErrorCode, e.StatusCode, e.ErrorRelatedTo])).toEqual([
      ["smtp-recipient-rejected", 400, ["Cc[0].Email"]],
    ]);
    expect(r1!.Errors![0]!.ErrorMessage).toMatch(/nobody@example.test.*550/);
    expect(r2!.Status).toBe("error");
    expect(r2!.To).toBeUndefined();
    expect(r2!.Errors!.map((e) => [e.ErrorCode, e.ErrorRelatedTo])).toEqual([
      ["smtp-recipient-rejected", ["To[0].Email"]],
    ]);
    expect(r3!.Status).toBe("success");
    expect(server.received.slice(before).map((m) => m.to)).toEqual([["to1@example.test"], ["to3@example.test"]]);
  });

  it("a refused sender and refused content are per-message errors; the session goes on", async () => {
    server.rules = { rejectSenders: ["blocked@chainmail.test"], rejectSubject: "SPAM" };
    const before = server.received.length;
    const out = await send(server, {
      Messages: [
        message(1, { From: { Email: "blocked@chainmail.test" } }),
        message(2, { Subject: "SPAM offer" }),
        message(3),
      ],
    });
    const [r1, r2, r3] = out["messages sent"]!.Messages;
    expect(r1!.Errors!.map((e) => [e.ErrorCode, e.ErrorRelatedTo])).toEqual([["smtp-sender-rejected", ["From"]]]);
    expect(r2!.Errors!.map((e) => e.ErrorCode)).toEqual(["smtp-message-rejected"]);
    expect(r2!.Errors![0]!.ErrorMessage).toContain("554");
    expect(r3!.Status).toBe("success");
    expect(server.received.slice(before)).toHaveLength(1);
  });

  it("a 421 that closes the session: that message refused (may be sent again), the rest not sent, error fires", async () => {
    const fresh = await startSmtp({ rules: { closeSubject: "Message 2" } });
    try {
      const out = await send(fresh, { Messages: [message(1), message(2), message(3)] });
      const [r1, r2, r3] = out["messages sent"]!.Messages;
      expect(r1!.Status).toBe("success");
      expect(r2!.Errors!.map((e) => [e.ErrorCode, e.StatusCode])).toEqual([["smtp-message-rejected", 503]]);
      expect(r2!.Errors![0]!.ErrorMessage).toContain("421");
      expect(r3!.Errors!.map((e) => e.ErrorCode)).toEqual(["chainmail-not-sent"]);
      expect(out.error?.details).toMatchObject({
        code: "partial_failure",
        messages: { sent: [0], not_sent: [1, 2], unknown: [] },
      });
      expect(fresh.received.map((m) => m.to)).toEqual([["to1@example.test"]]);
    } finally {
      await fresh.close();
    }
  });

  it("auth refused: whole-request error, nothing sent, password nowhere", async () => {
    server.rules = {};
    const before = server.received.length;
    const wrong = "wrong-pass-123456";
    const logs: unknown[] = [];
    const record = (obj: object, msg?: string) => logs.push([obj, msg]);
    const logger = { debug: record, info: record, warn: record, error: record };
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url(null) });
    const out = await smtpTransport(config).send(
      { Messages: [message(1), message(2)] },
      { "user id": SMTP_USER, password: wrong },
      { config, logger },
    );
    expect(logs).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain(wrong);
    expect(out["messages sent"]).toBeUndefined();
    expect(out.error?.details.code).toBe("upstream_auth");
    expect(out.error?.error).toMatch(/refused the login/);
    expect(out.response?.status).toBe(535);
    expect(server.received.length).toBe(before);
    expect(server.logins.at(-1)).toEqual({ user: SMTP_USER, ok: false });
    const text = stringifyJson(out);
    expect(text).not.toContain(wrong);
    expect(text).toContain("[REDACTED]");
  });

  it("the login in SMTP_URL is used when params give none", async () => {
    server.rules = {};
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
    const out = await smtpTransport(config).send({ Messages: [message(1)] }, {} as never, { config });
    expect(out["messages sent"]!.Messages[0]!.Status).toBe("success");
    expect(server.received.at(-1)!.user).toBe(SMTP_USER);
  });

  it("connection refused: whole-request error", async () => {
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: "smtp://127.0.0.1:1" });
    const out = await smtpTransport(config).send({ Messages: [message(1)] }, params, { config });
    expect(out.error?.details.code).toBe("upstream_unreachable");
    expect(out.error?.details.messages).toEqual({ sent: [], not_sent: [0], unknown: [] });
    expect(out["messages sent"]).toBeUndefined();
  });

  it("a connection dropped mid-message: sent ones kept, the one in flight unknown, the rest not sent, none twice", async () => {
    const fresh = await startSmtp({ rules: { dropDuringData: 2 } });
    try {
      const out = await send(fresh, { Messages: [message(1), message(2), message(3), message(4)] });
      expect(fresh.dataStarted).toBe(2);
      expect(fresh.received.map((m) => m.to)).toEqual([["to1@example.test"]]);
      const codes = out["messages sent"]!.Messages.map((m) => m.Errors?.[0]?.ErrorCode ?? m.Status);
      expect(codes).toEqual(["success", "chainmail-delivery-unknown", "chainmail-not-sent", "chainmail-not-sent"]);
      expect(out["messages sent"]!.Messages[1]!.Errors![0]!.StatusCode).toBe(409);
      expect(out["messages sent"]!.Messages[2]!.Errors![0]!.StatusCode).toBe(503);
      expect(out.error?.details).toMatchObject({
        code: "partial_failure",
        messages: { sent: [0], unknown: [1], not_sent: [2, 3] },
        failure: { transport: "smtp" },
      });
      expect(out["messages sent"]!.Messages[1]!.Errors![0]!.ErrorRelatedTo).toEqual([]);
      expect(out.error?.error).toMatch(/Sent 1 of 4 messages/);
      expect(out.response?.body).toContain("250 OK: queued as Q1");
    } finally {
      await fresh.close();
    }
  });

  it("a connection dropped before DATA of the first message: nothing sent, error with the cause", async () => {
    const fresh = await startSmtp({ rules: { dropAfterMailFrom: 1 } });
    try {
      const out = await send(fresh, { Messages: [message(1), message(2)] });
      expect(fresh.dataStarted).toBe(0);
      // Every message merely not sent: `messages sent` is left out, as with every transport.
      expect(out["messages sent"]).toBeUndefined();
      expect(out.error?.details).toMatchObject({
        code: "upstream_unreachable",
        messages: { sent: [], unknown: [], not_sent: [0, 1] },
      });
    } finally {
      await fresh.close();
    }
  });

  it("TLS failure (self-signed certificate) is a whole-request error; trusting it explicitly works", async () => {
    const tls = await startSmtp({ secure: true });
    try {
      const out = await send(tls, { Messages: [message(1)] });
      expect(out.error?.details).toMatchObject({ code: "upstream_unreachable", tls: true });
      expect(out.error?.error).toMatch(/TLS/);
      expect(tls.received).toHaveLength(0);
      const config = testConfig({ SMTP_URL: `${tls.url()}?tls.rejectUnauthorized=false` });
      const ok = await smtpTransport(config).send({ Messages: [message(1)] }, params, { config });
      expect(ok.error).toBeUndefined();
      expect(tls.received).toHaveLength(1);
    } finally {
      await tls.close();
    }
  });

  it("smtps:// against a plain server is a TLS failure", async () => {
    const config = testConfig({ SMTP_URL: server.url().replace("smtp://", "smtps://") });
    const out = await smtpTransport(config).send({ Messages: [message(1)] }, params, { config });
    expect(out.error?.details.code).toMatch(/upstream_unreachable|upstream_timeout/);
    expect(out["messages sent"]).toBeUndefined();
  });

  it("without SMTP_URL the transport says which setting is missing", async () => {
    const config = testConfig({ EMAIL_TRANSPORT: "smtp" });
    await expect(smtpTransport(config).send({ Messages: [message(1)] }, params, { config })).rejects.toThrow(
      /SMTP_URL/,
    );
  });
});

describe("email-send with EMAIL_TRANSPORT=smtp", () => {
  let server: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtp();
  });
  afterAll(() => server.close());

  it("the params override SMTP_URL's login; results and response reach the ports", async () => {
    const config = testConfig({
      EMAIL_TRANSPORT: "smtp",
      SMTP_URL: server.url({ user: "someone-else", pass: "not-it" }),
    });
    const out = await runNode(emailSend, { params, request: { Messages: [message(1), message(2)] } }, { config });
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages.map((m) => m.Status)).toEqual(["success", "success"]);
    expect(server.logins.at(-1)).toEqual({ user: SMTP_USER, ok: true });
    expect(out.response?.status).toBe(250);
  });

  it("invalid input is refused before connecting", async () => {
    const before = server.logins.length;
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
    const out = await runNode(
      emailSend,
      { request: { Messages: [{ To: [{ Email: "x@example.test" }] }] } },
      { config },
    );
    expect(out.error?.details.code).toBe("invalid_input");
    expect(out.error?.error).toMatch(/From/);
    expect(server.logins.length).toBe(before);
  });

  it("chainmail run email-send prints exact MessageIDs and exits 0; a lost connection exits 1", async () => {
    const input = stringifyJson({ request: { Messages: [message(1)] } });
    const ok = await cli(["run", "email-send", "--input", input], { EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/"MessageID": \d{17,}/);
    expect(ok.stdout).not.toContain(SMTP_PASSWORD);
    const dropping = await startSmtp({ rules: { dropDuringData: 2 } });
    try {
      const input2 = stringifyJson({ request: { Messages: [message(1), message(2)] } });
      const lost = await cli(["run", "email-send", "--input", input2], {
        EMAIL_TRANSPORT: "smtp",
        SMTP_URL: dropping.url(),
      });
      expect(lost.code).toBe(1);
      expect(lost.stdout).toContain('"partial_failure"');
      expect(dropping.received).toHaveLength(1);
    } finally {
      await dropping.close();
    }
  });
});

const cli = (args: string[], env: Record<string, string>) => runCli(args, { env });

describe("smtp transport: cancellation", () => {
  it("a cancelled send stops before the next message: the rest are not sent, error says aborted", async () => {
    const server = await startSmtp();
    try {
      const controller = new AbortController();
      const config = testConfig({ SMTP_URL: server.url() });
      // Cancel while the server accepts the first message (before its 250 reaches the client).
      server.onReceived = () => controller.abort();
      const out = await smtpTransport(config).send({ Messages: [message(1), message(2), message(3)] }, params, {
        config,
        signal: controller.signal,
      });
      expect(server.received).toHaveLength(1);
      expect(out["messages sent"]!.Messages.map((m) => m.Errors?.[0]?.ErrorCode ?? m.Status)).toEqual([
        "success",
        "chainmail-not-sent",
        "chainmail-not-sent",
      ]);
      expect(out.error?.details).toEqual({ code: "aborted", messages: { sent: [0], not_sent: [1, 2], unknown: [] } });
    } finally {
      await server.close();
    }
  });
});

describe("smtp transport: when messages sent is present on failure", () => {
  it("kept when a message has a result of its own, even if the session then cannot open", async () => {
    const config = testConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: "smtp://127.0.0.1:1" });
    const out = await smtpTransport(config).send({ Messages: [message(1, { TemplateID: 7 }), message(2)] }, params, {
      config,
    });
    expect(out.error?.details.code).toBe("upstream_unreachable");
    expect(out.error?.details.messages).toEqual({ sent: [], not_sent: [0, 1], unknown: [] });
    expect(out["messages sent"]!.Messages.map((m) => m.Errors?.[0]?.ErrorCode)).toEqual([
      "unsupported-TemplateID",
      "chainmail-not-sent",
    ]);
  });

  it("left out when every message is merely not sent: cancelled before the first, nothing connects", async () => {
    const server = await startSmtp();
    try {
      const controller = new AbortController();
      controller.abort();
      const config = testConfig({ SMTP_URL: server.url() });
      const out = await smtpTransport(config).send({ Messages: [message(1), message(2)] }, params, {
        config,
        signal: controller.signal,
      });
      expect(out["messages sent"]).toBeUndefined();
      expect(out.error?.details).toEqual({ code: "aborted", messages: { sent: [], not_sent: [0, 1], unknown: [] } });
      expect(server.received).toHaveLength(0);
      expect(server.logins).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});
