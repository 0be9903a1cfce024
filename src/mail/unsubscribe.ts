/**
 * One-click unsubscribe (RFC 8058) for the mail chainmail sends itself (smtp, outbox): a `List-Unsubscribe` HTTPS
 * URL under CHAINMAIL_PUBLIC_URL and `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. The URL carries a token
 * naming the sender, the recipient and the campaign (the rule), signed with HMAC-SHA256 under
 * CHAINMAIL_UNSUBSCRIBE_SECRET: a forged or altered token is refused and changes nothing. (Mailjet writes its own
 * header in place of any given; there its `unsub` event does the same job.)
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { setting } from "../core/env.js";
import type { EmailMessage, EmailRequest } from "../schemas/email.js";

type Env = Readonly<Record<string, string | undefined>>;

/** A token is short; anything longer is not one of ours and is not even decoded. */
export const MAX_TOKEN_LENGTH = 2048;

export interface UnsubscribeClaim {
  /** The sender address. */
  sender: string;
  /** The recipient. */
  email: string;
  /** The campaign (a watch rule, a CustomCampaign), "" when none. */
  campaign: string;
}

const mac = (secret: string, payload: string) =>
  createHmac("sha256", secret).update(payload).digest().subarray(0, 24).toString("base64url");

export function signUnsubscribe(claim: UnsubscribeClaim, secret: string): string {
  const payload = Buffer.from(JSON.stringify([claim.sender, claim.email, claim.campaign])).toString("base64url");
  return `${payload}.${mac(secret, payload)}`;
}

/** The claim of a token this service signed, or undefined for anything else (forged, altered, malformed). */
export function verifyUnsubscribe(token: string, secret: string): UnsubscribeClaim | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{32})$/.exec(token);
  if (!match) return undefined;
  const expected = Buffer.from(mac(secret, match[1]!));
  const given = Buffer.from(match[2]!);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const claim: unknown = JSON.parse(Buffer.from(match[1]!, "base64url").toString("utf8"));
    if (!Array.isArray(claim) || claim.length !== 3 || !claim.every((part) => typeof part === "string"))
      return undefined;
    const [sender, email, campaign] = claim as string[];
    return { sender: sender!, email: email!, campaign: campaign! };
  } catch {
    return undefined;
  }
}

/** The unsubscribe URL of one recipient, or undefined when CHAINMAIL_PUBLIC_URL or the secret is not set. */
export function unsubscribeUrl(env: Env, claim: UnsubscribeClaim): string | undefined {
  const base = setting(env, "CHAINMAIL_PUBLIC_URL");
  const secret = setting(env, "CHAINMAIL_UNSUBSCRIBE_SECRET");
  if (!base || !secret) return undefined;
  return `${base.replace(/\/+$/, "")}/unsubscribe/${signUnsubscribe(claim, secret)}`;
}

const hasHeader = (message: EmailMessage, name: string) =>
  Object.keys(message.Headers ?? {}).some((key) => key.toLowerCase() === name.toLowerCase());

/**
 * The request with RFC 8058's two headers on every message that has exactly one recipient (a header is the same for
 * everyone who gets the message, and a link must unsubscribe only whoever clicks it) and no List-Unsubscribe of its
 * own. Unchanged when unsubscribe links are not configured.
 */
export function withUnsubscribeHeaders(request: EmailRequest, env: Env): EmailRequest {
  const globals = (request.Globals ?? {}) as Partial<EmailMessage>;
  let changed = false;
  const messages = request.Messages.map((message) => {
    const recipients = [...(message.To ?? []), ...(message.Cc ?? []), ...(message.Bcc ?? [])];
    const from = message.From ?? globals.From;
    if (recipients.length !== 1 || !from || hasHeader(message, "List-Unsubscribe")) return message;
    const campaign = message.CustomCampaign ?? globals.CustomCampaign ?? "";
    const url = unsubscribeUrl(env, { sender: from.Email.toLowerCase(), email: recipients[0]!.Email, campaign });
    if (!url) return message;
    changed = true;
    return {
      ...message,
      Headers: {
        ...message.Headers,
        "List-Unsubscribe": `<${url}>`,
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
      },
    };
  });
  return changed ? { ...request, Messages: messages } : request;
}
