/**
 * One-click unsubscribe (RFC 8058) end to end: email-send over a real SMTP server writes `List-Unsubscribe` (an
 * HTTPS URL under CHAINMAIL_PUBLIC_URL with a signed token) and `List-Unsubscribe-Post`; the service's POST on that
 * URL suppresses the recipient at once, its GET only shows a page; a forged or altered token changes nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { runNode } from "../../src/core/node.js";
import { signUnsubscribe, verifyUnsubscribe } from "../../src/mail/unsubscribe.js";
import { emailSend } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { startServer } from "../../src/server/index.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { digestMessage, eachMessage } from "../../src/watch/render.js";
import { call } from "../support/server-helpers.js";
import { CONTRACT_1155, standardDataset } from "../upstreams/nftport-data.js";
import { type SmtpTestServer, startSmtp } from "../upstreams/smtp.js";

const SECRET = "0123456789abcdef0123456789abcdef-unsubscribe";
const dir = mkdtempSync(join(tmpdir(), "chainmail-unsubscribe-"));
let smtp: SmtpTestServer;
let service: { url: string; close(): Promise<void> };
let env: Record<string, string>;

beforeAll(async () => {
  smtp = await startSmtp();
  env = {
    EMAIL_TRANSPORT: "smtp",
    SMTP_URL: smtp.url(),
    CHAINMAIL_MAIL_DB: join(dir, "mail.sqlite"),
    CHAINMAIL_PUBLIC_URL: "https://mail.chainmail.test/base",
    CHAINMAIL_UNSUBSCRIBE_SECRET: SECRET,
  };
  service = await startServer({ port: 0, config: loadConfig(env), tokens: ["unsubscribe-test-token-0123"] });
});
afterAll(async () => {
  await service?.close();
  await smtp?.close();
  rmSync(dir, { recursive: true, force: true });
});

const message = (to: string[], extra: object = {}) => ({
  From: { Email: "alerts@chainmail.test" },
  To: to.map((Email) => ({ Email })),
  Subject: `Sale ${to.join(",")}`,
  TextPart: "A sale",
  CustomCampaign: "rule-sales",
  ...extra,
});

const sendOne = (msg: object) => runNode(emailSend, { request: { Messages: [msg] } }, { config: loadConfig(env) });

describe("one-click unsubscribe", () => {
  it("writes RFC 8058's headers over SMTP, and the POST suppresses the recipient at once", async () => {
    const before = smtp.received.length;
    const out = await sendOne(message(["reader@example.com"]));
    expect(
      out["messages sent"]?.Messages[0]?.Status,
      JSON.stringify(out, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
    ).toBe("success");
    const parsed = await simpleParser(smtp.received[before]!.raw);
    const link = parsed.headers.get("list-unsubscribe") as { url: string } | string;
    const header = smtp.received[before]!.raw.toString("utf8");
    expect(header).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
    const url = /^List-Unsubscribe: <(https:\/\/mail\.chainmail\.test\/base\/unsubscribe\/[\w.-]+)>\r$/m.exec(
      header,
    )?.[1];
    expect(url, String(link)).toBeDefined();
    const path = new URL(url!).pathname.replace("/base", "");

    const page = await call(`${service.url}${path}`, "GET");
    expect(page.status).toBe(200);
    expect(page.text).toContain("reader@example.com");
    expect(page.text).toContain('method="post"');
    // Showing the page changed nothing: the recipient still gets mail.
    expect((await sendOne(message(["reader@example.com"])))["messages sent"]?.Messages[0]?.Status).toBe("success");

    const done = await call(`${service.url}${path}`, "POST", "List-Unsubscribe=One-Click", {
      "content-type": "application/x-www-form-urlencoded",
    });
    expect(done.status).toBe(200);
    const held = await sendOne(message(["reader@example.com"]));
    expect(held["messages sent"]?.Messages[0]?.Errors?.[0]).toMatchObject({
      ErrorCode: "suppressed",
      Reason: "unsubscribed",
    });
    // Only this sender's list: another sender still reaches the reader.
    const other = await sendOne(message(["reader@example.com"], { From: { Email: "other@chainmail.test" } }));
    expect(other["messages sent"]?.Messages[0]?.Status).toBe("success");
  });

  it("writes no link on a message with several recipients (one header cannot name each)", async () => {
    const before = smtp.received.length;
    await sendOne(message(["one@example.com", "two@example.com"]));
    expect(smtp.received[before]!.raw.toString("utf8")).not.toMatch(/^List-Unsubscribe/m);
  });

  it("changes nothing for a forged or altered token", async () => {
    const good = signUnsubscribe(
      { sender: "alerts@chainmail.test", email: "victim@example.com", campaign: "" },
      SECRET,
    );
    const forged = signUnsubscribe(
      { sender: "alerts@chainmail.test", email: "victim@example.com", campaign: "" },
      "x".repeat(40),
    );
    const [payload, mac] = good.split(".");
    const altered = `${Buffer.from(JSON.stringify(["alerts@chainmail.test", "other@example.com", ""])).toString("base64url")}.${mac}`;
    for (const token of [forged, altered, `${payload}.${mac!.slice(0, -1)}A`, "x", `${"a".repeat(3000)}.b`]) {
      const answer = await call(`${service.url}/unsubscribe/${token}`, "POST", "List-Unsubscribe=One-Click");
      expect(answer.status, token.slice(0, 40)).toBe(404);
    }
    expect((await sendOne(message(["victim@example.com"])))["messages sent"]?.Messages[0]?.Status).toBe("success");
  });

  it("verifies only what it signed, for any claim and any change to a token", () => {
    fc.assert(
      fc.property(
        fc.record({ sender: fc.emailAddress(), email: fc.emailAddress(), campaign: fc.string({ maxLength: 40 }) }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (claim, at, flip) => {
          const token = signUnsubscribe(claim, SECRET);
          expect(verifyUnsubscribe(token, SECRET)).toEqual(claim);
          const i = at % token.length;
          const changed = token.slice(0, i) + String.fromCharCode(token.charCodeAt(i) ^ flip) + token.slice(i + 1);
          const read = verifyUnsubscribe(changed, SECRET);
          // A change is refused, unless it only touched the unused low bits of the last base64url character.
          if (read !== undefined) expect(read).toEqual(claim);
        },
      ),
      { numRuns: 300, seed: 20261128 },
    );
  });
});

describe("the watch's templates", () => {
  const records = standardDataset(3).byContract.get(CONTRACT_1155)! as unknown as TransactionRecord[];
  const url = "https://mail.chainmail.test/unsubscribe/abc.def";
  const ruleOf = (mail: object) =>
    parseWatchConfig(
      { from: { Email: "w@example.com" }, rules: [{ id: "r", mail: { to: [{ Email: "a@example.com" }], ...mail } }] },
      "nftport",
    ).rules[0]!;

  it("carry the link in the default templates, and {{var:unsubscribe_url}} in one's own", () => {
    const each = eachMessage(ruleOf({}), records[0]!, "cid", url);
    expect(each.TextPart).toContain(`Unsubscribe: ${url}`);
    expect(each.HTMLPart).toContain(`<a href="${url}">Unsubscribe</a>`);
    const digest = digestMessage(ruleOf({}), records, "cid", url);
    expect(digest.TextPart).toContain(`Unsubscribe: ${url}`);
    const own = eachMessage(ruleOf({ text: "Stop: {{var:unsubscribe_url}}" }), records[0]!, "cid", url);
    expect(own.TextPart).toBe(`Stop: ${url}`);
    expect(eachMessage(ruleOf({}), records[0]!, "cid").TextPart).not.toContain("Unsubscribe");
  });
});
