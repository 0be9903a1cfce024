/**
 * OpenSea API v2 transport: one GET with the key in `X-API-KEY`, its answer parsed losslessly (an event's
 * `quantity` is a bare int64), and every failure turned into the `error` port's shape with OpenSea's own message.
 *
 * - Retried (reads are idempotent): 429 and OpenSea's own rate-limit status 599, with or without `Retry-After`
 *   (seconds or an HTTP date), every other 5xx, timeouts, broken connections, and a 2xx whose body is cut short or
 *   is not JSON (a truncated answer); all within the retry budget.
 * - Not retried: 401/403 (the key), 404, 400.
 * - An answer larger than MAX_ANSWER_BYTES is refused unread.
 */
import { ChainmailError } from "../../core/errors.js";
import { backoff, httpRequest, retryReads } from "../../core/http.js";
import { parseJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";

export const UPSTREAM = "OpenSea";

/** A page of 200 events is ~300 KB; far more is not an answer this source can use. */
export const MAX_ANSWER_BYTES = 32 * 2 ** 20;

/** OpenSea's own rate-limit status, next to 429 (its SDK treats both alike). */
const RATE_LIMIT_STATUSES = new Set([429, 599]);

export type QueryValue = string | number | readonly string[] | undefined;

export type OpenSeaAnswer =
  | { body: unknown; response: RawResponse; error?: undefined }
  | { error: ChainmailError; response?: RawResponse; body?: undefined };

export interface OpenSeaCall {
  /** Path under the origin, already encoded. */
  path: string;
  query?: Record<string, QueryValue>;
  apiKey: string;
  /** The node asking (metrics, logs). */
  node: string;
  /** What a 404 means here, for the message: e.g. "contract 0x… on ethereum". */
  notFound: string;
}

/** GETs one OpenSea resource: the parsed 2xx body, or the error to report. */
export async function getOpenSea(call: OpenSeaCall, ctx: RunContext): Promise<OpenSeaAnswer> {
  const { opensea } = ctx.config;
  const url = urlOf(opensea.baseUrl, call);
  const started = Date.now();
  let attempts = 0;
  for (let unreadable = 0; ; unreadable++) {
    const result = await httpRequest({
      upstream: UPSTREAM,
      method: "GET",
      url,
      headers: { "x-api-key": call.apiKey, accept: "application/json" },
      timeoutMs: opensea.timeoutMs,
      retry: opensea.retry,
      shouldRetry: retryReads,
      secrets: [call.apiKey],
      pool: opensea.pool ?? ctx.config.pool,
      signal: ctx.signal,
      maxBodyBytes: MAX_ANSWER_BYTES,
      onAttempt: ctx.onUpstreamAttempt && ((event) => ctx.onUpstreamAttempt?.({ ...event, node: call.node })),
    });
    attempts += result.attempts;
    if (result.error) {
      result.error.details.attempts = attempts;
      return { error: result.error };
    }
    const { response } = result;
    const parsed = readBody(response);
    const ok = response.status >= 200 && response.status < 300;
    if (ok && "body" in parsed) return { body: parsed.body, response };
    if (ok && "parseError" in parsed) {
      // A 2xx that is not JSON is an answer cut short (or a proxy's page): asked again, as a read may be.
      const again = await waitToAskAgain(unreadable, started, ctx);
      if (again === "ask") continue;
      const error =
        again === "cancelled"
          ? new ChainmailError("ABORTED", "The call to OpenSea was cancelled.", {
              details: { upstream: UPSTREAM, attempts },
            })
          : badResponse(response, parsed.parseError, attempts);
      return { error, response };
    }
    return { error: failure(response, "body" in parsed ? parsed.body : undefined, attempts, call), response };
  }
}

/** The resource's URL; several values of a key go as repeated keys (`event_type=sale&event_type=listing`), as
 * OpenSea's SDK sends them. */
function urlOf(baseUrl: string, call: OpenSeaCall): string {
  let url = `${baseUrl}${call.path}`;
  let separator = "?";
  for (const [name, value] of Object.entries(call.query ?? {})) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      url += `${separator}${name}=${encodeURIComponent(String(item))}`;
      separator = "&";
    }
  }
  return url;
}

/** After an unreadable 2xx: waits the retry's backoff if the retry rules allow another ask. */
async function waitToAskAgain(
  unreadable: number,
  started: number,
  ctx: RunContext,
): Promise<"ask" | "give up" | "cancelled"> {
  const { opensea } = ctx.config;
  const wait = backoff(unreadable + 1, opensea.retry, { kind: "timeout" });
  const retry =
    unreadable < opensea.retry.maxRetries &&
    wait !== undefined &&
    Date.now() - started + wait <= opensea.retry.budgetMs &&
    !ctx.signal?.aborted;
  if (!retry) return "give up";
  const waited = await (opensea.pool ?? ctx.config.pool).wait(wait, ctx.signal).then(
    () => true,
    () => false,
  );
  return waited ? "ask" : "cancelled";
}

function readBody(response: RawResponse): { body: unknown } | { parseError: string } {
  if (response.body === "") return { parseError: "empty body" };
  try {
    return { body: parseJson(response.body) };
  } catch (err) {
    return { parseError: (err as Error).message };
  }
}

