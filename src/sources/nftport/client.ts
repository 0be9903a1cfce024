/**
 * NFTPort API v0 transport for the three transaction endpoints.
 *
 * - `Authorization: <api_key>`, the raw key, no scheme.
 * - Several `type` values go as repeated keys: `?type=sale&type=transfer`.
 * - Success bodies pass through record for record; integers beyond 2^53 stay exact.
 * - A 404 `not_found` means "no transactions match" (NFTPort's answer for an empty history): reported as an
 *   empty page on `data`, with the raw 404 kept in `response`.
 */
import { ChainmailError } from "../../core/errors.js";
import { httpRequest, retryReads } from "../../core/http.js";
import { parseJson, toDecimal } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import { vouchRawJson } from "../../core/raw-json.js";
import type { RawResponse } from "../../schemas/common.js";
import type { NftParams, RetrieverResult } from "../../schemas/transactions.js";
import type { NftSource, RetrieverOutcome } from "../types.js";

const UPSTREAM = "NFTPort";

type QueryValue = string | number | bigint | readonly string[] | undefined;

/** GETs one page from an NFTPort path and interprets the answer. */
async function getTransactionsPage(
  path: string,
  query: Record<string, QueryValue>,
  params: NftParams,
  ctx: RunContext,
  node: string,
): Promise<RetrieverOutcome> {
  const { nftport } = ctx.config;
  const apiKey = params.api_key;
  let url = `${nftport.baseUrl}${path}?chain=${enc(params.chain ?? "ethereum")}`;
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (typeof value === "string") url += `&${name}=${enc(value)}`;
    // Exact digits: String() would write 1e+21, and a bigint block number beyond 2^53 must keep every digit.
    else if (typeof value === "number" || typeof value === "bigint") url += `&${name}=${toDecimal(value)}`;
    else for (const item of value) url += `&${name}=${enc(item)}`;
  }
  const result = await httpRequest({
    upstream: UPSTREAM,
    method: "GET",
    url,
    headers: { authorization: apiKey, accept: "application/json" },
    timeoutMs: nftport.timeoutMs,
    retry: nftport.retry,
    shouldRetry: retryReads,
    secrets: [apiKey],
    pool: nftport.pool ?? ctx.config.pool,
    signal: ctx.signal,
    onAttempt: ctx.onUpstreamAttempt && ((event) => ctx.onUpstreamAttempt?.({ ...event, node })),
  });
  if (result.error) return { error: result.error.toPayload() };
  return interpret(result.response, result.attempts);
}

/** Whether a parsed page has its three keys of its own and no other. */
const isWholePage = (page: object): boolean =>
  Object.keys(page).length === 3 &&
  Object.hasOwn(page, "response") &&
  Object.hasOwn(page, "transactions") &&
  typeof (page as { continuation?: unknown }).continuation === "string" &&
  Object.hasOwn(page, "continuation");

interface NokEnvelope {
  response?: string;
  error?: { status_code?: number; code?: string; message?: string };
}

/** Turns an NFTPort answer into `data` or `error`. */
function interpret(response: RawResponse, attempts: number): RetrieverOutcome {
  let body: unknown;
  let parseError: string | undefined;
  try {
    body = response.body === "" ? undefined : parseJson(response.body);
  } catch (err) {
    parseError = (err as Error).message;
  }
  const status = response.status;

  if (status >= 200 && status < 300) {
    const ok = body as { response?: unknown; transactions?: unknown; continuation?: unknown } | undefined;
    if (ok && typeof ok === "object" && ok.response === "OK" && Array.isArray(ok.transactions)) {
      const data: RetrieverResult = {
        response: "OK",
        transactions: ok.transactions as RetrieverResult["transactions"],
        continuation: typeof ok.continuation === "string" ? ok.continuation : "",
      };
      // A body that is the page and nothing more (no key added, none defaulted) is `data`'s exact JSON text.
      if (isWholePage(ok)) vouchRawJson(data, response.body);
      return { data, response };
    }
    return fail(response, badResponse(response, parseError, attempts));
  }

  const envelope = (body && typeof body === "object" ? body : {}) as NokEnvelope;
  if (status === 404 && envelope.error?.code === "not_found") {
    // NFTPort's way of saying "no transactions match": an empty history, not a failure.
    return { data: { response: "OK", transactions: [], continuation: "" }, response };
  }
  return fail(response, failureOf(response, envelope, attempts, parseError));
}

