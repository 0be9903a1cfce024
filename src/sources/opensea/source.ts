/**
 * OpenSea API v2 as an NFT source (NFT_SOURCE=opensea): the three retrievers answered from OpenSea's events, newest
 * first, in SPEC's record shapes (events.ts), with the blocks and USD prices OpenSea does not give asked from the
 * JSON-RPC node when one is configured (enrich.ts).
 *
 * - By contract: the contract's collection (`GET /api/v2/chain/ethereum/contract/{address}`, remembered for a
 *   while), then that collection's events (`/api/v2/events/collection/{slug}`), keeping the asked contract's.
 * - By token: the NFT's events (`/api/v2/events/chain/ethereum/contract/{address}/nfts/{id}`).
 * - Whole chain: the general events endpoint (`/api/v2/events`), Ethereum's events only. It filters by time, not by
 *   block: a block range is refused.
 * - One call reads OpenSea pages until one holds a wanted record, OpenSea has no next page, or MAX_SCANNED_PAGES
 *   were read (events of other contracts, chains or kinds give none), and returns those records with a continuation
 *   that resumes right after the last event read.
 */
import { ChainmailError, type ErrorPayload, invalidInput } from "../../core/errors.js";
import type { RunContext } from "../../core/node.js";
import type { RawResponse } from "../../schemas/common.js";
import type { NftParams, RetrieverResult, TransactionRecord } from "../../schemas/transactions.js";
import { type NftSource, NO_API_KEY, type RetrieverOutcome } from "../types.js";
import { getOpenSea, type OpenSeaCall, UPSTREAM, unreadableAnswer } from "./client.js";
import { decodeContinuation, encodeContinuation, tagOf } from "./continuation.js";
import { enrich } from "./enrich.js";
import { kindOf, type Mapped, type RecordKind, readEventsPage, toRecord, Unreadable } from "./events.js";
import { walkOf } from "./walk.js";

/** OpenSea's `limit` is 1 to 200 (its OpenAPI document). */
export const MAX_PAGE_SIZE = 200;
/** OpenSea pages one call may read while the events it finds give no wanted record. */
export const MAX_SCANNED_PAGES = 10;

const ON_CHAIN_KINDS: readonly RecordKind[] = ["transfer", "mint", "burn", "sale"];

/** The record kinds a `type` filter asks for: `bid` and `list` with their cancellations, as NFTPort means them. */
export function kindsOf(types: readonly string[] | undefined, orderBook: boolean): Set<RecordKind> {
  if (!types || types.length === 0 || types.includes("all")) {
    return new Set(orderBook ? [...ON_CHAIN_KINDS, "bid", "list", "cancel_bid", "cancel_list"] : ON_CHAIN_KINDS);
  }
  const kinds = new Set<RecordKind>();
  for (const type of types) {
    if (type === "bid" || type === "list") kinds.add(type).add(`cancel_${type}`);
    else if ((ON_CHAIN_KINDS as readonly string[]).includes(type)) kinds.add(type as RecordKind);
  }
  return kinds;
}

/** OpenSea's `event_type` values that carry the kinds (mints are transfers from the zero address too). */
function eventTypesOf(kinds: ReadonlySet<RecordKind>): string[] {
  const types = new Set<string>();
  for (const kind of kinds) {
    if (kind === "sale") types.add("sale");
    else if (kind === "list" || kind === "cancel_list") types.add("listing");
    else if (kind === "bid" || kind === "cancel_bid") types.add("offer");
    else types.add("transfer").add("mint");
  }
  return [...types];
}

interface Scope {
  /** The retriever, in messages and the query fingerprint. */
  operation: "by-contract" | "by-token" | "on-chain";
  node: string;
  path: string;
  notFound: string;
  contract?: string;
  tokenId?: string;
}

interface Paging {
  continuation?: string | undefined;
  page_size?: number | undefined;
}

function refuse(error: ChainmailError | ErrorPayload, response?: RawResponse): RetrieverOutcome {
  const payload = error instanceof ChainmailError ? error.toPayload() : error;
  return response ? { error: payload, response } : { error: payload };
}

/** The checks every call makes before asking OpenSea anything. */
function preflight(paging: Paging, params: NftParams): ErrorPayload | undefined {
  const violations = [];
  if (paging.page_size !== undefined && paging.page_size > MAX_PAGE_SIZE) {
    violations.push({
      field: "query.page_size",
      value: paging.page_size,
      rule: `at most ${MAX_PAGE_SIZE} with OpenSea`,
      message: `query.page_size = ${paging.page_size} is invalid: OpenSea pages hold at most ${MAX_PAGE_SIZE} events`,
    });
  }
  if (params.api_key === NO_API_KEY) {
    violations.push({
      field: "params.api_key",
      rule: "required for OpenSea",
      message:
        "params.api_key is required: bids and listings come from OpenSea, which needs its API key (or set OPENSEA_API_KEY)",
    });
  }
  return violations.length ? invalidInput(violations) : undefined;
}

