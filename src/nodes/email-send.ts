import type { Violation } from "../core/errors.js";
import { defineNode, type RunContext } from "../core/node.js";
import { ErrorPayloadSchema, RawResponse } from "../schemas/common.js";
import { EmailParams, EmailRequest, MessagesSent } from "../schemas/email.js";
import { resolveMailTransport } from "../transports/index.js";
import { MAX_RECIPIENTS_PER_CALL, recipientCount } from "../transports/mailjet/chunks.js";
import { NO_LOGIN } from "../transports/types.js";

/**
 * SPEC.md operation 4: sends a batch of messages through the configured transport (Mailjet Send API v3.1 by
 * default) and reports one result per message, in input order. Any number of messages: the transport splits.
 */
export const emailSend = defineNode({
  id: "email-send",
  version: "v3.1",
  title: "Email sender",
  description:
    "Sends a batch of email messages (Mailjet Send API v3.1 format, any size) and returns per-message delivery results.",
  inputs: { params: EmailParams, request: EmailRequest },
  outputs: { "messages sent": MessagesSent, response: RawResponse, error: ErrorPayloadSchema },
  successPort: "messages sent",
  prepare: withOperatorCredentials,
  check: ({ params, request }) => [...checkParams(params), ...checkRequest(request)],
  run: async ({ params, request }, ctx) => {
    const transport = await resolveMailTransport(ctx.config);
    const outcome = await transport.send(request, params, ctx);
    return Object.fromEntries(Object.entries(outcome).filter(([, v]) => v !== undefined));
  },
});

/**
 * Uses the operator's MAILJET_API_KEY / MAILJET_SECRET_KEY when the caller gave no credentials at all. The smtp
 * and outbox transports need none from the caller (smtp logs in with SMTP_URL's login).
 */
function withOperatorCredentials(input: Record<string, unknown>, ctx: RunContext): Record<string, unknown> {
  const given = input.params;
  const empty = given === undefined || (isObject(given) && Object.keys(given).length === 0);
  if (empty && ctx.config.emailTransport !== "mailjet") return { ...input, params: { ...NO_LOGIN } };
  const { userId, password } = ctx.config.mailjet;
  if (!empty || !userId || !password) return input;
  return { ...input, params: { "user id": userId, password } };
}

type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * An address the upstream would accept: local part and a dotted domain whose last label is alphabetic
 * (Mailjet rejects `invalid@123.4` with mj-0013). Non-ASCII letters are allowed on both sides.
 */
const LOCAL = String.raw`[\p{L}\p{N}!#$%&'*+/=?^_\x60{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_\x60{|}~-]+)*`;
const LABEL = String.raw`[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?`;
const TLD = String.raw`(?:\p{L}{2,63}|xn--[a-zA-Z0-9-]{1,59})`;
const EMAIL = new RegExp(`^${LOCAL}@(?:${LABEL}\\.)+${TLD}$`, "u");

export function isEmailAddress(text: string): boolean {
  return text.length <= 254 && text.indexOf("@") <= 64 && EMAIL.test(text);
}

/** Standard Base64 (line breaks tolerated): groups of four, padding only at the end. */
export function isBase64(text: string): boolean {
  const compact = text.replace(/[\r\n]/g, "");
  return compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact);
}

/** Header names Mailjet sets itself and refuses in `Headers` (send-0011); compared case-insensitively. */
const FORBIDDEN_HEADERS = new Set(
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

function checkParams(params: unknown): Violation[] {
  const user = isObject(params) ? params["user id"] : undefined;
  if (typeof user !== "string" || !user.includes(":")) return [];
  return [
    {
      field: 'params["user id"]',
      rule: "no colon (HTTP Basic user)",
      message: 'params["user id"] is invalid: must not contain ":" (it is the HTTP Basic user name)',
    },
  ];
}

/**
 * What the upstream would reject for certain, per message, named like `request.Messages[3].To[0].Email`.
 * The schema has checked types already; these rules guard their own types, since both run on the same input.
 */
export function checkRequest(request: unknown): Violation[] {
  if (!isObject(request) || !Array.isArray(request.Messages)) return [];
  const globals = isObject(request.Globals) ? request.Globals : {};
  const out: Violation[] = [];
  request.Messages.forEach((message, i) => {
    if (!isObject(message)) return;
    const at = `request.Messages[${i}]`;
    const has = (name: string) => message[name] !== undefined || globals[name] !== undefined;
    if (!has("TextPart") && !has("HTMLPart") && !has("TemplateID")) {
      out.push({
        field: at,
        rule: "at least one of TextPart, HTMLPart, TemplateID",
        message: `${at} has no content: give at least one of TextPart, HTMLPart or TemplateID`,
      });
    }
    checkAddress(out, `${at}.From`, message.From);
    checkAddress(out, `${at}.ReplyTo`, message.ReplyTo);
    for (const list of ["To", "Cc", "Bcc"] as const) {
      if (!Array.isArray(message[list])) continue;
      (message[list] as unknown[]).forEach((address, j) => {
        checkAddress(out, `${at}.${list}[${j}]`, address);
      });
    }
    for (const list of ["Attachments", "InlinedAttachments"] as const) {
      if (!Array.isArray(message[list])) continue;
      (message[list] as unknown[]).forEach((file, j) => {
        const content = isObject(file) ? file.Base64Content : undefined;
        if (typeof content === "string" && content !== "" && !isBase64(content)) {
          const field = `${at}.${list}[${j}].Base64Content`;
          out.push({
            field,
            value: content.length > 40 ? `${content.slice(0, 37)}...` : content,
            rule: "Base64",
            message: `${field} is not valid Base64 (A-Z, a-z, 0-9, +, /, padded with = to a multiple of 4)`,
          });
        }
      });
    }
    const recipients = recipientCount(message, globals);
    if (recipients > MAX_RECIPIENTS_PER_CALL) {
      out.push({
        field: at,
        value: recipients,
        rule: `at most ${MAX_RECIPIENTS_PER_CALL} recipients (To + Cc + Bcc)`,
        message: `${at} has ${recipients} recipients: Mailjet takes at most ${MAX_RECIPIENTS_PER_CALL} per message (To + Cc + Bcc); split it into several messages`,
      });
    }
    if (message.DeduplicateCampaign === true && !has("CustomCampaign")) {
      out.push({
        field: `${at}.DeduplicateCampaign`,
        value: true,
        rule: "only with CustomCampaign",
        message: `${at}.DeduplicateCampaign needs ${at}.CustomCampaign (the campaign to deduplicate on)`,
      });
    }
    if (isObject(message.Headers)) {
      for (const name of Object.keys(message.Headers)) {
        if (!FORBIDDEN_HEADERS.has(name.toLowerCase())) continue;
        const field = `${at}.Headers[${JSON.stringify(name)}]`;
        out.push({
          field,
          rule: "not a header Mailjet sets itself",
          message: `${field} cannot be set: Mailjet sets this header itself (use the message's own fields)`,
        });
      }
    }
  });
  return out;
}

function checkAddress(out: Violation[], at: string, address: unknown): void {
  const email = isObject(address) ? address.Email : undefined;
  if (typeof email !== "string" || email === "" || isEmailAddress(email)) return;
  out.push({
    field: `${at}.Email`,
    value: email,
    rule: "an email address",
    message: `${at}.Email = ${JSON.stringify(email)} is invalid: must be an email address`,
  });
}
