/**
 * The rules a Send API v3.1 message must keep whichever transport delivers it, in one place: the email-send node
 * turns a broken rule into an `invalid_input` violation before anything is sent, the MIME renderer (smtp, outbox)
 * into a per-message error entry. Rules of one transport only live with it (mailjet/rules.ts; the renderer's MIME
 * headers). Every rule guards its own types: the node runs them on input the schema may have refused.
 */
import { MessageErrorCode } from "../core/errors.js";

type Loose = Record<string, unknown>;

export function isObject(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const isSet = (value: unknown) => value !== undefined && value !== null;

/** Dot-separated atoms, `@`, dotted labels, and a last label of letters (or punycode), over the given classes. */
function addressPattern(alphanumeric: string, letter: string, flags: string): RegExp {
  const atom = `[${alphanumeric}!#$%&'*+/=?^_\x60{|}~-]+`;
  const label = `[${alphanumeric}](?:[${alphanumeric}-]{0,61}[${alphanumeric}])?`;
  const tld = `(?:${letter}{2,63}|xn--[a-zA-Z0-9-]{1,59})`;
  return new RegExp(`^${atom}(?:\\.${atom})*@(?:${label}\\.)+${tld}$`, flags);
}

/**
 * An address the upstream would accept: local part and a dotted domain whose last label is alphabetic
 * (Mailjet rejects `invalid@123.4` with mj-0013). Non-ASCII letters are allowed on both sides.
 */
export const EMAIL_ADDRESS = addressPattern(String.raw`\p{L}\p{N}`, String.raw`\p{L}`, "u");
/**
 * The same pattern over ASCII letters and digits: every address it accepts EMAIL_ADDRESS accepts, so a match
 * settles it, and the Unicode pattern (several times slower per address) is left for the rest.
 */
const ASCII_EMAIL_ADDRESS = addressPattern("A-Za-z0-9", "[A-Za-z]", "");

/** The address found valid last: a batch tends to repeat one From address in every message. */
let lastValid: string | undefined;

/** Whether `text` is an address by EMAIL_ADDRESS, within the lengths a mailbox may have. */
export function isEmailAddress(text: string): boolean {
  if (text === lastValid) return true;
  const valid =
    text.length <= 254 && text.indexOf("@") <= 64 && (ASCII_EMAIL_ADDRESS.test(text) || EMAIL_ADDRESS.test(text));
  if (valid) lastValid = text;
  return valid;
}

/** Standard Base64 (line breaks tolerated): groups of four, padding only at the end. */
function isBase64(text: string): boolean {
  const compact = text.replace(/[\r\n]/g, "");
  return compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact);
}

/** Header names Mailjet sets itself and refuses in `Headers` (send-0011), lower case; compared case-insensitively. */
export const FORBIDDEN_HEADERS: ReadonlySet<string> = new Set(
  [
    "From",
    "Sender",
    "Subject",
    "To",
    "Cc",
    "Bcc",
    "Return-Path",
    "Delivered-To",
    "DKIM-Signature",
    "DomainKey-Status",
    "Received-SPF",
    "Authentication-Results",
    "Received",
    "X-Mailjet-Prio",
    "X-Mailjet-Debug",
    "User-Agent",
    "X-Mailer",
    "X-MJ-CustomID",
    "X-MJ-EventPayload",
    "X-MJ-Vars",
    "X-MJ-TemplateErrorDeliver",
    "X-MJ-TemplateErrorReporting",
    "X-MJ-TemplateLanguage",
    "X-Mailjet-TrackOpen",
    "X-Mailjet-TrackClick",
    "X-MJ-TemplateID",
    "X-MJ-WorkflowID",
    "X-Feedback-Id",
    "X-Mailjet-Segmentation",
    "List-Id",
    "X-MJ-MID",
    "X-MJ-ErrorMessage",
    "Date",
    "X-CSA-Complaints",
    "Message-Id",
    "X-Mailjet-Campaign",
    "X-MJ-StatisticsContactsListID",
  ].map((name) => name.toLowerCase()),
);

/** One broken rule of one message. */
export interface MessageProblem {
  /** The per-message `ErrorCode` (Mailjet's own where Mailjet reports the same condition). */
  code: string;
  /** Where, inside the message: `To[0].Email`, `Headers["Date"]`; "" for the message as a whole. */
  path: string;
  /** Mailjet's `ErrorRelatedTo` for it. */
  relatedTo: string[];
  rule: string;
  value?: unknown;
  /** The sentence, given the name of the field (`request.Messages[3].To[0].Email`, or just `To[0].Email`). */
  say(field: string): string;
}

// Module-level helpers rather than closures: the node checks every message of a batch (10,000 at once), mostly
// before V8 has optimised anything, where each closure made per message costs.
const NO_GLOBALS: Loose = {};
const ADDRESS_LISTS = ["To", "Cc", "Bcc"] as const;
const ATTACHMENT_LISTS = ["Attachments", "InlinedAttachments"] as const;

/** Whether the message or the Globals set a field (own keys only). */
const has = (message: Loose, globals: Loose, name: string) =>
  (Object.hasOwn(message, name) && isSet(message[name])) || (Object.hasOwn(globals, name) && isSet(globals[name]));

