/**
 * A chainmail service's mail lifecycle as a workflow host reads it (the packages keep no store of their own): the
 * delivery events in order after a cursor (`GET /events`, what the delivery-event triggers poll) and the suppression
 * list asked about a batch's recipients (`POST /suppressions/lookup`, before the packages' email-send sends). Both
 * reach the service of `config.service` (CHAINMAIL_SERVICE_URL / _TOKEN) through the host's pool.
 */
import type { Config } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import { type AttemptOutcome, httpRequest } from "../core/http.js";
import { parseJson, stringifyJson } from "../core/json.js";
import type { SuppressionLookup } from "../core/node.js";
import type { RawResponse } from "../schemas/common.js";
import { MAX_LOOKUP_EMAILS } from "./feed.js";
import type { FeedEvent, Suppression } from "./store.js";
import { suppressionKey } from "./suppression-key.js";

const UPSTREAM = "the chainmail service";
/** Events one poll hands out at most; the rest come with the next poll (the cursor says where). */
export const MAX_EVENTS_PER_POLL = 5_000;
const PAGE = 1_000;

/** Where a follower of the feed is: the last event's cursor ("0": before the first event stored). */
export interface MailEventCursor {
  after: string;
}

export interface MailEventPoll {
  events: FeedEvent[];
  cursor: MailEventCursor;
}

const retryUnanswered = (outcome: AttemptOutcome): boolean =>
  outcome.kind !== "response" || outcome.status === 429 || outcome.status === 503;

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** One call to the service; its JSON answer, or the error that says what went wrong (never its token). */
async function callService(config: Config, method: "GET" | "POST", path: string, body?: unknown): Promise<Loose> {
  const { service } = config;
  if (!service.baseUrl) {
    throw new ChainmailError(
      "INVALID_INPUT",
      "The mail lifecycle is read from a chainmail service: its URL is not set.",
      {
        hint: "Set CHAINMAIL_SERVICE_URL (or the credential's Base URL) to where `chainmail serve` listens.",
        details: { setting: "CHAINMAIL_SERVICE_URL" },
      },
    );
  }
  const headers: Record<string, string> = { accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (service.token) headers.authorization = `Bearer ${service.token}`;
  const result = await httpRequest({
    upstream: UPSTREAM,
    method,
    url: `${service.baseUrl}${path}`,
    headers,
    ...(body === undefined ? {} : { body: stringifyJson(body) }),
    timeoutMs: service.timeoutMs,
    retry: service.retry,
    shouldRetry: retryUnanswered,
    secrets: service.token ? [service.token] : [],
    pool: config.pool,
  });
  if (result.error) throw result.error;
  return answerOf(result.response, service.baseUrl, method, path);
}

/** The service's JSON answer, or the error that says why there is none. */
function answerOf(raw: RawResponse, baseUrl: string, method: string, path: string): Loose {
  let answer: unknown;
  try {
    answer = raw.body === "" ? undefined : parseJson(raw.body);
  } catch {
    answer = undefined;
  }
  if (raw.status === 200 && isObject(answer)) return answer;
  const error = isObject(answer) && isObject(answer.error) ? answer.error : undefined;
  const details = error && isObject(error.details) ? error.details : undefined;
  const code = typeof details?.code === "string" ? details.code : undefined;
  if (code === "unauthorized" || code === "forbidden") {
    throw new ChainmailError(
      "UPSTREAM_AUTH",
      `The chainmail service at ${baseUrl} refused the token (HTTP ${raw.status} ${code}).`,
      {
        hint: "Check the service token (CHAINMAIL_SERVICE_TOKEN, or the credential's Token) with its operator.",
        details: { upstream: UPSTREAM, status: raw.status, upstream_code: code, field: "CHAINMAIL_SERVICE_TOKEN" },
      },
    );
  }
  const said = error && typeof error.error === "string" ? ` It said: ${error.error.slice(0, 500)}` : "";
  throw new ChainmailError(
    "UPSTREAM_BAD_RESPONSE",
    `The chainmail service at ${baseUrl} answered ${method} ${path.split("?")[0]} with HTTP ${raw.status}.${said}`,
    {
      hint:
        code === "not_configured"
          ? "That service keeps no mail lifecycle: its operator sets CHAINMAIL_MAIL_DB."
          : "Check that the URL is where a `chainmail serve` of this version listens (its /healthz answers).",
      details: { upstream: UPSTREAM, status: raw.status, ...(code ? { upstream_code: code } : {}) },
    },
  );
}

/**
 * The delivery events stored after `cursor` (none: from the first), oldest first, of `kinds` (none: all), at most
 * MAX_EVENTS_PER_POLL; the cursor to keep once they are handed on. A failed call throws and moves nothing.
 */
export async function pollMailEvents(
  config: Config,
  cursor: MailEventCursor | undefined,
  options: { kinds?: readonly string[] | undefined; limit?: number } = {},
): Promise<MailEventPoll> {
  const wanted = Math.min(options.limit ?? MAX_EVENTS_PER_POLL, MAX_EVENTS_PER_POLL);
  const kinds = options.kinds?.length ? `&kinds=${encodeURIComponent(options.kinds.join(","))}` : "";
  let after = cursor?.after && /^\d{1,16}$/.test(cursor.after) ? cursor.after : "0";
  const events: FeedEvent[] = [];
  while (events.length < wanted) {
    const limit = Math.min(PAGE, wanted - events.length);
    const page = await callService(config, "GET", `/events?after=${after}&limit=${limit}${kinds}`);
    if (!Array.isArray(page.events) || typeof page.cursor !== "string" || !/^\d{1,16}$/.test(page.cursor)) {
      throw new ChainmailError("UPSTREAM_BAD_RESPONSE", `The chainmail service answered /events without a page.`, {
        details: { upstream: UPSTREAM },
      });
    }
    events.push(...(page.events as FeedEvent[]));
    after = page.cursor;
    if (page.more !== true) break;
  }
  return { events, cursor: { after } };
}

/** The service's suppression list as email-send asks it (RunContext.suppressions), MAX_LOOKUP_EMAILS at a time. */
export function serviceSuppressions(config: Config): SuppressionLookup {
  return {
    async suppressed(sender, emails) {
      const found = new Map<string, Suppression>();
      const wanted = [...new Set(emails.map(suppressionKey))];
      for (let i = 0; i < wanted.length; i += MAX_LOOKUP_EMAILS) {
        const answer = await callService(config, "POST", "/suppressions/lookup", {
          sender,
          emails: wanted.slice(i, i + MAX_LOOKUP_EMAILS),
        });
        if (!Array.isArray(answer.suppressed)) {
          throw new ChainmailError("UPSTREAM_BAD_RESPONSE", "The chainmail service answered a lookup without a list.", {
            details: { upstream: UPSTREAM },
          });
        }
        for (const entry of answer.suppressed as Suppression[]) {
          if (isObject(entry) && typeof entry.email === "string") found.set(entry.email, entry);
        }
      }
      return found;
    },
  };
}
