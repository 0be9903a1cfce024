/**
 * The OpenSea source's continuation: OpenSea's `next` cursor, wrapped so that it is bound to the query that got it
 * (a continuation of another query is refused, as the own index refuses one) and remembers a tag of the cursor
 * before it, so that OpenSea handing back a cursor it already gave (a loop) is caught across calls too.
 *
 * Form: `<base64url(next)>.<tag of the previous cursor>.<mac>`, mac = sha256(query fingerprint | next | tag). The
 * mac only binds; the cursor is OpenSea's to check.
 */
import { createHash } from "node:crypto";
import { ChainmailError } from "../../core/errors.js";
import { isCursor, MAX_CURSOR_LENGTH } from "./events.js";

export interface Cursor {
  /** OpenSea's `next`. */
  next: string;
  /** `tagOf` the cursor that was asked for to get `next` (`tagOf("")` for the first page). */
  previous: string;
}

const digest = (text: string, length: number) => createHash("sha256").update(text).digest("base64url").slice(0, length);

/** A short, fixed-length name of a cursor. */
export const tagOf = (cursor: string): string => digest(`cursor|${cursor}`, 8);

const macOf = (fingerprint: string, cursor: Cursor) => digest(`${fingerprint}|${cursor.next}|${cursor.previous}`, 16);

const TAG = /^[A-Za-z0-9_-]{8}$/;

/**
 * The continuation of `cursor` for the query `fingerprint`. Only what decodeContinuation takes back is issued: the
 * source passes cursors readEventsPage checked and tags from tagOf, so anything else is a bug here, not a token.
 */
export function encodeContinuation(cursor: Cursor, fingerprint: string): string {
  if (!isCursor(cursor.next) || !TAG.test(cursor.previous)) {
    throw new ChainmailError(
      "INTERNAL",
      `No OpenSea continuation for a cursor of ${cursor.next.length} characters that is not visible ASCII up to ${MAX_CURSOR_LENGTH}, or a previous tag that is not 8 base64url characters.`,
    );
  }
  return `${Buffer.from(cursor.next, "utf8").toString("base64url")}.${cursor.previous}.${macOf(fingerprint, cursor)}`;
}

const FORM = new RegExp(
  `^([A-Za-z0-9_-]{1,${Math.ceil((MAX_CURSOR_LENGTH * 4) / 3)}})\\.([A-Za-z0-9_-]{8})\\.([A-Za-z0-9_-]{16})$`,
);

/** The cursor a continuation carries, or undefined when this source did not issue it for this query. */
export function decodeContinuation(token: string, fingerprint: string): Cursor | undefined {
  const match = FORM.exec(token);
  if (!match) return undefined;
  const next = Buffer.from(match[1]!, "base64url").toString("utf8");
  if (!isCursor(next)) return undefined;
  const cursor = { next, previous: match[2]! };
  return macOf(fingerprint, cursor) === match[3] ? cursor : undefined;
}