/** Adds the problem of an address that is not one; `index` -1 for a single address (From, ReplyTo). */
function checkAddress(address: unknown, list: string, index: number, out: MessageProblem[]): void {
  const email = isObject(address) ? address.Email : undefined;
  if (typeof email !== "string" || email === "" || isEmailAddress(email)) return;
  // The path is only written out for an address that breaks the rule.
  const at = index === -1 ? list : `${list}[${index}]`;
  out.push({
    code: MessageErrorCode.INVALID_ADDRESS,
    path: `${at}.Email`,
    relatedTo: [`${at}.Email`],
    rule: "an email address",
    value: email,
    say: (field) => `${field} = ${JSON.stringify(email)} is invalid: must be an email address`,
  });
}

/**
 * Every rule `message` breaks, in a fixed order. `globals` (the request's `Globals`) count for the content and
 * campaign rules; paths always name the message's own fields. Pass a message with Globals already applied and no
 * `globals` to check what will really be sent.
 */
export function messageProblems(message: Loose, globals: Loose = NO_GLOBALS): MessageProblem[] {
  const out: MessageProblem[] = [];
  if (
    !has(message, globals, "TextPart") &&
    !has(message, globals, "HTMLPart") &&
    !has(message, globals, "TemplateID")
  ) {
    out.push({
      code: MessageErrorCode.MISSING_CONTENT,
      path: "",
      relatedTo: ["HTMLPart", "TextPart"],
      rule: "at least one of TextPart, HTMLPart, TemplateID",
      say: (field) => `${field} has no content: give at least one of TextPart, HTMLPart or TemplateID`,
    });
  }
  checkAddress(message.From, "From", -1, out);
  checkAddress(message.ReplyTo, "ReplyTo", -1, out);
  // Indexed loops: before V8 optimises them, they cost a fraction of for…of's iterator steps.
  for (let i = 0; i < ADDRESS_LISTS.length; i++) {
    const list = ADDRESS_LISTS[i]!;
    const entries = message[list];
    if (!Array.isArray(entries)) continue;
    for (let j = 0; j < entries.length; j++) checkAddress(entries[j], list, j, out);
  }
  if (isObject(message.Headers)) {
    for (const name of Object.keys(message.Headers)) {
      if (FORBIDDEN_HEADERS.has(name.toLowerCase())) out.push(forbiddenHeader(name));
    }
  }
  if (message.DeduplicateCampaign === true && !has(message, globals, "CustomCampaign")) {
    out.push({
      code: MessageErrorCode.DEDUPLICATE_WITHOUT_CAMPAIGN,
      path: "DeduplicateCampaign",
      relatedTo: ["DeduplicateCampaign"],
      rule: "only with CustomCampaign",
      value: true,
      say: (field) => `${field} needs CustomCampaign (the campaign to deduplicate on)`,
    });
  }
  checkAttachments(message, out);
  return out;
}

function checkAttachments(message: Loose, out: MessageProblem[]): void {
  for (let i = 0; i < ATTACHMENT_LISTS.length; i++) {
    const list = ATTACHMENT_LISTS[i]!;
    const files = message[list];
    if (!Array.isArray(files)) continue;
    files.forEach((file, j) => {
      const content = isObject(file) ? file.Base64Content : undefined;
      if (typeof content !== "string" || content === "" || isBase64(content)) return;
      const path = `${list}[${j}].Base64Content`;
      out.push({
        code: MessageErrorCode.INVALID_BASE64,
        path,
        relatedTo: [path],
        rule: "Base64",
        value: content.length > 40 ? `${content.slice(0, 37)}...` : content,
        say: (field) => `${field} is not valid Base64 (A-Z, a-z, 0-9, +, /, padded with = to a multiple of 4)`,
      });
    });
  }
}

/** A `Headers` entry naming a header the sender writes itself (send-0011). */
export function forbiddenHeader(name: string): MessageProblem {
  const path = `Headers[${JSON.stringify(name)}]`;
  return {
    code: MessageErrorCode.FORBIDDEN_HEADER,
    path,
    relatedTo: [path],
    rule: "not a header the sender sets itself",
    say: (field) => `${field} cannot be set: the sender writes this header itself (use the message's own fields)`,
  };
}

/**
 * Mailjet's `Globals` rules (Send API v3.1 docs): scalars from the message win, objects merge key-wise (message keys
 * win), arrays concatenate (globals first).
 */
export function applyGlobals<M extends Loose>(globals: Loose | undefined, message: M): M {
  if (!isObject(globals)) return message;
  const merged: Loose = { ...globals };
  for (const [key, own] of Object.entries(message)) {
    if (!isSet(own)) continue;
    // Own keys only: a message key such as `constructor` must not meet Object.prototype's.
    const global = Object.hasOwn(globals, key) ? globals[key] : undefined;
    const value =
      Array.isArray(global) && Array.isArray(own)
        ? [...global, ...own]
        : isObject(global) && isObject(own)
          ? { ...global, ...own }
          : own;
    // Defined, not assigned: assigning a `__proto__` key would replace the merged message's prototype.
    Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged as M;
}
