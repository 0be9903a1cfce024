/**
 * What the service's event feed (`GET /events`) and suppression lookup (`POST /suppressions/lookup`) take from a
 * caller, read from untrusted input: every field bounded, anything else refused with `invalid_input` naming the
 * field. The workflow packages' delivery-event triggers read the feed; their `email-send` asks the lookup.
 */
import { InvalidInputError, type Violation } from "../core/errors.js";
import { MailjetEventKinds } from "../schemas/mail.js";
import { isEmailAddress } from "../transports/message-rules.js";
import { ANY_SENDER } from "./lifecycle.js";

/** Events one feed page holds at most, and by default. */
export const MAX_FEED_LIMIT = 1_000;
export const DEFAULT_FEED_LIMIT = 100;
/** Addresses one lookup names at most (a caller with more asks again). */
export const MAX_LOOKUP_EMAILS = 1_000;

export interface FeedQuery {
  /** The cursor of the last event seen; 0: from the first one stored. */
  after: number;
  /** Mailjet kinds kept; absent: every kind. */
  kinds?: string[] | undefined;
  limit: number;
}

export interface SuppressionLookup {
  sender: string;
  emails: string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const shown = (value: unknown) => (typeof value === "string" ? value.slice(0, 64) : value);

function violation(field: string, value: unknown, rule: string): Violation {
  const given = value === undefined ? "" : ` = ${JSON.stringify(shown(value))}`;
  return {
    field,
    ...(value === undefined ? {} : { value: shown(value) }),
    rule,
    message: `${field}${given} is invalid: must be ${rule}`,
  };
}

const FEED_FIELDS = ["after", "kinds", "limit"];

/** Reads `GET /events`'s query (`after`, `kinds`, `limit`, each at most once). */
export function readFeedQuery(query: unknown): FeedQuery {
  const given = isRecord(query) ? query : {};
  const violations: Violation[] = [];
  for (const name of Object.keys(given)) {
    if (!FEED_FIELDS.includes(name)) violations.push(violation(name.slice(0, 64), undefined, "not given: unknown"));
  }
  const one = (name: string): string | undefined => {
    if (!Object.hasOwn(given, name)) return undefined;
    const value = given[name];
    if (typeof value === "string") return value;
    violations.push(violation(name, undefined, "given once"));
    return undefined;
  };
  const result: FeedQuery = { after: 0, limit: DEFAULT_FEED_LIMIT };
  const after = one("after");
  if (after !== undefined) {
    // A cursor is what a page handed out: a decimal below 2^53.
    if (/^\d{1,16}$/.test(after) && Number(after) <= Number.MAX_SAFE_INTEGER) result.after = Number(after);
    else violations.push(violation("after", after, "a cursor from an earlier page: an integer from 0 to 2^53 - 1"));
  }
  const kinds = one("kinds");
  if (kinds !== undefined) {
    const names = kinds.split(",").map((k) => k.trim());
    const known = MailjetEventKinds as readonly string[];
    if (kinds.length <= 256 && names.every((k) => known.includes(k))) result.kinds = [...new Set(names)];
    else violations.push(violation("kinds", kinds, `a comma-separated list of: ${known.join(", ")}`));
  }
  const limit = one("limit");
  if (limit !== undefined) {
    if (/^\d{1,4}$/.test(limit) && Number(limit) >= 1 && Number(limit) <= MAX_FEED_LIMIT) result.limit = Number(limit);
    else violations.push(violation("limit", limit, `an integer from 1 to ${MAX_FEED_LIMIT}`));
  }
  if (violations.length) throw new InvalidInputError(violations.slice(0, 20));
  return result;
}

/** Reads `POST /suppressions/lookup`'s body: `{ "sender": "…", "emails": ["…", …] }`. */
export function readSuppressionLookup(body: unknown): SuppressionLookup {
  const violations: Violation[] = [];
  if (!isRecord(body)) throw new InvalidInputError([violation("body", undefined, "an object with sender and emails")]);
  for (const name of Object.keys(body)) {
    if (name !== "sender" && name !== "emails")
      violations.push(violation(`body.${name.slice(0, 64)}`, undefined, "not given: unknown"));
  }
  const sender = Object.hasOwn(body, "sender") ? body.sender : undefined;
  if (typeof sender !== "string" || (sender !== ANY_SENDER && !isEmailAddress(sender)))
    violations.push(violation("body.sender", typeof sender === "string" ? sender : undefined, "an email address"));
  const emails = Object.hasOwn(body, "emails") ? body.emails : undefined;
  if (!Array.isArray(emails) || emails.length > MAX_LOOKUP_EMAILS) {
    violations.push(violation("body.emails", undefined, `an array of at most ${MAX_LOOKUP_EMAILS} email addresses`));
  } else {
    emails.forEach((email, i) => {
      if (violations.length < 20 && (typeof email !== "string" || !isEmailAddress(email)))
        violations.push(
          violation(`body.emails[${i}]`, typeof email === "string" ? email : undefined, "an email address"),
        );
    });
  }
  if (violations.length) throw new InvalidInputError(violations);
  return { sender: sender as string, emails: emails as string[] };
}
