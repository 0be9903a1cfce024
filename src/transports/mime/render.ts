/**
 * One Send API v3.1 message → one MIME message (nodemailer's composer), shared by the smtp and outbox
 * transports so both deliver byte-for-byte the same thing. A message this cannot render faithfully (a template
 * stored at Mailjet, a missing variable, a forbidden header) gets error entries instead, never a guess. The
 * rules every transport shares are in ../message-rules.ts; only the MIME-specific ones are here.
 */
import { randomUUID } from "node:crypto";
import MailComposer from "nodemailer/lib/mail-composer";
import { MessageErrorCode } from "../../core/errors.js";
import type { EmailMessage, EmailRequest, ErrorEntry } from "../../schemas/email.js";
import { applyGlobals, FORBIDDEN_HEADERS, forbiddenHeader, isSet, messageProblems } from "../message-rules.js";
import { errorEntry, problemEntry } from "../outcome.js";
import { substituteVariables } from "./template.js";

type Address = { Email: string; Name?: string | undefined };
type Message = EmailMessage & Record<string, unknown>;

/** What a rendered message needs to be sent, stored and reported. */
export interface RenderedMessage {
  /** Position in the request's `Messages`. */
  index: number;
  /** The Message-ID header, with its angle brackets. */
  messageId: string;
  /** SMTP envelope: Bcc recipients are here and never in the headers. */
  envelope: { from: string; to: string[] };
  recipients: { To: string[]; Cc: string[]; Bcc: string[] };
  customId: string;
  from: string;
  subject: string;
  /** The complete MIME message (RFC 5322, CRLF line ends). */
  raw: Buffer;
}

export type RenderOutcome = { index: number; message: RenderedMessage } | { index: number; errors: ErrorEntry[] };

/** Fields this renderer honours; any other field set on a message gets an `unsupported-<Field>` entry. */
const HONOURED = new Set([
  "From",
  "Sender",
  "To",
  "Cc",
  "Bcc",
  "ReplyTo",
  "Subject",
  "TextPart",
  "HTMLPart",
  "Attachments",
  "InlinedAttachments",
  "Variables",
  "TemplateLanguage",
  "Headers",
  "CustomID",
  "EventPayload",
  "CustomCampaign",
  "DeduplicateCampaign",
  "TrackOpens",
  "TrackClicks",
  "Priority",
]);

/** The MIME structure is the renderer's own: on top of Mailjet's list, a message may not set these. */
const MIME_HEADERS = new Set(["content-type", "content-transfer-encoding", "mime-version"]);

const HEADER_NAME = /^[!-9;-~]+$/;

const mailbox = (a: Address) => (a.Name ? { name: a.Name, address: a.Email } : a.Email);

/** Every error a message has, all at once (empty: it can be rendered). */
function check(message: Message): ErrorEntry[] {
  const errors: ErrorEntry[] = [];
  for (const [field, value] of Object.entries(message)) {
    if (HONOURED.has(field) || !isSet(value)) continue;
    const why =
      field === "TemplateID"
        ? "it names a template stored at Mailjet, which this transport cannot read; put the content in TextPart/HTMLPart"
        : "this transport cannot honour it";
    errors.push(
      errorEntry(
        `${MessageErrorCode.UNSUPPORTED}${field}`,
        `${field} is not supported by this mail transport: ${why}. The message was not sent.`,
        [field],
      ),
    );
  }
  for (const field of ["TrackOpens", "TrackClicks"] as const) {
    const value = message[field];
    if (isSet(value) && !["account_default", "disabled", "enabled"].includes(value as string)) {
      errors.push(
        errorEntry(
          `${MessageErrorCode.UNSUPPORTED}${field}`,
          `${field}=${JSON.stringify(value)} is not one of account_default, disabled, enabled.`,
          [field],
        ),
      );
    }
  }
  if (isSet(message.Priority) && !(Number.isInteger(message.Priority) && (message.Priority as number) >= 0)) {
    errors.push(
      errorEntry(
        `${MessageErrorCode.UNSUPPORTED}Priority`,
        `Priority=${JSON.stringify(message.Priority)} must be an integer from 0 to 3.`,
        ["Priority"],
      ),
    );
  }
  errors.push(...messageProblems(message).map(problemEntry), ...headerErrors(message));
  return errors;
}