/** OpenSea's own words for a failure: `{"errors": [...]}` (strings or objects), a JSON string, or `detail`/`message`. */
export function upstreamMessage(body: unknown): string | undefined {
  let said: string | undefined;
  if (typeof body === "string") said = body;
  else if (body && typeof body === "object" && !Array.isArray(body)) {
    const errors = Object.hasOwn(body, "errors") ? (body as { errors: unknown }).errors : undefined;
    if (Array.isArray(errors) && errors.length > 0) {
      said = errors
        .slice(0, 5)
        .map((e) => (typeof e === "string" ? e : (messageOf(e) ?? JSON.stringify(e))))
        .join("; ");
    } else said = messageOf(body);
  }
  // OpenSea's words reach a message people read: bounded, one line.
  return said === undefined ? undefined : said.replace(/[^\x20-\x7e\u00a0-\uffff]+/g, " ").slice(0, 300);
}

function messageOf(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return undefined;
  for (const key of ["message", "detail", "error"]) {
    if (!Object.hasOwn(value, key)) continue;
    const text = (value as Record<string, unknown>)[key];
    if (typeof text === "string") return text;
  }
  return undefined;
}

const contentType = (response: RawResponse): string => String(response.headers["content-type"] ?? "no content type");

/** The start of a body that is not OpenSea's JSON, with its content type: enough to recognise a proxy's page. */
const excerpt = (response: RawResponse): string =>
  `${contentType(response)}: ${JSON.stringify(response.body.slice(0, 60))}`;

/** A 2xx whose body cannot be read, after every allowed retry. */
export function badResponse(response: RawResponse, parseError: string, attempts: number): ChainmailError {
  const what = response.body === "" ? "an empty body" : `a body that is not JSON (${excerpt(response)})`;
  return new ChainmailError("UPSTREAM_BAD_RESPONSE", `OpenSea answered HTTP ${response.status} with ${what}.`, {
    hint: "Check OPENSEA_BASE_URL and any proxy in between; the raw answer is on the response port.",
    details: {
      upstream: UPSTREAM,
      status: response.status,
      content_type: contentType(response),
      attempts,
      parse_error: parseError,
    },
  });
}

/** An answer OpenSea sent in a shape this source cannot read (`field` says where). */
export function unreadableAnswer(response: RawResponse, field: string, rule: string, attempts = 1): ChainmailError {
  return new ChainmailError(
    "UPSTREAM_BAD_RESPONSE",
    `OpenSea answered something this source cannot read: ${field} ${rule}.`,
    {
      hint: "Check OPENSEA_BASE_URL and any proxy in between; the raw answer is on the response port.",
      details: { upstream: UPSTREAM, status: response.status, field, attempts },
    },
  );
}

/** A non-2xx answer as the error to report. */
function failure(response: RawResponse, body: unknown, attempts: number, call: OpenSeaCall): ChainmailError {
  const { status } = response;
  const message = upstreamMessage(body);
  const details = {
    upstream: UPSTREAM,
    status,
    ...(message ? { upstream_message: message } : {}),
    attempts,
  };
  const said = message ? ` (HTTP ${status}: ${message})` : ` (HTTP ${status})`;
  if (status === 401 || status === 403) {
    return new ChainmailError("UPSTREAM_AUTH", `OpenSea refused the API key${said}.`, {
      hint: "Check params.api_key (or OPENSEA_API_KEY): OpenSea expects its API key, sent as X-API-KEY.",
      details: { ...details, field: "params.api_key" },
    });
  }
  if (RATE_LIMIT_STATUSES.has(status)) {
    const retryAfter = response.headers["retry-after"];
    return new ChainmailError(
      "UPSTREAM_RATE_LIMITED",
      `OpenSea rate limit hit${said}; gave up after ${attempts} attempt(s).`,
      {
        hint: "Slow down, raise OPENSEA_MAX_RETRIES / CHAINMAIL_RETRY_BUDGET_MS, or ask OpenSea for a higher limit.",
        details: { ...details, ...(retryAfter ? { retry_after: retryAfter } : {}) },
      },
    );
  }
  if (status >= 500) {
    const what = message ? said : ` (HTTP ${status}, ${response.body === "" ? "an empty body" : excerpt(response)})`;
    return new ChainmailError("UPSTREAM_SERVER_ERROR", `OpenSea failed${what} after ${attempts} attempt(s).`, {
      hint: "OpenSea or a proxy in between is having trouble; try again later.",
      details: { ...details, content_type: contentType(response) },
    });
  }
  if (status === 404) {
    return new ChainmailError("UPSTREAM_NOT_FOUND", `OpenSea does not know ${call.notFound}${said}.`, {
      hint: "Check the contract address and token id: OpenSea knows only what it has indexed.",
      details,
    });
  }
  return new ChainmailError("UPSTREAM_REJECTED", `OpenSea rejected the request${said}.`, {
    hint: "Check the query fields against the message above (page_size: OpenSea accepts 1 to 200).",
    details,
  });
}
