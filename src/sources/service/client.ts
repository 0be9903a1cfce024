/**
 * Another chainmail's HTTP service as the source of the three retrievers (NFT_SOURCE=service): what a workflow
 * host with no index of its own uses to read one that runs elsewhere (`chainmail serve` with NFT_SOURCE=index).
 *
 * - `POST {CHAINMAIL_SERVICE_URL}/nodes/<node id>` with the node's input; `Authorization: Bearer
 *   CHAINMAIL_SERVICE_TOKEN` when a token is set.
 * - The service answers with the node's output object: `data` passes through record for record (integers beyond
 *   2^53 exact), so do its `response` (the upstream it read, when there was one) and its `error`.
 * - The caller's `params.api_key` is never forwarded: the service reads with its operator's own credentials.
 * - Retried: a connection that failed, a timeout, 429 and 503 (the service shutting down). A 502 or 504 is the
 *   service's upstream failing after its own retries, passed on as it is.
 */
import { ChainmailError } from "../../core/errors.js";
import { type AttemptOutcome, httpRequest } from "../../core/http.js";
import { parseJson, stringifyJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";
import type { NftParams } from "../../schemas/transactions.js";
import type { NftSource, RetrieverOutcome } from "../types.js";

const UPSTREAM = "the chainmail service";

const retryUnanswered = (outcome: AttemptOutcome): boolean =>
  outcome.kind !== "response" || outcome.status === 429 || outcome.status === 503;

async function runRemote(node: string, query: object, params: NftParams, ctx: RunContext): Promise<RetrieverOutcome> {
  const { service } = ctx.config;
  if (!service.baseUrl) {
    const error = new ChainmailError("INVALID_INPUT", "NFT_SOURCE=service needs the service's URL.", {
      hint: "Set CHAINMAIL_SERVICE_URL (or the credential's Base URL) to where `chainmail serve` listens.",
      details: { setting: "CHAINMAIL_SERVICE_URL" },
    });
    return { error: error.toPayload() };
  }
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (service.token) headers.authorization = `Bearer ${service.token}`;
  const result = await httpRequest({
    upstream: UPSTREAM,
    method: "POST",
    url: `${service.baseUrl}/nodes/${node}`,
    headers,
    body: stringifyJson({ query, params: { chain: params.chain ?? "ethereum" } }),
    timeoutMs: service.timeoutMs,
    retry: service.retry,
    shouldRetry: retryUnanswered,
    secrets: service.token ? [service.token] : [],
    pool: ctx.config.pool,
    signal: ctx.signal,
    onAttempt: ctx.onUpstreamAttempt && ((event) => ctx.onUpstreamAttempt?.({ ...event, node })),
  });
  if (result.error) return { error: result.error.toPayload() };
  return interpret(result.response, service.baseUrl);
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The service's output object as this node's, or an error that says what the service did instead. */
function interpret(raw: RawResponse, baseUrl: string): RetrieverOutcome {
  let body: unknown;
  try {
    body = raw.body === "" ? undefined : parseJson(raw.body);
  } catch {
    body = undefined;
  }
  const passed = isObject(body) && isObject(body.response) ? (body.response as unknown as RawResponse) : undefined;
  if (raw.status >= 200 && raw.status < 300 && isObject(body) && isObject(body.data)) {
    const data = body.data as Loose;
    if (data.response === "OK" && Array.isArray(data.transactions) && typeof data.continuation === "string") {
      return { data: data as never, response: passed ?? raw };
    }
  }
  const error = isObject(body) && isObject(body.error) ? body.error : undefined;
  const details = error && isObject(error.details) ? error.details : undefined;
  const code = typeof details?.code === "string" ? details.code : undefined;
  if (code === "unauthorized" || code === "forbidden") {
    const refused = new ChainmailError(
      "UPSTREAM_AUTH",
      `The chainmail service at ${baseUrl} refused the token (HTTP ${raw.status} ${code}).`,
      {
        hint: "Check the service token (CHAINMAIL_SERVICE_TOKEN, or the credential's Token) with its operator.",
        details: { upstream: UPSTREAM, status: raw.status, upstream_code: code, field: "CHAINMAIL_SERVICE_TOKEN" },
      },
    );
    return { error: refused.toPayload(), response: raw };
  }
  if (error && typeof error.error === "string" && code) {
    // The service's own error (its upstream failed, the input was invalid): as it said it, with where it came from.
    return {
      error: { error: error.error, details: { ...details, code, via: baseUrl } as never },
      response: passed ?? raw,
    };
  }
  const bad = new ChainmailError(
    "UPSTREAM_BAD_RESPONSE",
    `The chainmail service at ${baseUrl} answered HTTP ${raw.status} without a node's output.`,
    {
      hint: "Check that the URL is where `chainmail serve` listens (its /healthz answers), with no path after it.",
      details: { upstream: UPSTREAM, status: raw.status },
    },
  );
  return { error: bad.toPayload(), response: raw };
}

export const serviceSource: NftSource = {
  name: UPSTREAM,
  needsApiKey: false,
  transactionsByContract: (query, params, ctx) => runRemote("nft-transactions-by-contract", query, params, ctx),
  transactionsOnChain: (query, params, ctx) => runRemote("nft-transactions-on-chain", query, params, ctx),
  transactionsByToken: (query, params, ctx) => runRemote("nft-transactions-by-token", query, params, ctx),
};
