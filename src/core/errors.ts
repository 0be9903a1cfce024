/**
 * Every error chainmail reports, in one place. A code is stable: programs match on `details.code`, people read
 * `error`. `httpStatus` is what the HTTP service answers when this code reaches the `error` port (the one table it
 * maps codes with); `retryable` says whether the same call, unchanged, may succeed later (after a wait).
 */
export const ErrorCode = {
  /** An input port failed validation; `details.violations` lists every problem. */
  INVALID_INPUT: { code: "invalid_input", httpStatus: 400, retryable: false },
  /** A continuation string that this source did not issue, or issued for another query. */
  INVALID_CONTINUATION: { code: "invalid_continuation", httpStatus: 400, retryable: false },
  /** The upstream refused the credentials (401/403). */
  UPSTREAM_AUTH: { code: "upstream_auth", httpStatus: 502, retryable: false },
  /** The upstream rejected the request as malformed or invalid (400/422 at request level). */
  UPSTREAM_REJECTED: { code: "upstream_rejected", httpStatus: 502, retryable: false },
  /** The upstream answered 404 for something other than an empty history. */
  UPSTREAM_NOT_FOUND: { code: "upstream_not_found", httpStatus: 502, retryable: false },
  /** The upstream kept answering 429 after every allowed retry. */
  UPSTREAM_RATE_LIMITED: { code: "upstream_rate_limited", httpStatus: 502, retryable: true },
  /** The upstream refused the request body as too large (413). */
  UPSTREAM_TOO_LARGE: { code: "upstream_too_large", httpStatus: 502, retryable: false },
  /** The upstream failed (5xx) after every allowed retry. */
  UPSTREAM_SERVER_ERROR: { code: "upstream_server_error", httpStatus: 502, retryable: true },
  /** The upstream answered something that is not the documented shape (HTML, empty, invalid JSON). */
  UPSTREAM_BAD_RESPONSE: { code: "upstream_bad_response", httpStatus: 502, retryable: false },
  /** No connection could be made or kept (refused, reset, DNS, TLS). */
  UPSTREAM_UNREACHABLE: { code: "upstream_unreachable", httpStatus: 502, retryable: true },
  /** No answer within the configured timeout. */
  UPSTREAM_TIMEOUT: { code: "upstream_timeout", httpStatus: 504, retryable: true },
  /** Part of an email batch was sent and part was not; `details.messages` says which (input indexes). */
  PARTIAL_FAILURE: { code: "partial_failure", httpStatus: 502, retryable: false },
  /**
   * A chunk of a split email batch that was never attempted, because an earlier chunk failed in a way every call
   * would (credentials, rate limit exhausted, upstream down or timing out). Nothing of it was sent.
   */
  NOT_ATTEMPTED: { code: "not_attempted", httpStatus: 502, retryable: true },
  /** A local store (index database, outbox) failed. */
  STORAGE_ERROR: { code: "storage_error", httpStatus: 500, retryable: true },
  /** The request was cancelled by the caller (abort signal). */
  ABORTED: { code: "aborted", httpStatus: 499, retryable: false },
  /** The HTTP service: no `Authorization: Bearer <token>` header where one is required. */
  UNAUTHORIZED: { code: "unauthorized", httpStatus: 401, retryable: false },
  /** The HTTP service: a bearer token that is not one of CHAINMAIL_TOKENS. */
  FORBIDDEN: { code: "forbidden", httpStatus: 403, retryable: false },
  /** The HTTP service: no node with this id (`details.nodes` lists those that exist). */
  UNKNOWN_NODE: { code: "unknown_node", httpStatus: 404, retryable: false },
  /** The HTTP service: no such route. */
  NOT_FOUND: { code: "not_found", httpStatus: 404, retryable: false },
  /** The HTTP service: the request body is larger than CHAINMAIL_BODY_LIMIT_BYTES. */
  REQUEST_TOO_LARGE: { code: "request_too_large", httpStatus: 413, retryable: false },
  /**
   * The HTTP service: the client did not send the request's headers within CHAINMAIL_HEADERS_TIMEOUT_MS, or its
   * body within CHAINMAIL_BODY_TIMEOUT_MS more; the connection is closed.
   */
  RECEIVE_TIMEOUT: { code: "receive_timeout", httpStatus: 408, retryable: true },
  /** The HTTP service: the node did not finish within CHAINMAIL_REQUEST_TIMEOUT_MS. */
  REQUEST_TIMEOUT: { code: "request_timeout", httpStatus: 504, retryable: true },
  /** The HTTP service: the route needs a setting the operator has not given (`details.setting` names it). */
  NOT_CONFIGURED: { code: "not_configured", httpStatus: 503, retryable: false },
  /** The HTTP service is shutting down and takes no new requests. */
  SHUTTING_DOWN: { code: "shutting_down", httpStatus: 503, retryable: true },
  /** The HTTP service is at capacity: the request was refused at once rather than kept waiting (Retry-After). */
  OVERLOADED: { code: "overloaded", httpStatus: 503, retryable: true },
  /** A bug in chainmail: the message says what happened. */
  INTERNAL: { code: "internal", httpStatus: 500, retryable: false },
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
  /**
   * A recipient on the sender's suppression list (a hard bounce, blocked, a spam complaint, an unsubscribe, soft
   * bounces): not sent to it, the entry says why (`Reason`) and since when (`Since`). `SendToSuppressed` overrides.
   */
  SUPPRESSED: "suppressed",
  /** The SMTP server refused the message after reading it (its reply to DATA): nothing was delivered. */
  SMTP_MESSAGE_REJECTED: "smtp-message-rejected",
} as const;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName]["code"];

