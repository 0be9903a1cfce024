/**
 * Every error chainmail reports, in one place. A code is stable: programs match on `details.code`, people read
 * `error`. `httpStatus` is what the HTTP service answers when this code reaches the `error` port.
 */
export const ErrorCode = {
  /** An input port failed validation; `details.violations` lists every problem. */
  INVALID_INPUT: { code: "invalid_input", httpStatus: 400 },
  /** A continuation string that this source did not issue, or issued for another query. */
  INVALID_CONTINUATION: { code: "invalid_continuation", httpStatus: 400 },
  /** The upstream refused the credentials (401/403). */
  UPSTREAM_AUTH: { code: "upstream_auth", httpStatus: 502 },
  /** The upstream rejected the request as malformed or invalid (400/422 at request level). */
  UPSTREAM_REJECTED: { code: "upstream_rejected", httpStatus: 502 },
  /** The upstream answered 404 for something other than an empty history. */
  UPSTREAM_NOT_FOUND: { code: "upstream_not_found", httpStatus: 502 },
  /** The upstream kept answering 429 after every allowed retry. */
  UPSTREAM_RATE_LIMITED: { code: "upstream_rate_limited", httpStatus: 502 },
  /** The upstream refused the request body as too large (413). */
  UPSTREAM_TOO_LARGE: { code: "upstream_too_large", httpStatus: 502 },
  /** The upstream failed (5xx) after every allowed retry. */
  UPSTREAM_SERVER_ERROR: { code: "upstream_server_error", httpStatus: 502 },
  /** The upstream answered something that is not the documented shape (HTML, empty, invalid JSON). */
  UPSTREAM_BAD_RESPONSE: { code: "upstream_bad_response", httpStatus: 502 },
  /** No connection could be made or kept (refused, reset, DNS, TLS). */
  UPSTREAM_UNREACHABLE: { code: "upstream_unreachable", httpStatus: 502 },
  /** No answer within the configured timeout. */
  UPSTREAM_TIMEOUT: { code: "upstream_timeout", httpStatus: 504 },
  /** Part of an email batch was sent and part was not; `details.messages` says which (input indexes). */
  PARTIAL_FAILURE: { code: "partial_failure", httpStatus: 502 },
  /**
   * A chunk of a split email batch that was never attempted, because an earlier chunk failed in a way every call
   * would (credentials, rate limit exhausted, upstream down or timing out). Nothing of it was sent.
   */
  NOT_ATTEMPTED: { code: "not_attempted", httpStatus: 502 },
  /** A local store (index database, outbox) failed. */
  STORAGE_ERROR: { code: "storage_error", httpStatus: 500 },
  /** The request was cancelled by the caller (abort signal). */
  ABORTED: { code: "aborted", httpStatus: 499 },
  /** The HTTP service: no `Authorization: Bearer <token>` header where one is required. */
  UNAUTHORIZED: { code: "unauthorized", httpStatus: 401 },
  /** The HTTP service: a bearer token that is not one of CHAINMAIL_TOKENS. */
  FORBIDDEN: { code: "forbidden", httpStatus: 403 },
  /** The HTTP service: no node with this id (`details.nodes` lists those that exist). */
  UNKNOWN_NODE: { code: "unknown_node", httpStatus: 404 },
  /** The HTTP service: no such route. */
  NOT_FOUND: { code: "not_found", httpStatus: 404 },
  /** The HTTP service: the request body is larger than CHAINMAIL_BODY_LIMIT_BYTES. */
  REQUEST_TOO_LARGE: { code: "request_too_large", httpStatus: 413 },
  /**
   * The HTTP service: the client did not send the request's headers within CHAINMAIL_HEADERS_TIMEOUT_MS, or its
   * body within CHAINMAIL_BODY_TIMEOUT_MS more; the connection is closed.
   */
  RECEIVE_TIMEOUT: { code: "receive_timeout", httpStatus: 408 },
  /** The HTTP service: the node did not finish within CHAINMAIL_REQUEST_TIMEOUT_MS. */
  REQUEST_TIMEOUT: { code: "request_timeout", httpStatus: 504 },
  /** The HTTP service is shutting down and takes no new requests. */
  SHUTTING_DOWN: { code: "shutting_down", httpStatus: 503 },
  /** A bug in chainmail: the message says what happened. */
  INTERNAL: { code: "internal", httpStatus: 500 },
} as const;

export type ErrorCodeName = keyof typeof ErrorCode;

/**
 * `ErrorCode` values of the per-message error entries chainmail itself writes into `messages sent` (Mailjet-style
 * entries, next to the upstream's own `send-…`/`mj-…` codes) for messages of a call that failed as a whole.
 */
