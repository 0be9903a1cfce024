import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { type AddressObject, simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config.js";
import { parseJson, stringifyJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { emailSend } from "../../../src/nodes/index.js";
import { findInOutbox, INDEX_FILE, listOutbox } from "../../../src/transports/outbox/store.js";
import { runCli } from "../../support/helpers.js";
import { type SmtpTestServer, startSmtp } from "../../upstreams/smtp.js";

let root: string;
let seq = 0;
const newDir = () => join(root, `outbox-${++seq}`);
const outboxConfig = (dir: string) => loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: dir });

const rich = {
  From: { Email: "sales@chainmail.test", Name: "Chainmail Sales" },
  To: [{ Email: "alice@example.test", Name: "Alice" }],
  Cc: [{ Email: "carol@example.test" }],
  Bcc: [{ Email: "dave@example.test" }],
  Subject: "Hello {{var:name}}",
  TextPart: 'Hi {{var:name}}, {{var:count:"no"}} sales',
  HTMLPart: '<p>Hi {{var:name}}</p><img src="cid:logo">',
  TemplateLanguage: true,
  Variables: { name: "Alice" },
  Attachments: [
    { ContentType: "text/csv", Filename: "sales.csv", Base64Content: Buffer.from("a,b\n1,2\n").toString("base64") },
  ],
  InlinedAttachments: [
    {
      ContentType: "image/png",
      Filename: "logo.png",
      ContentID: "logo",
      Base64Content: Buffer.from("png").toString("base64"),
    },
  ],
  Headers: { "X-Team": "nft" },
  CustomID: "c-1",
  EventPayload: "p-1",
};

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "chainmail-outbox-"));
});
afterAll(() => rm(root, { recursive: true, force: true }));

const cli = (args: string[], env: Record<string, string>) => runCli(args, { env });