const entryByCode = new Map<string, (typeof ErrorCode)[ErrorCodeName]>(
  Object.values(ErrorCode).map((entry) => [entry.code, entry]),
);

/** The HTTP status the service answers for an error code (500 for unknown codes). */
export function httpStatusOf(code: string | undefined): number {
  return (code !== undefined && entryByCode.get(code)?.httpStatus) || 500;
}

/** Whether a call that failed with this code may succeed later unchanged (false for unknown codes). */
export function isRetryableCode(code: string | undefined): boolean {
  return (code !== undefined && entryByCode.get(code)?.retryable) || false;
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
 * The one error class: every error chainmail raises is one, or a subclass of it. `code` is its `ErrorCode`,
 * `retryable` comes from the same table, `shortMessage` says what failed, `hint` what to do, `details` is for
 * programs. Built viem-style so `message` is complete on its own and `toPayload()` gives the `error` port shape.
 */
export class ChainmailError extends Error {
  override name = "ChainmailError";
  readonly code: ErrorCodeValue;
  readonly retryable: boolean;
  readonly shortMessage: string;
  readonly hint: string | undefined;
  readonly details: Record<string, unknown>;

  /**
   * `kind` names the entry of `ErrorCode` (`"UPSTREAM_TIMEOUT"`) or gives its code (`"upstream_timeout"`). A code
   * chainmail does not know (one another chainmail's service answered, passed on by a page) is kept as it is, not
   * retryable.
   */
  constructor(kind: ErrorCodeName | ErrorCodeValue, shortMessage: string, options: ChainmailErrorOptions = {}) {
    const message = options.hint ? `${shortMessage} ${options.hint}` : shortMessage;
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const entry = Object.hasOwn(ErrorCode, kind) ? ErrorCode[kind as ErrorCodeName] : entryByCode.get(kind);
    this.code = entry?.code ?? (kind as ErrorCodeValue);
    this.retryable = entry?.retryable ?? false;
    this.shortMessage = shortMessage;
    this.hint = options.hint;
    this.details = options.details ?? {};
  }

  toPayload(): ErrorPayload {
    return { error: this.message, details: { code: this.code, ...this.details } };
  }
}

/** `invalid_input` listing every violation at once: the error the nodes, the service and the CLI refuse input with. */
export class InvalidInputError extends ChainmailError {
  override name = "InvalidInputError";
  constructor(readonly violations: Violation[]) {
    const list = violations.map((v) => v.message).join("; ");
    const noun = violations.length === 1 ? "problem" : "problems";
    super("INVALID_INPUT", `Invalid input (${violations.length} ${noun}): ${list}`, { details: { violations } });
  }
}

/** Builds the `invalid_input` payload listing every violation at once. */
export function invalidInput(violations: Violation[]): ErrorPayload {
  return new InvalidInputError(violations).toPayload();
}

/** Turns anything thrown into a `ChainmailError`, without leaking a stack to the caller. */
export function toChainmailError(err: unknown): ChainmailError {
  if (err instanceof ChainmailError) return err;
  if (err instanceof Error && err.name === "AbortError") {
    return new ChainmailError("ABORTED", "The operation was cancelled.", { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new ChainmailError("INTERNAL", `Internal error in chainmail: ${message}. Please report it.`, { cause: err });
}

/** Turns anything thrown into an error payload without leaking a stack to the caller. */
export function toErrorPayload(err: unknown): ErrorPayload {
  return toChainmailError(err).toPayload();
}