/** One call: pages of the scope's events until one holds a wanted record. */
async function scan(
  scope: Scope,
  kinds: ReadonlySet<RecordKind>,
  paging: Paging,
  params: NftParams,
  ctx: RunContext,
): Promise<RetrieverOutcome> {
  const fingerprint = JSON.stringify([scope.operation, scope.contract, scope.tokenId, [...kinds].sort()]);
  let cursor: string | undefined;
  let previous = tagOf("");
  if (paging.continuation) {
    const decoded = decodeContinuation(paging.continuation, fingerprint);
    if (!decoded) return refuse(notOurContinuation());
    cursor = decoded.next;
    previous = decoded.previous;
  }
  const walk = walkOf(ctx, fingerprint);
  const { path, node, notFound } = scope;
  const query = { event_type: eventTypesOf(kinds), limit: paging.page_size, next: cursor };
  const call: OpenSeaCall = { path, apiKey: params.api_key, node, notFound, query };
  for (let scanned = 1; ; scanned++) {
    const answer = await getOpenSea({ ...call, query: { ...call.query, next: cursor } }, ctx);
    if (answer.error) return refuse(answer.error, answer.response);
    const { response } = answer;
    const page = readEventsPage(answer.body);
    if (page instanceof Unreadable) return refuse(unreadableAnswer(response, page.field, page.rule), response);
    if (paging.page_size !== undefined && page.events.length > paging.page_size) {
      return refuse(
        unreadableAnswer(response, "asset_events", `holds more than the ${paging.page_size} events asked for`),
        response,
      );
    }
    const read = recordsOf(page.events, kinds, scope);
    if (read instanceof Unreadable) return refuse(unreadableAnswer(response, read.field, read.rule), response);
    const { next } = page;
    // A next seen before in this walk (a cycle of any length) is refused; records handed out before are left out.
    const mapped = walk.page(cursor, previous, next, read, response);
    if (mapped instanceof ChainmailError) return refuse(mapped, response);
    const here = tagOf(cursor ?? "");
    if (mapped.length > 0 || next === undefined || scanned >= MAX_SCANNED_PAGES) {
      const continuation = next === undefined ? "" : encodeContinuation({ next, previous: here }, fingerprint);
      return answerWith(mapped, continuation, response, ctx);
    }
    previous = here;
    cursor = next;
  }
}

/** The page's answer, its records enriched where the node can (only a cancelled call fails here: enrich.ts). */
async function answerWith(
  mapped: Mapped[],
  continuation: string,
  response: RawResponse,
  ctx: RunContext,
): Promise<RetrieverOutcome> {
  try {
    await enrich(mapped, ctx.config, ctx.signal, ctx.logger);
  } catch (err) {
    if (err instanceof ChainmailError) return refuse(err, response);
    throw err;
  }
  const transactions: TransactionRecord[] = mapped.map((m) => m.record);
  const data: RetrieverResult = { response: "OK", transactions, continuation };
  return { data, response };
}

/** The wanted records of a page's events, or the first field that could not be read. */
function recordsOf(events: readonly unknown[], kinds: ReadonlySet<RecordKind>, scope: Scope): Mapped[] | Unreadable {
  const read: Mapped[] = [];
  for (let i = 0; i < events.length; i++) {
    const event = events[i] as Record<string, unknown>;
    const kind = kindOf(event);
    if (!kind || !kinds.has(kind)) continue;
    const one = toRecord(event, kind, `asset_events[${i}]`);
    if (one instanceof Unreadable) return one;
    if (one && inScope(one.record, scope)) read.push(one);
  }
  return read;
}

function notOurContinuation(): ChainmailError {
  return new ChainmailError(
    "INVALID_CONTINUATION",
    "query.continuation is not one the OpenSea source issued for this query.",
    {
      hint: "Pass query.continuation exactly as the previous page of the same query returned it, or omit it to start over.",
      details: { field: "query.continuation", source: "opensea" },
    },
  );
}

/** Whether a record is of the asked contract and token (a collection may span several contracts). */
function inScope(record: TransactionRecord, scope: Scope): boolean {
  const r = record as {
    nft?: { contract_address: string; token_id: string };
    contract_address?: string;
    token_id?: string;
  };
  const contract = r.nft?.contract_address ?? r.contract_address;
  const tokenId = r.nft?.token_id ?? r.token_id;
  return (
    (scope.contract === undefined || contract === scope.contract) &&
    (scope.tokenId === undefined || tokenId === scope.tokenId)
  );
}