/** Mailjet's forbidden headers are reported by messageProblems; these are the MIME-specific header rules. */
function headerErrors(message: Message): ErrorEntry[] {
  const errors: ErrorEntry[] = [];
  for (const [name, value] of Object.entries(message.Headers ?? {})) {
    if (FORBIDDEN_HEADERS.has(name.toLowerCase())) continue;
    if (MIME_HEADERS.has(name.toLowerCase())) errors.push(problemEntry(forbiddenHeader(name)));
    else if (!HEADER_NAME.test(name) || typeof value !== "string" || /[\r\n\0]/.test(value)) {
      errors.push(
        errorEntry(
          MessageErrorCode.INVALID_HEADER,
          `Headers["${name}"] is not a valid header: the name must be printable ASCII without ":" or spaces, the value a string without line breaks.`,
          [`Headers["${name}"]`],
        ),
      );
    }
  }
  return errors;
}

interface Content {
  subject: string;
  text: string | undefined;
  html: string | undefined;
}

/** Subject, TextPart and HTMLPart with `{{var:…}}` substituted when TemplateLanguage is on. */
function content(message: Message): Content | ErrorEntry {
  const raw: Content = { subject: message.Subject ?? "", text: message.TextPart, html: message.HTMLPart };
  if (message.TemplateLanguage !== true) return raw;
  const variables = (message.Variables ?? {}) as Record<string, unknown>;
  const missing = new Set<string>();
  const related = new Set<string>();
  const apply = (text: string | undefined, field: string, html: boolean) => {
    if (text === undefined) return undefined;
    const result = substituteVariables(text, variables, { html });
    if (result.missing.length) related.add(field);
    for (const name of result.missing) missing.add(name);
    return result.text;
  };
  const out: Content = {
    subject: apply(raw.subject, "Subject", false) ?? "",
    text: apply(raw.text, "TextPart", false),
    html: apply(raw.html, "HTMLPart", true),
  };
  if (!missing.size) return out;
  const names = [...missing].map((n) => `"${n}"`).join(", ");
  return errorEntry(
    MessageErrorCode.TEMPLATE_VARIABLE_MISSING,
    `Template variable ${names} has no value in Variables and no default ({{var:name:"default"}}). The message was not sent.`,
    ["Variables", ...related],
    { MissingVariables: [...missing] },
  );
}

/** The `X-` headers that carry Mailjet's message options (the names Mailjet's own SMTP relay reads). */
function optionHeaders(message: Message): Record<string, string> {
  const headers: Record<string, string> = {};
  if (isSet(message.CustomID)) headers["X-MJ-CustomID"] = String(message.CustomID);
  if (isSet(message.EventPayload)) headers["X-MJ-EventPayload"] = String(message.EventPayload);
  if (isSet(message.CustomCampaign)) headers["X-Mailjet-Campaign"] = String(message.CustomCampaign);
  if (message.DeduplicateCampaign) headers["X-Mailjet-DeduplicateCampaign"] = "true";
  if (message.TrackOpens === "enabled" || message.TrackOpens === "disabled")
    headers["X-Mailjet-TrackOpen"] = message.TrackOpens === "enabled" ? "1" : "0";
  if (message.TrackClicks === "enabled" || message.TrackClicks === "disabled")
    headers["X-Mailjet-TrackClick"] = message.TrackClicks === "enabled" ? "1" : "0";
  if (isSet(message.Priority)) headers["X-Mailjet-Prio"] = String(message.Priority);
  return headers;
}

/**
 * Plain ASCII `X-` values are written as given (Mailjet's relay and most tools read X- headers raw, not as
 * encoded words), and so are `List-Unsubscribe` and `List-Unsubscribe-Post` (RFC 8058 readers match them as
 * written, the URL unbroken); others are left to the composer to parse, encode and fold. Line breaks were refused by `check`.
 */
function headerValues(headers: Record<string, string>): Record<string, string | { prepared: true; value: string }> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      /^(x-|list-unsubscribe)/i.test(name) && /^[\x20-\x7e]*$/.test(value) && name.length + value.length < 900
        ? { prepared: true, value }
        : value,
    ]),
  );
}

