/**
 * The one HTTP client every upstream transport uses: a timeout on every attempt, bounded retries with jittered
 * exponential backoff that honour `Retry-After`, and secrets scrubbed from everything it reports.
 *
 * Each attempt goes through the `pool` the call is given (upstream-pool.ts: undici, Node's client, a workflow
 * host's request helper; proxies live there). This file holds what every engine shares, and no timer or `process`
 * of its own, so that a workflow host that forbids them can bundle it.
 *
 * Upstream HTTP errors are not thrown: any status comes back as a `response` for the transport to interpret
 * (openapi-fetch style). Only "no usable answer" (timeout, connection failure) comes back as an `error`.
 * Which outcomes may be retried is the caller's decision (`shouldRetry`): reads retry freely, a send only
 * when the request cannot have been delivered.
 */

import type { RawResponse } from "../schemas/common.js";
import type { RetryPolicy } from "./config.js";
import { ChainmailError } from "./errors.js";
import { AnswerTooLarge, AttemptTimeout, CutOffAnswer, splitUrl, type UpstreamPool } from "./upstream-pool.js";

export { AnswerTooLarge };

export interface HttpCall {
  /** Upstream name for messages, logs and metrics, e.g. `NFTPort`. */
  upstream: string;
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  retry: RetryPolicy;
  /** Which outcomes may be retried. */
  shouldRetry: (outcome: AttemptOutcome) => boolean;
  /** Values that must never appear in a response, an error or a log (api keys, passwords). */
  secrets?: string[];
  /** The HTTP engine that carries each attempt (config.pool, or a source's own). */
  pool: UpstreamPool;
  signal?: AbortSignal | undefined;
  /** Observes each attempt (metrics, logs). */
  onAttempt?: ((event: AttemptEvent) => void) | undefined;
  /** Waits before each attempt, retries included (a backoff shared by several concurrent callers). */
  beforeAttempt?: (() => Promise<void>) | undefined;
  /**
   * An answer larger than this is cut off as soon as that is known (its `content-length`, else the bytes read) and
   * comes back as an error whose `cause` is an `AnswerTooLarge`; not retried. Default: no limit.
   */
  maxBodyBytes?: number | undefined;
}

/** What one attempt produced, as seen by the retry decision. */
export type AttemptOutcome =
  | { kind: "response"; status: number; headers: Record<string, string | string[] | undefined> }
  /** `requestSent: false` only when the connection never opened, so the upstream cannot have seen the request. */
  | { kind: "network"; code: string; requestSent: boolean }
  | { kind: "timeout" };

export interface AttemptEvent {
  upstream: string;
  attempt: number;
  outcome: AttemptOutcome;
  durationMs: number;
  /** Milliseconds until the next attempt, when there will be one. */
  retryInMs: number | undefined;
}

export type HttpResult =
  | { response: RawResponse; attempts: number; error?: undefined }
  | { error: ChainmailError; attempts: number; response?: undefined };

/** Connection errors raised before any byte of the request left this process. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** Idempotent reads: retry 429, 5xx, timeouts and any network failure. */
export const retryReads = (outcome: AttemptOutcome): boolean =>
  outcome.kind !== "response" || outcome.status === 429 || outcome.status >= 500;

/** Sends: retry only what cannot have been delivered: a 429, or a connection that never opened. */
export const retryUndelivered = (outcome: AttemptOutcome): boolean =>
  (outcome.kind === "response" && outcome.status === 429) || (outcome.kind === "network" && !outcome.requestSent);

export async function httpRequest(call: HttpCall): Promise<HttpResult> {
  const refusal = unsendable(call);
  if (refusal) return { error: refusal, attempts: 0 };
  const started = Date.now();
  const { retry } = call;
  for (let attempt = 1; ; attempt++) {
    if (call.beforeAttempt) {
      try {
        await call.beforeAttempt();
      } catch {
        return { error: aborted(call), attempts: attempt - 1 };
      }
    }
    const attemptStart = Date.now();
    const result = await attemptOnce(call);
    const outcome = result.outcome;
    let retryInMs: number | undefined;
    if (attempt <= retry.maxRetries && call.shouldRetry(outcome) && !call.signal?.aborted) {
      const wait = backoff(attempt, retry, outcome);
      const elapsed = Date.now() - started;
      if (wait !== undefined && elapsed + wait <= retry.budgetMs) retryInMs = wait;
    }
    call.onAttempt?.({ upstream: call.upstream, attempt, outcome, durationMs: Date.now() - attemptStart, retryInMs });
    if (retryInMs === undefined) {
      return result.response
        ? { response: result.response, attempts: attempt }
        : { error: withAttempts(result.error!, attempt), attempts: attempt };
    }
    try {
      await call.pool.wait(retryInMs, call.signal);
    } catch {
      return { error: aborted(call), attempts: attempt };
    }
  }
}