/** The error of a non-2xx answer: NFTPort's own error envelope, or a page that is not one. */
function failureOf(
  response: RawResponse,
  envelope: NokEnvelope,
  attempts: number,
  parseError?: string,
): ChainmailError {
  const status = response.status;
  const { upstreamCode, details, said } = whatNftPortSaid(envelope, status, attempts);
  // Not NFTPort's JSON error envelope: a proxy page, an empty body, a wrong base URL.
  if (!upstreamCode && status !== 429) return withoutEnvelope(response, details, attempts, parseError);
  if (status === 401 || status === 403) {
    return new ChainmailError("UPSTREAM_AUTH", `NFTPort refused the API key${said}.`, {
      hint: authHint(upstreamCode),
      details: { ...details, field: "params.api_key" },
    });
  }
  if (status === 429) {
    const retryAfter = response.headers["retry-after"];
    return new ChainmailError(
      "UPSTREAM_RATE_LIMITED",
      `NFTPort rate limit hit${said}; gave up after ${attempts} attempt(s).`,
      {
        hint: "Slow down, raise NFTPORT_MAX_RETRIES / CHAINMAIL_RETRY_BUDGET_MS, or upgrade the NFTPort plan.",
        details: { ...details, ...(retryAfter ? { retry_after: retryAfter } : {}) },
      },
    );
  }
  if (status >= 500) {
    return new ChainmailError("UPSTREAM_SERVER_ERROR", `NFTPort failed${said} after ${attempts} attempt(s).`, {
      hint: "The service is having trouble; try again later.",
      details,
    });
  }
  if (upstreamCode === "invalid_continuation_string") {
    return new ChainmailError("INVALID_CONTINUATION", `NFTPort does not accept this continuation${said}.`, {
      hint: "Pass query.continuation exactly as a previous page of the same query returned it.",
      details: { ...details, field: "query.continuation" },
    });
  }
  if (status === 404) {
    return new ChainmailError("UPSTREAM_NOT_FOUND", `NFTPort has no such resource${said}.`, {
      hint: "Check the contract address and token id.",
      details,
    });
  }
  return new ChainmailError("UPSTREAM_REJECTED", `NFTPort rejected the request${said}.`, {
    hint: fieldHint(upstreamCode),
    details,
  });
}

/** The fields every failure carries, and how a message quotes NFTPort's own code and message. */
function whatNftPortSaid(envelope: NokEnvelope, status: number, attempts: number) {
  const upstreamCode = envelope.error?.code;
  const upstreamMessage = envelope.error?.message;
  const details = {
    upstream: UPSTREAM,
    status,
    ...(upstreamCode ? { upstream_code: upstreamCode } : {}),
    ...(upstreamMessage ? { upstream_message: upstreamMessage } : {}),
    attempts,
  };
  const said = upstreamCode ? ` (${status} ${upstreamCode}: ${upstreamMessage ?? "no message"})` : ` (HTTP ${status})`;
  return { upstreamCode, details, said };
}

/** A failure whose body is not NFTPort's JSON error envelope: a proxy page, an empty body, a wrong base URL. */
function withoutEnvelope(
  response: RawResponse,
  details: Record<string, unknown>,
  attempts: number,
  parseError: string | undefined,
): ChainmailError {
  if (response.status < 500) return badResponse(response, parseError, attempts);
  const body = response.body === "" ? "an empty body" : excerpt(response);
  return new ChainmailError(
    "UPSTREAM_SERVER_ERROR",
    `NFTPort failed (HTTP ${response.status}, ${body}) after ${attempts} attempt(s).`,
    {
      hint: "NFTPort or a proxy in between is having trouble; try again later.",
      details: { ...details, content_type: contentType(response) },
    },
  );
}

function authHint(code: string | undefined): string {
  if (code === "authorization_missing" || code === "invalid_api_key")
    return "Check params.api_key: NFTPort expects the key itself (a UUID), without any prefix.";
  if (code === "account_suspended") return "The NFTPort account is suspended; contact NFTPort.";
  return "Check params.api_key: NFTPort does not know this key.";
}

function fieldHint(code: string | undefined): string {
  switch (code) {
    case "invalid_address":
      return "Check query.contract_address: it must be a valid EVM address.";
    case "chain_not_supported":
      return "Check params.chain.";
    case "invalid_enumeration":
      // `bid` never reaches NFTPort (by-contract filters it client-side), so this is NFTPort refusing another value.
      return "Check query.type: NFTPort's documented filter accepts transfer, mint, burn, sale, list and all.";
    case "value_error":
    case "invalid_type":
      return "Check query.page_size (NFTPort accepts 1 to 50) and the other query fields.";
    default:
      return "Check the query fields against the message above.";
  }
}