// ---- contract → collection ----

/** How long a contract's collection is remembered, and for how many contracts. */
const COLLECTION_TTL_MS = 10 * 60_000;
const COLLECTIONS_KEPT = 1000;
const collections = new Map<string, { slug: string; until: number }>();

type CollectionOutcome = { slug: string; error?: undefined } | { error: RetrieverOutcome; slug?: undefined };

async function collectionOf(contract: string, params: NftParams, ctx: RunContext): Promise<CollectionOutcome> {
  const key = `${ctx.config.opensea.baseUrl}|${contract}`;
  const known = collections.get(key);
  if (known && known.until > Date.now()) return { slug: known.slug };
  const answer = await getOpenSea(
    {
      path: `/api/v2/chain/ethereum/contract/${contract}`,
      apiKey: params.api_key,
      node: "nft-transactions-by-contract",
      notFound: `contract ${contract} on ethereum`,
    },
    ctx,
  );
  if (answer.error) return { error: refuse(answer.error, answer.response) };
  const { body, response } = answer;
  const slug =
    body && typeof body === "object" && Object.hasOwn(body, "collection")
      ? (body as { collection: unknown }).collection
      : undefined;
  if (slug === null) {
    const error = new ChainmailError(
      "UPSTREAM_NOT_FOUND",
      `OpenSea knows contract ${contract} but has no collection for it, so it has no events to give for it.`,
      {
        hint: "OpenSea lists events by collection; for this contract use NFT_SOURCE=index (on-chain kinds) or NFTPort.",
        details: { upstream: UPSTREAM, status: response.status, field: "collection", contract },
      },
    );
    return { error: refuse(error, response) };
  }
  if (typeof slug !== "string" || !/^[\x21-\x7e]{1,256}$/.test(slug)) {
    return { error: refuse(unreadableAnswer(response, "collection", "is not a collection slug"), response) };
  }
  if (collections.size >= COLLECTIONS_KEPT) collections.delete(collections.keys().next().value!);
  collections.set(key, { slug, until: Date.now() + COLLECTION_TTL_MS });
  return { slug };
}

/** Forgets every contract's collection (tests). */
export function forgetCollections(): void {
  collections.clear();
}

// ---- the source ----

function onChainRange(query: { from_block?: unknown; to_block?: unknown }): ErrorPayload | undefined {
  const fields = (["from_block", "to_block"] as const).filter((f) => query[f] !== undefined);
  if (fields.length === 0) return undefined;
  return invalidInput(
    fields.map((f) => ({
      field: `query.${f}`,
      value: query[f],
      rule: "not with NFT_SOURCE=opensea",
      message: `query.${f} cannot be answered by OpenSea, which filters events by time, not by block: omit it, or use NFT_SOURCE=index for a block range`,
    })),
  );
}

const enc = encodeURIComponent;

export const openseaSource: NftSource = {
  name: UPSTREAM,
  needsApiKey: true,
  async transactionsByContract(query, params, ctx) {
    const refused = preflight(query, params);
    if (refused) return refuse(refused);
    const contract = query.contract_address.toLowerCase();
    const collection = await collectionOf(contract, params, ctx);
    if (collection.error) return collection.error;
    return scan(
      {
        operation: "by-contract",
        node: "nft-transactions-by-contract",
        path: `/api/v2/events/collection/${enc(collection.slug)}`,
        notFound: `collection ${collection.slug} (of contract ${contract})`,
        contract,
      },
      kindsOf(query.type, true),
      query,
      params,
      ctx,
    );
  },
  transactionsByToken(query, params, ctx) {
    const refused = preflight(query, params);
    if (refused) return Promise.resolve(refuse(refused));
    const contract = query.contract_address.toLowerCase();
    const tokenId = BigInt(query.token_id).toString();
    return scan(
      {
        operation: "by-token",
        node: "nft-transactions-by-token",
        path: `/api/v2/events/chain/ethereum/contract/${contract}/nfts/${tokenId}`,
        notFound: `token ${tokenId} of contract ${contract} on ethereum`,
        contract,
        tokenId,
      },
      kindsOf(query.type, false),
      query,
      params,
      ctx,
    );
  },
  transactionsOnChain(query, params, ctx) {
    const refused = onChainRange(query) ?? preflight(query, params);
    if (refused) return Promise.resolve(refuse(refused));
    return scan(
      {
        operation: "on-chain",
        node: "nft-transactions-on-chain",
        path: "/api/v2/events",
        notFound: "the events endpoint",
      },
      kindsOf(query.type, false),
      query,
      params,
      ctx,
    );
  },
};