type AttemptResult =
  | { outcome: AttemptOutcome; response: RawResponse; error?: undefined }
  | { outcome: AttemptOutcome; error: ChainmailError; response?: undefined };

async function attemptOnce(call: HttpCall): Promise<AttemptResult> {
  try {
    const { method, url, body, timeoutMs, maxBodyBytes, signal } = call;
    const res = await call.pool.exchange({ method, url, headers: call.headers, body, timeoutMs, maxBodyBytes, signal });
    // Scrubbed once: the outcome reaches onAttempt (logs, metrics) as well as the response port.
    const headers = scrubHeaders(res.headers, call.secrets);
    const response: RawResponse = { status: res.status, headers, body: scrub(res.body, call.secrets) };
    return { outcome: { kind: "response", status: res.status, headers }, response };
  } catch (err) {
    if (call.signal?.aborted)
      return { outcome: { kind: "network", code: "ABORTED", requestSent: true }, error: aborted(call) };
    if (err instanceof AnswerTooLarge) {
      return {
        outcome: { kind: "response", status: err.status, headers: {} },
        error: new ChainmailError("UPSTREAM_BAD_RESPONSE", `${call.upstream} answered more than ${err.limit} bytes.`, {
          details: { upstream: call.upstream, max_bytes: err.limit },
          cause: err,
        }),
      };
    }
    if (err instanceof AttemptTimeout) {
      const what =
        err.status === 0
          ? `did not answer within ${call.timeoutMs} ms`
          : `did not finish its answer within ${call.timeoutMs} ms (HTTP ${err.status}, ${err.received} bytes of it came)`;
      return {
        outcome: { kind: "timeout" },
        error: new ChainmailError("UPSTREAM_TIMEOUT", `${call.upstream} ${what}.`, {
          hint: "It may be slow or overloaded; try again later or raise the timeout setting.",
          details: {
            upstream: call.upstream,
            timeout_ms: call.timeoutMs,
            ...(err.status === 0 ? {} : { status: err.status, received_bytes: err.received }),
          },
        }),
      };
    }
    const code = errorCode(err);
    const requestSent = !NOT_SENT_CODES.has(code);
    const outcome: AttemptOutcome = { kind: "network", code, requestSent };
    return { outcome, error: connectionError(call, outcome, err) };
  }
}

/**
 * The error of a connection that failed: what happened (refused, broken before an answer, or an answer cut off
 * midway) and what to do, which depends on whether the call is safe to repeat (`shouldRetry`: a read) or may
 * already have had its effect (a send).
 */
function connectionError(call: HttpCall, outcome: AttemptOutcome & { kind: "network" }, err: unknown): ChainmailError {
  const { code, requestSent } = outcome;
  const answered = err instanceof CutOffAnswer ? err.status : undefined;
  const reason = scrub(err instanceof Error ? err.message : String(err), call.secrets);
  const at = originOf(call.url);
  const read = call.shouldRetry(outcome);
  let what: string;
  let hint: string;
  if (!requestSent) {
    what = `Could not reach ${call.upstream} at ${at}: ${code} (${reason}).`;
    hint = "Nothing was sent. Check the base URL setting, the network and any proxy settings, then try again.";
  } else {
    what =
      answered === undefined
        ? `The connection to ${call.upstream} at ${at} broke before an answer: ${code} (${reason}).`
        : `${call.upstream} at ${at} cut its answer off midway (HTTP ${answered}): ${code} (${reason}).`;
    hint = read
      ? "Try again later; if it keeps happening, check any proxy or load balancer in between (they may cut long answers), or ask for less at once (a smaller page)."
      : "The request had been sent, so it may have taken effect: check the upstream (for email, its message history) before sending it again.";
  }
  return new ChainmailError("UPSTREAM_UNREACHABLE", what, {
    hint,
    details: {
      upstream: call.upstream,
      network_code: code,
      request_sent: requestSent,
      ...(answered === undefined ? {} : { truncated: true, status: answered }),
    },
  });
}