const contentType = (response: RawResponse): string => String(response.headers["content-type"] ?? "no content type");

/** The start of a body that is not NFTPort's JSON, with its content type: enough to recognise a proxy's page. */
const excerpt = (response: RawResponse): string =>
  `${contentType(response)}: ${JSON.stringify(response.body.slice(0, 60))}`;

function badResponse(response: RawResponse, parseError: string | undefined, attempts: number): ChainmailError {
  const what =
    response.body === ""
      ? "an empty body"
      : parseError
        ? `a body that is not JSON (${excerpt(response)})`
        : "JSON that is not a transactions page";
  return new ChainmailError("UPSTREAM_BAD_RESPONSE", `NFTPort answered HTTP ${response.status} with ${what}.`, {
    hint: "Check NFTPORT_BASE_URL and any proxy in between; the raw answer is on the response port.",
    details: {
      upstream: UPSTREAM,
      status: response.status,
      content_type: contentType(response),
      attempts,
      ...(parseError ? { parse_error: parseError } : {}),
    },
  });
}

function fail(response: RawResponse, error: ChainmailError): RetrieverOutcome {
  return { error: error.toPayload(), response };
}

const enc = encodeURIComponent;

/** The values NFTPort's `type` filter accepts (NFTPort API v0 docs); the by-contract node also offers `bid`. */
const FILTER_TYPES: ReadonlySet<string> = new Set(["transfer", "mint", "burn", "sale", "list", "all"]);

/** Upstream pages one by-contract call may read while looking for a kind NFTPort cannot filter. */
export const MAX_SCANNED_PAGES = 10;

/**
 * Serves a `type` filter NFTPort cannot express (`bid`): asks for `all` and keeps the requested kinds, each with
 * NFTPort's own meaning (`t` also covers `cancel_t`, as `list` does upstream; so `bid` gives `bid` and
 * `cancel_bid`). Reads upstream pages until one has a match, there is no next page or MAX_SCANNED_PAGES were read,
 * and returns the matches with the continuation of the last page read: the records it skipped matched nothing,
 * so resuming there neither skips nor repeats one. Filtering only removes rows, so `page_size` still bounds it.
 */
async function scanFiltered(
  types: readonly string[],
  continuation: string | undefined,
  get: (type: readonly string[], continuation: string | undefined) => Promise<RetrieverOutcome>,
): Promise<RetrieverOutcome> {
  const kinds = new Set(types.flatMap((t) => [t, `cancel_${t}`]));
  const seen = new Set<string>();
  for (let scanned = 1; ; scanned++) {
    const outcome = await get(["all"], continuation);
    if (!outcome.data) return outcome;
    const { data, response } = outcome;
    const transactions = data.transactions.filter((r) => kinds.has(r.type));
    const next = data.continuation;
    const repeated = next === continuation || seen.has(next);
    seen.add(next);
    if (transactions.length > 0 || next === "" || repeated || scanned >= MAX_SCANNED_PAGES) {
      return { data: { ...data, transactions }, response };
    }
    continuation = next;
  }
}

/** The NFTPort source for the three retrievers. */
export const nftportSource: NftSource = {
  name: UPSTREAM,
  needsApiKey: true,
  transactionsByContract: (query, params, ctx) => {
    const path = `/v0/transactions/nfts/${enc(query.contract_address)}`;
    const get = (type: readonly string[] | undefined, continuation: string | undefined) =>
      getTransactionsPage(
        path,
        { type, page_size: query.page_size, continuation },
        params,
        ctx,
        "nft-transactions-by-contract",
      );
    const types = query.type ?? [];
    // `all` is no filter at all, and NFTPort refuses it next to a value it does not know.
    if (types.includes("all")) return get(["all"], query.continuation);
    if (types.every((t) => FILTER_TYPES.has(t))) return get(query.type, query.continuation);
    return scanFiltered(types, query.continuation, get);
  },
  transactionsOnChain: (query, params, ctx) =>
    getTransactionsPage(
      "/v0/transactions",
      {
        type: query.type,
        page_size: query.page_size,
        continuation: query.continuation,
        from_block: query.from_block,
        to_block: query.to_block,
      },
      params,
      ctx,
      "nft-transactions-on-chain",
    ),
  transactionsByToken: (query, params, ctx) =>
    getTransactionsPage(
      `/v0/transactions/nfts/${enc(query.contract_address)}/${enc(query.token_id)}`,
      { type: query.type, page_size: query.page_size, continuation: query.continuation },
      params,
      ctx,
      "nft-transactions-by-token",
    ),
};
