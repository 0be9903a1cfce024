/** The MIME rendering smtp and outbox share: template variables, Globals, option headers, refusals. */
import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import type { EmailMessage } from "../../../src/schemas/email.js";
import { applyGlobals } from "../../../src/transports/message-rules.js";
import { renderMessage, renderRequest } from "../../../src/transports/mime/render.js";

const base = {
  From: { Email: "a@chainmail.test" },
  To: [{ Email: "b@example.test" }],
  Subject: "S",
  TextPart: "T",
} as EmailMessage & Record<string, unknown>;

async function parsed(message: Record<string, unknown>) {
  const out = await renderMessage({ ...base, ...message } as never, 0);
  if (!("message" in out)) throw new Error(JSON.stringify(out.errors));
  return { mail: await simpleParser(out.message.raw), raw: out.message.raw.toString() };
}

async function errors(message: Record<string, unknown>) {
  const out = await renderMessage({ ...base, ...message } as never, 0);
  return "errors" in out ? out.errors.map((e) => [e.ErrorCode, e.ErrorRelatedTo]) : [];
}

describe("template variables", () => {
  it("without TemplateLanguage the text is sent as written", async () => {
    const { mail } = await parsed({ TextPart: "Hi {{var:who}}", Variables: { who: "Ann" } });
    expect(mail.text?.trim()).toBe("Hi {{var:who}}");
  });
});

describe("rendering", () => {
  it("carries Mailjet's message options in the X- headers Mailjet's SMTP relay reads", async () => {
    const { mail } = await parsed({
      CustomCampaign: "spring drop",
      DeduplicateCampaign: true,
      TrackOpens: "disabled",
      TrackClicks: "enabled",
      Priority: 3,
      ReplyTo: { Email: "help@chainmail.test", Name: "Help" },
    });
    expect(mail.headers.get("x-mailjet-campaign")).toBe("spring drop");
    expect(mail.headers.get("x-mailjet-deduplicatecampaign")).toBe("true");
    expect(mail.headers.get("x-mailjet-trackopen")).toBe("0");
    expect(mail.headers.get("x-mailjet-trackclick")).toBe("1");
    expect(mail.headers.get("x-mailjet-prio")).toBe("3");
    expect(mail.replyTo?.value).toEqual([{ address: "help@chainmail.test", name: "Help" }]);
  });

  it("encodes non-ASCII subjects, names and header values", async () => {
    const { mail, raw } = await parsed({
      Subject: "Vente réussie ✓",
      From: { Email: "a@chainmail.test", Name: "Zoë" },
      Headers: { "X-Note": "prix élevé" },
    });
    expect(raw).not.toMatch(/[\u0080-\uffff]/);
    expect(mail.subject).toBe("Vente réussie ✓");
    expect(mail.from?.value[0]?.name).toBe("Zoë");
  });

  it("an inline attachment without ContentID is referenced by its file name", async () => {
    const { mail } = await parsed({
      HTMLPart: '<img src="cid:pic.png">',
      InlinedAttachments: [{ ContentType: "image/png", Filename: "pic.png", Base64Content: "cG5n" }],
    });
    expect(mail.attachments[0]!.cid).toBe("pic.png");
  });

  it("refuses forbidden and malformed headers, header injection, bad base64, a message without content", async () => {
    expect(
      await errors({
        TextPart: undefined,
        Headers: { "message-id": "<x@y>", "X-Evil": "a\r\nBcc: victim@example.test", "Bad Name": "v" },
        Attachments: [{ ContentType: "text/plain", Filename: "a.txt", Base64Content: "not base64!" }],
        DeduplicateCampaign: true,
      }),
    ).toEqual([
      // The rules every transport shares (message-rules.ts) first, then the MIME-specific header rules.
      ["send-0003", ["HTMLPart", "TextPart"]],
      ["send-0011", ['Headers["message-id"]']],
      ["send-0012", ["DeduplicateCampaign"]],
      ["invalid-base64", ["Attachments[0].Base64Content"]],
      ["invalid-header", ['Headers["X-Evil"]']],
      ["invalid-header", ['Headers["Bad Name"]']],
    ]);
  });

  it("applies the node's message rules too: a bad address, a MIME header, Base64 that is not in groups of four", async () => {
    expect(
      await errors({
        Cc: [{ Email: "cc@example" }],
        Headers: { "Content-Type": "text/plain" },
        Attachments: [{ ContentType: "text/plain", Filename: "a.txt", Base64Content: "SGVsbG8" }],
      }),
    ).toEqual([
      ["mj-0013", ["Cc[0].Email"]],
      ["invalid-base64", ["Attachments[0].Base64Content"]],
      ["send-0011", ['Headers["Content-Type"]']],
    ]);
  });

  it("names every field it cannot honour", async () => {
    expect(await errors({ TemplateID: 1, URLTags: "a=b", MonitoringCategory: "x", TrackOpens: "always" })).toEqual([
      ["unsupported-TemplateID", ["TemplateID"]],
      ["unsupported-URLTags", ["URLTags"]],
      ["unsupported-MonitoringCategory", ["MonitoringCategory"]],
      ["unsupported-TrackOpens", ["TrackOpens"]],
    ]);
  });

  it("applies Globals with Mailjet's rules: message scalars win, objects merge, arrays concatenate", async () => {
    const merged = applyGlobals(
      {
        Subject: "global",
        TextPart: "global text",
        Headers: { "X-A": "g", "X-B": "g" },
        Cc: [{ Email: "g@example.test" }],
      },
      { ...base, Headers: { "X-B": "m" }, Cc: [{ Email: "m@example.test" }] },
    );
    expect(merged.Subject).toBe("S");
    expect(merged.Headers).toEqual({ "X-A": "g", "X-B": "m" });
    expect(merged.Cc!.map((a) => a.Email)).toEqual(["g@example.test", "m@example.test"]);
    const [out] = await renderRequest({
      Messages: [{ ...base, Subject: undefined }],
      Globals: { Subject: "from globals" },
    } as never);
    expect("message" in out! && out.message.subject).toBe("from globals");
  });
});

describe("header spelling", () => {
  it("keeps the caller's and Mailjet's header names as written", async () => {
    const { raw } = await parsed({ CustomID: "c", Headers: { "X-MyApp-ID": "7" } });
    expect(raw).toMatch(/^X-MJ-CustomID: c\r$/m);
    expect(raw).toMatch(/^X-MyApp-ID: 7\r$/m);
    expect(raw).toMatch(/^Message-ID: </m);
  });
});
