/**
 * Where the three retrievers read NFT records from. A source answers like openapi-fetch: `{ data, response }` or
 * `{ error, response? }`, never throwing for an upstream failure.
 */
import type { ErrorPayload } from "../core/errors.js";
import type { RunContext } from "../core/node.js";
import type { RawResponse } from "../schemas/common.js";
import type {
  ByContractQuery,
  ByTokenQuery,
  NftParams,
  OnChainQuery,
  RetrieverResult,
} from "../schemas/transactions.js";

export type RetrieverOutcome =
  | { data: RetrieverResult; response: RawResponse; error?: undefined }
  | { error: ErrorPayload; response?: RawResponse; data?: undefined };

export interface NftSource {
  /** Shown in messages, e.g. `NFTPort` or `the local index`. */
  readonly name: string;
  /** Whether `params.api_key` means anything to this source. */
  readonly needsApiKey: boolean;
  transactionsByContract(query: ByContractQuery, params: NftParams, ctx: RunContext): Promise<RetrieverOutcome>;
  transactionsOnChain(query: OnChainQuery, params: NftParams, ctx: RunContext): Promise<RetrieverOutcome>;
  transactionsByToken(query: ByTokenQuery, params: NftParams, ctx: RunContext): Promise<RetrieverOutcome>;
}

/**
 * `params.api_key` when the caller gave none and the source may not need one (the own index; the index with
 * OpenSea, whose OpenSea part refuses it with a clear error when it is asked for bids or listings).
 */
export const NO_API_KEY = "no-api-key-given";