describe("outbox transport through email-send", () => {
  it("stores each message as .eml plus an index line; Bcc only in the index; no params needed", async () => {
    const dir = newDir();
    const out = await runNode(
      emailSend,
      { request: { Messages: [rich, { ...rich, Subject: "Second", TemplateLanguage: undefined, CustomID: "c-2" }] } },
      { config: outboxConfig(dir) },
    );
    expect(out.error).toBeUndefined();
    const [r1, r2] = out["messages sent"]!.Messages as (typeof out)["messages sent"] extends infer T
      ? T extends { Messages: (infer M)[] }
        ? (M & { CustomID: string })[]
        : never
      : never;
    expect(r1!.Status).toBe("success");
    expect(r1!.CustomID).toBe("c-1");
    expect(r2!.CustomID).toBe("c-2");

    const entries = await listOutbox(dir);
    expect(entries.map((e) => e.custom_id)).toEqual(["c-1", "c-2"]);
    const entry = entries[0]!;
    expect(entry).toMatchObject({
      from: "sales@chainmail.test",
      to: ["alice@example.test"],
      cc: ["carol@example.test"],
      bcc: ["dave@example.test"],
      subject: "Hello Alice",
    });
    expect(entry.id).toMatch(/^\d{8}T\d{9}Z-[0-9a-f]{6}$/);
    expect(entry.recipients.map((r) => r.Email)).toEqual([
      "alice@example.test",
      "carol@example.test",
      "dave@example.test",
    ]);
    // The index keeps the 64-bit ids exact, and they are the ones the result reported.
    expect(entry.recipients[0]!.MessageID).toBe(r1!.To![0]!.MessageID);
    expect(typeof entry.recipients[0]!.MessageID).toBe("bigint");
    expect(r1!.To![0]!.MessageHref).toMatch(/^file:\/\/.*\.eml$/);
    expect(fileURLToPath(r1!.To![0]!.MessageHref)).toBe(join(dir, entry.file));

    const files = (await readdir(dir)).sort();
    expect(files).toEqual([...entries.map((e) => e.file), INDEX_FILE].sort());
    const eml = await readFile(join(dir, entry.file));
    expect(eml.toString()).not.toMatch(/^Bcc:/im);
    expect(eml.toString()).not.toContain("dave@example.test");
    const mail = await simpleParser(eml);
    expect(mail.subject).toBe("Hello Alice");
    expect(mail.text?.trim()).toBe("Hi Alice, no sales");
    expect(mail.html).toContain("<p>Hi Alice</p>");
    expect(mail.headers.get("x-mj-customid")).toBe("c-1");
    expect(mail.headers.get("x-mj-eventpayload")).toBe("p-1");
    expect(mail.headers.get("x-team")).toBe("nft");
    expect(mail.attachments.map((a) => [a.filename, a.cid ?? null])).toEqual([
      ["logo.png", "logo"],
      ["sales.csv", null],
    ]);
    expect(mail.messageId).toBe(entry.message_id);
  });

  it("renders exactly what smtp sends (same parts, headers and attachments)", async () => {
    const server: SmtpTestServer = await startSmtp();
    try {
      const dir = newDir();
      const smtp = loadConfig({ EMAIL_TRANSPORT: "smtp", SMTP_URL: server.url() });
      const viaSmtp = await runNode(emailSend, { request: { Messages: [rich] } }, { config: smtp });
      expect(viaSmtp.error).toBeUndefined();
      await runNode(emailSend, { request: { Messages: [rich] } }, { config: outboxConfig(dir) });
      const [entry] = await listOutbox(dir);
      const a = await simpleParser(server.received[0]!.raw);
      const b = await simpleParser(await readFile(join(dir, entry!.file)));
      const view = (m: typeof a) => ({
        from: m.from?.text,
        to: m.to && (m.to as AddressObject).text,
        cc: m.cc && (m.cc as AddressObject).text,
        subject: m.subject,
        text: m.text,
        html: m.html,
        headers: ["x-mj-customid", "x-mj-eventpayload", "x-team"].map((h) => m.headers.get(h)),
        // Boundaries are random; the structure is not.
        type: (m.headers.get("content-type") as { value: string }).value,
        attachments: m.attachments.map((x) => [x.filename, x.contentType, x.cid, x.content.toString("base64")]),
      });
      expect(view(b)).toEqual(view(a));
      expect(server.received[0]!.to).toEqual(["alice@example.test", "carol@example.test", "dave@example.test"]);
    } finally {
      await server.close();
    }
  });

  it("SandboxMode validates without storing anything", async () => {
    const dir = newDir();
    const out = await runNode(
      emailSend,
      { request: { SandboxMode: true, Messages: [rich, { ...rich, TemplateID: 7 }] } },
      { config: outboxConfig(dir) },
    );
    expect(out["messages sent"]!.Messages.map((m) => m.Status)).toEqual(["success", "error"]);
    expect(out["messages sent"]!.Messages[0]!.To![0]).toMatchObject({ MessageUUID: "", MessageID: 0 });
    expect(out["messages sent"]!.Messages[1]!.Errors![0]!.ErrorCode).toBe("unsupported-TemplateID");
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it("a message it cannot render is an error entry; the others are stored", async () => {
    const dir = newDir();
    const out = await runNode(
      emailSend,
      { request: { Messages: [{ ...rich, TemplateID: 3 }, rich] } },
      { config: outboxConfig(dir) },
    );
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages.map((m) => m.Status)).toEqual(["error", "success"]);
    expect(await listOutbox(dir)).toHaveLength(1);
  });

  it("takes what only Mailjet refuses: 51 recipients in one message, a colon in the user id", async () => {
    const dir = newDir();
    const to = Array.from({ length: 51 }, (_, i) => ({ Email: `r${i}@example.test` }));
    const out = await runNode(
      emailSend,
      { params: { "user id": "user:with-colon", password: "x" }, request: { Messages: [{ ...rich, To: to }] } },
      { config: outboxConfig(dir) },
    );
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages[0]!.To).toHaveLength(51);
    expect((await listOutbox(dir))[0]!.to).toHaveLength(51);
  });

  it("still refuses, through the node, what every transport refuses (a bad address), before storing anything", async () => {
    const dir = newDir();
    const out = await runNode(
      emailSend,
      { request: { Messages: [{ ...rich, Cc: [{ Email: "cc@example" }] }] } },
      { config: outboxConfig(dir) },
    );
    expect(out.error?.details.code).toBe("invalid_input");
    expect((out.error!.details.violations as { field: string }[]).map((v) => v.field)).toEqual([
      "request.Messages[0].Cc[0].Email",
    ]);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it("an outbox that cannot be written: storage_error, every message not sent", async () => {
    const blocker = join(root, "not-a-directory");
    await writeFile(blocker, "x");
    const out = await runNode(emailSend, { request: { Messages: [rich, rich] } }, { config: outboxConfig(blocker) });
    expect(out.error?.details).toMatchObject({
      code: "storage_error",
      messages: { sent: [], not_sent: [0, 1], unknown: [] },
    });
    // Every message merely not sent: `messages sent` is left out (the rule of every transport).
    expect(out["messages sent"]).toBeUndefined();
    // A message with a result of its own keeps `messages sent`, with a not-sent entry for the others.
    const mixed = await runNode(
      emailSend,
      { request: { Messages: [{ ...rich, TemplateID: 3 }, rich] } },
      { config: outboxConfig(blocker) },
    );
    expect(mixed.error?.details).toMatchObject({
      code: "storage_error",
      messages: { sent: [], not_sent: [0, 1], unknown: [] },
    });
    expect(mixed["messages sent"]!.Messages.map((m) => m.Errors![0]!.ErrorCode)).toEqual([
      "unsupported-TemplateID",
      "chainmail-not-sent",
    ]);
    const entry = mixed["messages sent"]!.Messages[1]!.Errors![0]!;
    expect([entry.StatusCode, entry.ErrorRelatedTo]).toEqual([503, []]);
  });

  it("a cancelled send says aborted and stores nothing", async () => {
    const dir = newDir();
    const controller = new AbortController();
    controller.abort();
    const out = await runNode(
      emailSend,
      { request: { Messages: [rich, rich] } },
      { config: outboxConfig(dir), signal: controller.signal },
    );
    expect(out["messages sent"]).toBeUndefined();
    expect(out.error?.details).toEqual({ code: "aborted", messages: { sent: [], not_sent: [0, 1], unknown: [] } });
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });

  it("findInOutbox finds a message by id, Message-ID, MessageUUID or MessageID", async () => {
    const dir = newDir();
    const out = await runNode(emailSend, { request: { Messages: [rich] } }, { config: outboxConfig(dir) });
    const [entry] = await listOutbox(dir);
    const to = out["messages sent"]!.Messages[0]!.Bcc![0]!;
    for (const key of [entry!.id, entry!.message_id, to.MessageUUID, String(to.MessageID)]) {
      expect((await findInOutbox(dir, key))?.entry.id).toBe(entry!.id);
    }
    expect(await findInOutbox(dir, "nope")).toBeUndefined();
  });
});

describe("chainmail outbox list / show", () => {
  it("sends through the CLI with EMAIL_TRANSPORT=outbox, then lists and shows the message", async () => {
    const dir = newDir();
    const env = { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: dir };
    const sent = await cli(["run", "email-send", "--input", stringifyJson({ request: { Messages: [rich] } })], env);
    expect(sent.stderr).toBe("");
    expect(sent.code).toBe(0);
    const result = parseJson(sent.stdout) as { "messages sent": { Messages: { To: { MessageID: bigint }[] }[] } };
    const messageId = result["messages sent"].Messages[0]!.To[0]!.MessageID;
    expect(typeof messageId).toBe("bigint");

    const list = await cli(["outbox", "list"], env);
    expect(list.code).toBe(0);
    const entries = parseJson(list.stdout) as { id: string; subject: string; bcc: string[] }[];
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ subject: "Hello Alice", bcc: ["dave@example.test"] });

    const show = await cli(["outbox", "show", entries[0]!.id], env);
    expect(show.code).toBe(0);
    const mail = await simpleParser(show.stdout);
    expect(mail.subject).toBe("Hello Alice");
    expect(show.stdout).not.toContain("dave@example.test");

    const byMessageId = await cli(["outbox", "show", String(messageId), "--json", "--dir", dir], {});
    expect(byMessageId.code).toBe(0);
    expect((parseJson(byMessageId.stdout) as { id: string }).id).toBe(entries[0]!.id);

    const missing = await cli(["outbox", "show", "nope"], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no message "nope"/);
  });
});

