/**
 * What every transport answers when not everything went out, written once: Mailjet-shaped error entries, the
 * chainmail entries of messages that were not sent or may have been, `details.messages` and the batch `error`.
 */
import { randomUUID } from "node:crypto";
import { ChainmailError, type ErrorPayload, MessageErrorCode } from "../core/errors.js";
import type { RawResponse } from "../schemas/common.js";
import type { ErrorEntry, MessageResult } from "../schemas/email.js";
import type { MessageProblem } from "./message-rules.js";
import type { SendOutcome } from "./types.js";

/**
 * An error entry in Mailjet's shape. StatusCode follows Mailjet's safe-retry rule (only entries with
 * StatusCode >= 500 may be sent again): 400 for a message that must change first.
 */
export function errorEntry(
  code: string,
  message: string,
  relatedTo: string[],
  extra: Record<string, unknown> = {},
  statusCode = 400,
): ErrorEntry {
  return {
    ErrorIdentifier: randomUUID(),
    ErrorCode: code,
    StatusCode: statusCode,
    ErrorMessage: message,
    ErrorRelatedTo: relatedTo,
    ...extra,
  };
}

/** The entry of a broken message rule; the field is named relative to the message. */
export function problemEntry(problem: MessageProblem): ErrorEntry {
  const said = problem.say(problem.path || "The message");
  return errorEntry(problem.code, `${said}. The message was not sent.`, problem.relatedTo);
}

/**
 * The result of a message that surely did not go out (`chainmail-not-sent`, StatusCode 503: safe to resend).
 * `identifier` lets the messages of one failed call share their ErrorIdentifier.
 */
export function notSentResult(why: string, identifier?: string): MessageResult {
  const entry = errorEntry(MessageErrorCode.NOT_SENT, `Not sent: ${why}. It is safe to send it again.`, [], {}, 503);
  return { Status: "error", Errors: [identifier ? { ...entry, ErrorIdentifier: identifier } : entry] };
}

/** The result of a message that may have gone out (`chainmail-delivery-unknown`, StatusCode 409: never resend blindly). */
export function deliveryUnknownResult(why: string, identifier?: string): MessageResult {
  const entry = errorEntry(
    MessageErrorCode.DELIVERY_UNKNOWN,
    `Delivery unknown: ${why}. It may have been delivered; check before sending it again.`,
    [],
    {},
    409,
  );
  return { Status: "error", Errors: [identifier ? { ...entry, ErrorIdentifier: identifier } : entry] };
}

/** `details.messages` of every batch `error`: input indexes. Resend exactly `not_sent`; check `unknown` first. */
export interface MessageStatuses {
  /** Reached the provider (for at least one recipient). */
  sent: number[];
  /** Surely not sent: refused, never attempted, or failed a check. */
  not_sent: number[];
  /** May have been sent. */
  unknown: number[];
}

/**
 * Sorts per-message results (one per input message, in input order): `chainmail-delivery-unknown` is unknown; a
 * success, or an error that still lists recipients (SMTP: some refused, the others got it) is sent; the rest not.
 */
export function messageStatuses(results: readonly MessageResult[]): MessageStatuses {
  const statuses: MessageStatuses = { sent: [], not_sent: [], unknown: [] };
  results.forEach((result, i) => {
    if (result.Errors?.some((e) => e.ErrorCode === MessageErrorCode.DELIVERY_UNKNOWN)) statuses.unknown.push(i);
    else if (result.Status === "success" || result.To?.length || result.Cc?.length || result.Bcc?.length)
      statuses.sent.push(i);
    else statuses.not_sent.push(i);
  });
  return statuses;
}

/**
 * The `error` of a batch that failed partway, the same for every transport: when nothing was surely sent, the
 * failure's own code (`upstream_timeout`, `storage_error`, …); else `partial_failure` with that failure in
 * `details.failure`. Either way `details.messages` says what happened to each message; `details` adds to both.
 */
export function batchError(
  failure: ChainmailError,
  messages: MessageStatuses,
  partial: { error: string; hint: string },
  details: Record<string, unknown> = {},
): ErrorPayload {
  if (!messages.sent.length) {
    const payload = failure.toPayload();
    return { ...payload, details: { ...payload.details, ...details, messages } };
  }
  return new ChainmailError("PARTIAL_FAILURE", partial.error, {
    hint: partial.hint,
    details: { failure: failure.toPayload().details, sent_messages: messages.sent.length, ...details, messages },
  }).toPayload();
}

/** The `error` of a send cancelled by the caller (abort signal) before every message was handed over. */
export function cancelledError(messages: MessageStatuses, total: number): ErrorPayload {
  const cancelled = `Cancelled after sending ${messages.sent.length} of ${total} messages; the rest were not sent.`;
  return new ChainmailError("ABORTED", cancelled, { details: { messages } }).toPayload();
}

const merelyNotSent = (result: MessageResult) =>
  result.Status === "error" && !!result.Errors?.every((e) => e.ErrorCode === MessageErrorCode.NOT_SENT);

/**
 * The outcome of a send that fired `error`, one rule for every transport: `messages sent` (one result per input
 * message) is present exactly when some message has a result of its own (sent, refused, delivery unknown). When
 * every message is merely `chainmail-not-sent` it is left out: nothing was sent, `details.messages.not_sent` lists
 * them all, and a list of identical entries would add nothing.
 */
export function failedOutcome(results: MessageResult[], error: ErrorPayload, response?: RawResponse): SendOutcome {
  return {
    ...(results.every(merelyNotSent) ? {} : { "messages sent": { Messages: results } }),
    ...(response ? { response } : {}),
    error,
  };
}