export const MessageErrorCode = {
  /**
   * The message surely did not reach the provider (401, 413, 429 exhausted, connection refused, not attempted, a
   * session lost before it, an outbox write failed). Every transport: StatusCode 503, so Mailjet's safe-retry rule
   * (resend only errors with StatusCode >= 500) resends it.
   */
  NOT_SENT: "chainmail-not-sent",
  /**
   * The message may have reached the provider (timeout, 5xx, connection reset, DATA interrupted): do not resend
   * blindly. Every transport: StatusCode 409, below 500, so that same rule never resends it.
   */
  DELIVERY_UNKNOWN: "chainmail-delivery-unknown",
  // Written by the message rules and the smtp and outbox transports. Where the condition is the one Mailjet reports,
  // Mailjet's code is kept, so a workflow reads the same code whichever transport sent.
  /** An address that is not an email address (Mailjet mj-0013). */
  INVALID_ADDRESS: "mj-0013",
  /** Neither TextPart nor HTMLPart (Mailjet send-0003). */
  MISSING_CONTENT: "send-0003",
  /** A `Headers` entry sets a header the transport writes itself (Mailjet send-0011). */
  FORBIDDEN_HEADER: "send-0011",
  /** DeduplicateCampaign without CustomCampaign (Mailjet send-0012). */
  DEDUPLICATE_WITHOUT_CAMPAIGN: "send-0012",
  /** A `Headers` name or value that cannot be written as a header (control characters, line breaks). */
  INVALID_HEADER: "invalid-header",
  /** Prefix: a field the transport cannot honour, e.g. `unsupported-TemplateID`, `unsupported-URLTags`. */
  UNSUPPORTED: "unsupported-",
  /** An attachment's Base64Content is not base64. */
  INVALID_BASE64: "invalid-base64",
  /** TemplateLanguage is on and a `{{var:name}}` has neither a value in Variables nor a default. */
  TEMPLATE_VARIABLE_MISSING: "template-variable-missing",
  /** The SMTP server refused the sender (MAIL FROM): nothing was sent. */
  SMTP_SENDER_REJECTED: "smtp-sender-rejected",
  /** The SMTP server refused a recipient (RCPT TO); the message went to the accepted ones, listed in To/Cc/Bcc. */
  SMTP_RECIPIENT_REJECTED: "smtp-recipient-rejected",
  /** The SMTP server refused the message after reading it (its reply to DATA): nothing was delivered. */
  SMTP_MESSAGE_REJECTED: "smtp-message-rejected",
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName]["code"];

const statusByCode: Record<string, number> = Object.fromEntries(
  Object.values(ErrorCode).map((entry) => [entry.code, entry.httpStatus]),
);

/** The HTTP status the service answers for an error code (500 for unknown codes). */
export function httpStatusOf(code: string | undefined): number {
  return (code && statusByCode[code]) || 500;
}

/** The payload of every `error` port: `{ error, details }`. */
export interface ErrorPayload {
  /** A sentence a person can act on: what failed and what to do about it. */
  error: string;
  /** For programs: always has `code`; other fields depend on it. */
  details: ErrorDetails;
}

export interface ErrorDetails {
  code: ErrorCodeValue;
  [key: string]: unknown;
}

/** One violated rule of one input field. */
export interface Violation {
  /** Dotted path from the input object, e.g. `query.page_size` or `request.Messages[3].To[0].Email`. */
  field: string;
  /** The offending value (omitted when the field is missing; secrets are never echoed). */
  value?: unknown;
  /** The rule, e.g. `required`, `integer >= 1`, `one of: transfer, mint, burn`. */
  rule: string;
  /** The whole sentence: field, value and rule. */
  message: string;
}

export interface ChainmailErrorOptions {
  /** More context for people, appended to the message. */
  hint?: string;
  /** Machine-readable context merged into `details`. */
  details?: Record<string, unknown>;
  cause?: unknown;
}

/**
 * The one error class. `shortMessage` says what failed; `hint` what to do; `details` is for programs.
 * Built viem-style so `message` is complete on its own and `toPayload()` gives the `error` port shape.
 */
export class ChainmailError extends Error {
  override name = "ChainmailError";
  readonly code: ErrorCodeValue;
  readonly shortMessage: string;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(kind: ErrorCodeName, shortMessage: string, options: ChainmailErrorOptions = {}) {
    const message = options.hint ? `${shortMessage} ${options.hint}` : shortMessage;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = ErrorCode[kind].code;
    this.shortMessage = shortMessage;
    this.hint = options.hint;
    this.details = options.details ?? {};
  }

  toPayload(): ErrorPayload {
    return { error: this.message, details: { code: this.code, ...this.details } };
  }
}

/** Builds the `invalid_input` payload listing every violation at once. */
export function invalidInput(violations: Violation[]): ErrorPayload {
  const list = violations.map((v) => v.message).join("; ");
  const noun = violations.length === 1 ? "problem" : "problems";
  return {
    error: `Invalid input (${violations.length} ${noun}): ${list}`,
    details: { code: ErrorCode.INVALID_INPUT.code, violations },
  };
}

/** Turns anything thrown into an error payload without leaking a stack to the caller. */
export function toErrorPayload(err: unknown): ErrorPayload {
  if (err instanceof ChainmailError) return err.toPayload();
  if (err instanceof Error && err.name === "AbortError") {
    return { error: "The operation was cancelled.", details: { code: ErrorCode.ABORTED.code } };
  }
  const message = err instanceof Error ? err.message : String(err);
  return {
    error: `Internal error in chainmail: ${message}. Please report it.`,
    details: { code: ErrorCode.INTERNAL.code },
  };
}
