/** What the three NFT retrievers share: params, output ports, credential defaults and the source call. */
import type { Type } from "@sinclair/typebox";
import type { RunContext } from "../core/node.js";
import { ErrorPayloadSchema, RawResponse } from "../schemas/common.js";
import { NftParams, RetrieverResult } from "../schemas/transactions.js";
import { operatorApiKey, resolveNftSource } from "../sources/index.js";
import type { NftSource, RetrieverOutcome } from "../sources/types.js";

export const retrieverOutputs = {
  data: RetrieverResult,
  response: RawResponse,
  error: ErrorPayloadSchema,
};

export const retrieverInputs = <Q extends ReturnType<typeof Type.Object>>(query: Q) => ({ query, params: NftParams });

/**
 * Fills `params.api_key` from the operator's key of the configured source (its definition's `operatorApiKey`:
 * NFTPORT_API_KEY, OPENSEA_API_KEY) when the caller gave none. With NFT_SOURCE=index or service the key means
 * nothing and may be omitted.
 */
export function withApiKeyDefault(input: Record<string, unknown>, ctx: RunContext): Record<string, unknown> {
  const params = (input.params ?? {}) as Record<string, unknown>;
  if (typeof params !== "object" || params === null || params.api_key !== undefined) return input;
  const fallback = operatorApiKey(ctx.config);
  return fallback ? { ...input, params: { ...params, api_key: fallback } } : input;
}

/** Calls the configured source and keeps only the ports that fired. */
export async function fromSource(
  ctx: RunContext,
  call: (source: NftSource) => Promise<RetrieverOutcome>,
): Promise<RetrieverOutcome> {
  const source = await resolveNftSource(ctx.config);
  const outcome = await call(source);
  return Object.fromEntries(Object.entries(outcome).filter(([, v]) => v !== undefined)) as RetrieverOutcome;
}