/** An HTTP token (RFC 9110): what a header name may be. */
const HEADER_NAME = /^[!#$%&'*+.^`|~\w-]+$/;
/** A field value undici accepts: no control characters but tab, nothing beyond Latin-1. */
const HEADER_VALUE = /^[\t\x20-\x7E\x80-\xFF]*$/;

/**
 * Why undici would refuse this request, checked before it is handed over. undici validates headers inside the
 * pool's connection, after the pool picked it: the refusal comes back as "busy", and that connection is never used
 * again (undici 7), so every such call leaks a slot of the shared pool until no call gets one. Refused here,
 * nothing reaches the pool and nothing was sent: `invalid_input`, never retried. Nodes refuse such values in their
 * schemas first (`params.api_key`); this is the guard for every other caller.
 */
function unsendable(call: HttpCall): ChainmailError | undefined {
  let problem: string | undefined;
  let field = "(request)";
  // undici's own rules for the URL's path and query; the origin it parses itself, before any pool is chosen.
  if (!/^https?:\/\//i.test(call.url)) problem = "the upstream URL does not start with http:// or https://";
  else if (/[^\u0021-\u00ff]/.test(splitUrl(call.url).path))
    problem = "the upstream URL holds spaces or control characters";
  for (const [name, value] of Object.entries(call.headers ?? {})) {
    if (problem) break;
    field = `(${name} header)`;
    if (!HEADER_NAME.test(name)) problem = `${JSON.stringify(name)} is not a valid header name`;
    else if (typeof value !== "string" || !HEADER_VALUE.test(value)) {
      // Never the value itself: it is often a credential.
      problem = `the ${name} header holds characters an HTTP header cannot carry (line breaks, control characters or characters beyond U+00FF)`;
    }
  }
  if (!problem) return undefined;
  const message = `Nothing was sent to ${call.upstream}: ${problem}.`;
  return new ChainmailError("INVALID_INPUT", message, {
    hint: "Fix the value that goes into it (a key, a password or a base URL setting).",
    details: { upstream: call.upstream, violations: [{ field, rule: "a value HTTP can carry", message }] },
  });
}

/** Milliseconds before the next attempt, or undefined when the upstream asked for longer than allowed. */
export function backoff(attempt: number, policy: RetryPolicy, outcome: AttemptOutcome): number | undefined {
  if (outcome.kind === "response") {
    const hinted = retryAfterMs(outcome.headers["retry-after"]);
    if (hinted !== undefined) return hinted <= policy.maxDelayMs ? hinted : undefined;
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  // Full jitter, with a floor so that retries never hammer the upstream back to back.
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** `Retry-After` as delay-seconds or an HTTP date, in milliseconds from now. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  // An HTTP date names its day and month; Date.parse alone would read "-5" as a year.
  if (!/[a-z]{3}/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function withAttempts(error: ChainmailError, attempts: number): ChainmailError {
  error.details.attempts = attempts;
  return error;
}

function aborted(call: HttpCall): ChainmailError {
  return new ChainmailError("ABORTED", `The call to ${call.upstream} was cancelled.`, {
    details: { upstream: call.upstream },
  });
}

function errorCode(err: unknown): string {
  let current: unknown = err;
  // undici wraps the socket error; the useful code is often on the cause.
  for (let depth = 0; current && depth < 4; depth++) {
    // A chainmail error (an answer cut off midway) carries the socket's error as its cause.
    if (current instanceof ChainmailError) {
      current = current.cause;
      continue;
    }
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code !== "UND_ERR_SOCKET") return code;
    if (typeof code === "string" && !(current as { cause?: unknown }).cause) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return err instanceof ChainmailError ? "UNKNOWN" : ((err as { code?: string })?.code ?? "UNKNOWN");
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid URL)";
  }
}

/** Replaces every secret in `text` with `[REDACTED]`. */
export function scrub(text: string, secrets: readonly string[] | undefined): string {
  if (!secrets) return text;
  let out = text;
  // Longest first: a secret that contains another (a password inside its URL-encoded or login form) must not be
  // left half-redacted by replacing the shorter one first.
  const ordered = secrets.length > 1 ? [...secrets].sort((a, b) => b.length - a.length) : secrets;
  for (const secret of ordered) {
    if (secret && secret.length >= 4 && out.includes(secret)) out = out.split(secret).join("[REDACTED]");
  }
  return out;
}

function scrubHeaders(
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[] | undefined,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.map((v) => scrub(v, secrets)) : scrub(value, secrets);
  }
  return out;
}
