/**
 * Mailjet's Event API callbacks as chainmail reads them: one event object per POST (version 1) or an array of them
 * (version 2), checked against a TypeBox schema (bounded strings and counts: the body is untrusted), then turned
 * into a `MailEvent`, the one shape the store takes. Unknown kinds are acknowledged and left out (Mailjet would
 * otherwise retry them for a day); a malformed known event refuses the whole POST, naming the field.
 */
import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { InvalidInputError, type Violation } from "../core/errors.js";
import { toDecimal } from "../core/json.js";
import { checkPort } from "../core/validate.js";
import { MAX_EVENTS_PER_POST, MailjetEvent } from "../schemas/mail.js";
import type { Fact } from "./lifecycle.js";

/** An event as the store keeps it. */
export interface MailEvent {
  /** A digest of what makes the event itself: a repeat or replay has the same key. */
  key: string;
  /** The Mailjet kind (`sent`, `open`, …). */
  kind: string;
  fact: Fact;
  /** Unix seconds. */
  time: number;
  /** Decimal digits (64-bit). */
  messageId: string;
  messageUuid: string | undefined;
  email: string;
  customId: string | undefined;
  payload: string | undefined;
  /** The kind's own fields (url, error, source, …), for `GET /messages`. */
  detail: Record<string, string | boolean>;
}

const DETAIL_FIELDS = ["hard_bounce", "blocked", "error_related_to", "error", "source", "url"] as const;

/** The lifecycle fact of a Mailjet event; undefined for kinds chainmail does not know. */
export function factOf(event: { event: string; hard_bounce?: boolean | undefined }): Fact | undefined {
  switch (event.event) {
    case "sent":
      return "delivered";
    case "open":
      return "opened";
    case "click":
      return "clicked";
    case "bounce":
      return event.hard_bounce === true ? "hard_bounce" : "soft_bounce";
    case "blocked":
      return "blocked";
    case "spam":
      return "spam";
    case "unsub":
      return "unsubscribed";
    default:
      return undefined;
  }
}

export interface ReadEvents {
  events: MailEvent[];
  /** Events of kinds chainmail does not know, acknowledged and not kept. */
  ignored: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Reads a callback body: one event or an array of them. Throws `invalid_input` naming every broken field
 * (`body.MessageID`, `body[3].time`); nothing of a refused body is stored.
 */
export function readMailjetEvents(body: unknown): ReadEvents {
  const items = Array.isArray(body) ? body : [body];
  const name = (i: number) => (Array.isArray(body) ? `body[${i}]` : "body");
  if (items.length > MAX_EVENTS_PER_POST) {
    throw new InvalidInputError([
      {
        field: "body",
        rule: `at most ${MAX_EVENTS_PER_POST} events`,
        message: `body holds ${items.length} events: at most ${MAX_EVENTS_PER_POST} per request`,
      },
    ]);
  }
  if (Array.isArray(body) && items.length === 0) {
    return { events: [], ignored: 0 };
  }
  const violations: Violation[] = [];
  const events: MailEvent[] = [];
  let ignored = 0;
  for (let i = 0; i < items.length && violations.length < 20; i++) {
    const item = items[i];
    // An unknown kind is acknowledged before its other fields are judged: it is not ours to refuse.
    if (isRecord(item) && typeof item.event === "string" && !factOf(item as { event: string })) {
      const known = checkPort(name(i), Type.Object({ event: MailjetEvent.properties.event }), { event: item.event });
      if (known.violations.length) violations.push(...known.violations);
      else ignored++;
      continue;
    }
    const { violations: found } = checkPort(name(i), MailjetEvent, item);
    if (found.length) violations.push(...found);
    else events.push(toMailEvent(item as MailjetEvent));
  }
  if (violations.length) throw new InvalidInputError(violations);
  return { events, ignored };
}

function toMailEvent(event: MailjetEvent): MailEvent {
  const messageId = toDecimal(event.MessageID);
  const detail: Record<string, string | boolean> = {};
  for (const field of DETAIL_FIELDS) {
    const value = Object.hasOwn(event, field) ? event[field] : undefined;
    if (value !== undefined) detail[field] = value;
  }
  const identity = JSON.stringify([event.event, event.time, messageId, event.email, detail]);
  return {
    key: createHash("sha256").update(identity).digest("base64url").slice(0, 32),
    kind: event.event,
    fact: factOf(event)!,
    time: event.time,
    messageId,
    messageUuid: own(event, "Message_GUID"),
    email: event.email,
    customId: own(event, "CustomID"),
    payload: own(event, "Payload"),
    detail,
  };
}

const own = <K extends keyof MailjetEvent>(event: MailjetEvent, key: K) =>
  Object.hasOwn(event, key) && event[key] !== "" ? (event[key] as string) : undefined;
