/**
 * One call to the Mailjet Send API v3.1 and what its answer means for the messages in it.
 *
 * - `POST {MAILJET_BASE_URL}/v3.1/send`, HTTP Basic with the API key as user and the secret key as password.
 * - Retried only when the request cannot have been delivered: 429, or a connection that never opened. A timeout,
 *   a 5xx or a reset connection is never retried, since the upstream may have sent the mail already.
 * - A 200, or a 400/403 that carries one result per message (a partly failed batch), means the call was
 *   processed: the per-message results pass through exactly (MessageIDs beyond 2^53 stay exact).
 * - Anything else fails the call as a whole, and says whether its messages were surely not sent (`not_sent`)
 *   or may have been (`unknown`).
 */
import { ChainmailError, type ErrorCodeName } from "../../core/errors.js";
import { type HttpResult, httpRequest, retryUndelivered } from "../../core/http.js";
import { parseJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";
import type { EmailParams, MessageResult } from "../../schemas/email.js";

export const UPSTREAM = "Mailjet";

export type FailedCall = { status: "not_sent" | "unknown"; error: ChainmailError; response?: RawResponse };
export type CallOutcome = { status: "sent"; results: MessageResult[]; response: RawResponse } | FailedCall;

/**
 * The Authorization header value and every string that must never be shown. The API key (`user id`) is a secret
 * too: it is half of the login, and with the operator's MAILJET_API_KEY it is not the caller's to see.
 */
function basicAuth(params: EmailParams): { header: string; secrets: string[] } {
  const token = Buffer.from(`${params["user id"]}:${params.password}`).toString("base64");
  return { header: `Basic ${token}`, secrets: [params["user id"], params.password, token] };
}

/** POSTs one JSON body; what the answer means is `callOutcome`'s to say (apart, so that it can wait). */
export function postSend(body: string, params: EmailParams, ctx: RunContext): Promise<HttpResult> {
  const { mailjet } = ctx.config;
  const auth = basicAuth(params);
  return httpRequest({
    upstream: UPSTREAM,
    method: "POST",
    url: `${mailjet.baseUrl}/v3.1/send`,
    headers: { authorization: auth.header, "content-type": "application/json", accept: "application/json" },
    body,
    timeoutMs: mailjet.timeoutMs,
    retry: mailjet.retry,
    shouldRetry: retryUndelivered,
    secrets: auth.secrets,
    pool: ctx.config.pool,
    signal: ctx.signal,
    onAttempt: ctx.onUpstreamAttempt && ((event) => ctx.onUpstreamAttempt?.({ ...event, node: "email-send" })),
  });
}

/** Whether a call's answer is a 2xx: its messages went through, whatever its text turns out to say. */
export const accepted = (result: HttpResult): boolean =>
  result.response !== undefined && result.response.status >= 200 && result.response.status < 300;

/** What one call's HTTP result means for the `expected` messages it held. */
export function callOutcome(result: HttpResult, expected: number): CallOutcome {
  if (result.error) {
    const notSent =
      result.error.code === "invalid_input" ||
      (result.error.code === "upstream_unreachable" && result.error.details.request_sent === false);
    return { status: notSent ? "not_sent" : "unknown", error: result.error };
  }
  return interpretSend(result.response, expected, result.attempts);
}

type Loose = Record<string, unknown>;

/** Turns one Send API answer into per-message results or a failure of the whole call. */
export function interpretSend(response: RawResponse, expected: number, attempts: number): CallOutcome {
  const { status } = response;
  let body: Loose | undefined;
  try {
    // 50 consecutive MessageIDs beyond 2^53 round to a few doubles.
    const parsed = response.body === "" ? undefined : parseJson(response.body, { unsafeIntegersRoundTogether: true });
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Loose;
  } catch {
    body = undefined;
  }
  const messages = Array.isArray(body?.Messages) ? (body.Messages as MessageResult[]) : undefined;
  const perMessage = messages !== undefined && messages.length === expected && messages.length > 0;

  if (status >= 200 && status < 300) {
    if (perMessage) return { status: "sent", results: messages, response };
    // Accepted, but the answer does not say what happened to each message: they may have been sent.
    return fail("unknown", response, "UPSTREAM_BAD_RESPONSE", unexpected(response, expected, attempts));
  }
  if ((status === 400 || status === 403) && perMessage) return { status: "sent", results: messages, response };
  if ((status === 400 || status === 403) && messages !== undefined && messages.length > 0) {
    // Per-message results, but not one per message sent: some may have gone out.
    return fail("unknown", response, "UPSTREAM_BAD_RESPONSE", unexpected(response, expected, attempts));
  }

  return requestRefused(response, mailjetError(body, status, attempts), expected, attempts);
}

/** What Mailjet said of a refused request, read off its body. */
interface MailjetError {
  code: string | undefined;
  message: string | undefined;
  identifier: string | undefined;
  relatedTo: unknown[] | undefined;
  /** The `details` of the error port. */
  details: Loose;
  /** ` (HTTP 400 mj-0003: …)` for the error's message. */
  said: string;
}

// A flat request-level error: `{ErrorIdentifier, ErrorCode, StatusCode, ErrorMessage, ErrorRelatedTo}`; an error in
// `Globals` nests the same entries under `Globals.Errors`.
function mailjetError(body: Loose | undefined, status: number, attempts: number): MailjetError {
  const globals = body?.Globals as Loose | undefined;
  const entry = (Array.isArray(globals?.Errors) ? (globals.Errors[0] as Loose) : body) ?? {};
  const code = typeof entry.ErrorCode === "string" ? entry.ErrorCode : undefined;
  const message = typeof entry.ErrorMessage === "string" ? entry.ErrorMessage : undefined;
  const identifier = typeof entry.ErrorIdentifier === "string" ? entry.ErrorIdentifier : undefined;
  const relatedTo = Array.isArray(entry.ErrorRelatedTo) ? entry.ErrorRelatedTo : undefined;
  const details: Loose = {
    upstream: UPSTREAM,
    status,
    ...(code ? { upstream_code: code } : {}),
    ...(identifier ? { upstream_identifier: identifier } : {}),
    ...(message ? { upstream_message: message } : {}),
    ...(relatedTo ? { upstream_related_to: relatedTo } : {}),
    ...(globals ? { upstream_errors: globals.Errors, in: "Globals" } : {}),
    attempts,
  };
  const said = message ? ` (HTTP ${status}${code ? ` ${code}` : ""}: ${message})` : ` (HTTP ${status})`;
  return { code, message, identifier, relatedTo, details, said };
}

/** A request Mailjet answered without per-message results: what was (not) sent and the error to say. */
function requestRefused(response: RawResponse, said: MailjetError, expected: number, attempts: number): CallOutcome {
  const { status } = response;
  const { details } = said;
  if (status === 401 || status === 403) {
    const suspended = said.code === "mj-0001";
    return fail("not_sent", response, "UPSTREAM_AUTH", `Mailjet refused the credentials${said.said}.`, {
      hint: suspended
        ? "The Mailjet account or API key is suspended; contact Mailjet."
        : 'Check params["user id"] (the API key) and params.password (the secret key), or MAILJET_API_KEY / MAILJET_SECRET_KEY.',
      details: { ...details, field: "params" },
    });
  }
  if (status === 413) {
    return fail("not_sent", response, "UPSTREAM_TOO_LARGE", `Mailjet refused the request as too large${said.said}.`, {
      hint: "Attachments may total at most 15 MB per message; send large files as links.",
      details,
    });
  }
  if (status === 429) {
    return fail(
      "not_sent",
      response,
      "UPSTREAM_RATE_LIMITED",
      `Mailjet rate limit hit (HTTP 429); gave up after ${attempts} attempt(s).`,
      {
        hint: "Nothing of this call was sent. Try again later, lower MAILJET_CONCURRENCY or raise MAILJET_MAX_RETRIES.",
        details,
      },
    );
  }
  if (status >= 500) {
    return fail("unknown", response, "UPSTREAM_SERVER_ERROR", `Mailjet failed${said.said}; not retried.`, {
      hint:
        "A send is never retried after a 5xx, because Mailjet may have delivered it; check its message history" +
        (said.identifier ? ` (support reference ${said.identifier})` : "") +
        " before resending.",
      details,
    });
  }
  if (status >= 400) return rejected(response, said);
  return fail("unknown", response, "UPSTREAM_BAD_RESPONSE", unexpected(response, expected, attempts));
}

/** A 4xx other than credentials, size and rate: nothing was sent; the hint says what to fix. */
function rejected(response: RawResponse, said: MailjetError): CallOutcome {
  const { status } = response;
  const kind: ErrorCodeName = status === 404 ? "UPSTREAM_NOT_FOUND" : "UPSTREAM_REJECTED";
  const related = (said.relatedTo ?? []).filter((f) => typeof f === "string");
  const fix = related.length
    ? `Fix ${related.join(", ")} as Mailjet says`
    : said.message
      ? "Fix what Mailjet's message names"
      : "Check the request against the Send API v3.1 (Mailjet's answer is on the response port)";
  return fail("not_sent", response, kind, `Mailjet rejected the request${said.said}.`, {
    hint:
      status === 404
        ? "Check MAILJET_BASE_URL: it should be an origin such as https://api.mailjet.com."
        : `Nothing of this call was sent. ${fix}, then send these messages again.`,
    details: said.details,
  });
}

function unexpected(response: RawResponse, expected: number, attempts: number): ChainmailError {
  return new ChainmailError(
    "UPSTREAM_BAD_RESPONSE",
    `Mailjet answered HTTP ${response.status} without one result per message (expected ${expected}).`,
    {
      hint: "The messages may have been sent; check Mailjet's message history before resending.",
      details: { upstream: UPSTREAM, status: response.status, attempts },
    },
  );
}

function fail(
  status: "not_sent" | "unknown",
  response: RawResponse,
  kind: ErrorCodeName,
  errorOrMessage: ChainmailError | string,
  options: { hint?: string | undefined; details?: Loose } = {},
): CallOutcome {
  const error =
    typeof errorOrMessage === "string"
      ? new ChainmailError(kind, errorOrMessage, {
          ...(options.hint ? { hint: options.hint } : {}),
          details: options.details ?? {},
        })
      : errorOrMessage;
  return { status, error, response };
}