/**
 * Gives custom headers back the caller's spelling (X-MJ-CustomID, where the composer writes X-Mj-Customid).
 * Header names are case-insensitive, so only the look changes; only the top-level header block is touched.
 */
function respell(raw: Buffer, names: string[]): Buffer {
  if (!names.length) return raw;
  const end = raw.indexOf("\r\n\r\n");
  if (end < 0) return raw;
  const head = raw.subarray(0, end).toString("latin1");
  const byLower = new Map(names.map((name) => [name.toLowerCase(), name]));
  const fixed = head.replace(/^([!-9;-~]+):/gm, (whole, name: string) => {
    const original = byLower.get(name.toLowerCase());
    return original ? `${original}:` : whole;
  });
  return fixed === head ? raw : Buffer.concat([Buffer.from(fixed, "latin1"), raw.subarray(end)]);
}

function attachmentsOf(message: Message) {
  return [
    ...(message.Attachments ?? []).map((a) => ({
      filename: a.Filename,
      contentType: a.ContentType,
      content: Buffer.from(a.Base64Content, "base64"),
    })),
    // Mailjet: ContentID is optional; without it the part is referenced by its file name.
    ...(message.InlinedAttachments ?? []).map((a) => ({
      filename: a.Filename,
      contentType: a.ContentType,
      content: Buffer.from(a.Base64Content, "base64"),
      cid: a.ContentID || a.Filename,
      contentDisposition: "inline" as const,
    })),
  ];
}

/** Renders one message, or says why it cannot be. */
export async function renderMessage(message: Message, index: number): Promise<RenderOutcome> {
  const errors = check(message);
  const parts = content(message);
  if (!("subject" in parts)) errors.push(parts);
  if (errors.length || !("subject" in parts)) return { index, errors };

  const list = (addresses: Address[] | undefined) => (addresses ?? []).map((a) => a.Email);
  const recipients = { To: list(message.To), Cc: list(message.Cc), Bcc: list(message.Bcc) };
  const domain = message.From.Email.split("@").pop() || "chainmail.invalid";
  const messageId = `<${randomUUID()}@${domain}>`;
  const headers = { ...message.Headers, ...optionHeaders(message) };
  const composer = new MailComposer({
    from: mailbox(message.From),
    sender: message.Sender ? mailbox(message.Sender as Address) : undefined,
    to: message.To.map(mailbox),
    cc: message.Cc?.length ? message.Cc.map(mailbox) : undefined,
    bcc: message.Bcc?.length ? message.Bcc.map(mailbox) : undefined,
    replyTo: message.ReplyTo ? mailbox(message.ReplyTo as Address) : undefined,
    subject: parts.subject,
    text: parts.text,
    html: parts.html,
    messageId,
    date: new Date(),
    headers: headerValues(headers),
    attachments: attachmentsOf(message),
    disableFileAccess: true,
    disableUrlAccess: true,
    xMailer: false,
  });
  const raw = respell(await composer.compile().build(), Object.keys(headers));
  return {
    index,
    message: {
      index,
      messageId,
      envelope: { from: message.From.Email, to: [...recipients.To, ...recipients.Cc, ...recipients.Bcc] },
      recipients,
      customId: message.CustomID ?? "",
      from: message.From.Email,
      subject: parts.subject,
      raw,
    },
  };
}

/**
 * Renders the messages of a request one at a time, in input order, with `Globals` applied, so a transport holds
 * one rendered MIME message at a time however large the batch.
 */
export async function* renderEach(request: EmailRequest): AsyncGenerator<RenderOutcome> {
  const globals = (request as { Globals?: Record<string, unknown> }).Globals;
  for (const [i, message] of request.Messages.entries()) yield await renderMessage(applyGlobals(globals, message), i);
}

/** Every message of a request rendered (for checks and tests; transports use `renderEach`). */
export async function renderRequest(request: EmailRequest): Promise<RenderOutcome[]> {
  const out: RenderOutcome[] = [];
  for await (const outcome of renderEach(request)) out.push(outcome);
  return out;
}