describe("chainmail outbox list / show --bigint string", () => {
  it("writes MessageIDs as strings of digits that a plain JSON parser keeps exact, and show finds them", async () => {
    const dir = newDir();
    const env = { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: dir };
    const sent = await cli(["run", "email-send", "--input", stringifyJson({ request: { Messages: [rich] } })], env);
    expect(sent.code).toBe(0);
    const exact = (parseJson(sent.stdout) as { "messages sent": { Messages: { To: { MessageID: bigint }[] }[] } })[
      "messages sent"
    ].Messages[0]!.To[0]!.MessageID;
    expect(exact).toBeGreaterThan(BigInt(Number.MAX_SAFE_INTEGER));

    // By default a bare integer, every digit: what jq or JSON.parse read as a (rounded) double.
    const plain = await cli(["outbox", "list"], env);
    expect(plain.stdout).toContain(`"MessageID": ${exact}`);
    expect(typeof JSON.parse(plain.stdout)[0].recipients[0].MessageID).toBe("number");

    // As strings: JSON.parse (like jq) keeps every digit, and the id it reads finds the message.
    const list = await cli(["outbox", "list", "--bigint", "string"], env);
    expect(list.code).toBe(0);
    const [entry] = JSON.parse(list.stdout) as { id: string; recipients: { MessageID: unknown }[] }[];
    expect(entry!.recipients[0]!.MessageID).toBe(String(exact));
    const show = await cli(
      ["outbox", "show", String(entry!.recipients[0]!.MessageID), "--json", "--bigint", "string"],
      env,
    );
    expect(show.code).toBe(0);
    const shown = JSON.parse(show.stdout) as { id: string; recipients: { MessageID: unknown }[] };
    expect(shown.id).toBe(entry!.id);
    expect(shown.recipients[0]!.MessageID).toBe(String(exact));

    const bad = await cli(["outbox", "list", "--bigint", "text"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--bigint "text" is invalid: must be one of: number, string/);
    expect(bad.stdout).toBe("");
  });

  it("--bigint takes exactly the service's forms, and names itself for anything else", async () => {
    const { bigintOption } = await import("../../../src/cli/io.js");
    const { BIGINT_FORMS } = await import("../../../src/server/integers.js");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom(...BIGINT_FORMS, "String", "", "number ")), (given) => {
        if ((BIGINT_FORMS as readonly string[]).includes(given)) expect(bigintOption(given)).toBe(given);
        else expect(() => bigintOption(given)).toThrow(/^--bigint .* is invalid: must be one of: number, string$/s);
      }),
    );
    expect(bigintOption(undefined)).toBe("number");
  });
});
