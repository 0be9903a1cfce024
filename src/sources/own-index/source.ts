/**
 * The own index as an NFT source (NFT_SOURCE=index): the three retrievers answered from the database (SQLite
 * file or PostgreSQL) that `chainmail index` fills, in NFTPort's record shapes and order, one keyset page at a time.
 *
 * - Order: by contract and by token newest first, the whole chain oldest first (as NFTPort does).
 * - Continuation: base64url of the last row's chain position plus a hash binding it to the query; a tampered or
 *   foreign continuation is refused with `invalid_continuation`. It is issued only when the page is full.
 * - `bid` and `list` are off-chain order-book events that no JSON-RPC node knows: they yield no records.
 */
import { createHash } from "node:crypto";
import type { Config } from "../../core/config.js";
import { ChainmailError, type ErrorPayload } from "../../core/errors.js";
import { setExactDecimal } from "../../core/exact-decimals.js";
import { stringifyJson, toExactInteger } from "../../core/json.js";
import { storageError } from "../../db/database.js";
import type { RawResponse } from "../../schemas/common.js";
import type { RetrieverResult, TransactionRecord } from "../../schemas/transactions.js";
import type { NftSource, RetrieverOutcome } from "../types.js";
import { type ActivityRow, type IndexStatus, IndexStore, type PageQuery, type Position } from "./store.js";

const NAME = "the local index";
const DEFAULT_PAGE_SIZE = 50;
const MAX_PAGE_SIZE = 1000;
const ON_CHAIN_KINDS = ["transfer", "mint", "burn", "sale"] as const;

const stores = new Map<string, Promise<IndexStore>>();

/**
 * One open store (SQLite connection or PostgreSQL pool) per index, shared by every request of the process. Only
 * opened to read: a database without an index is refused, never given one (that is `chainmail index`'s job).
 */
function storeFor(target: string): Promise<IndexStore> {
  let store = stores.get(target);
  if (!store) {
    store = IndexStore.openForReading(target);
    stores.set(target, store);
    // A failed open is not cached: the next request tries again (the database may be starting).
    store.catch(() => stores.delete(target));
  }
  return store;
}

/** Closes every database the index source opened (tests, shutdown). */
export async function closeIndexSources(): Promise<void> {
  const open = [...stores.values()];
  stores.clear();
  await Promise.all(open.map(async (store) => (await store.catch(() => undefined))?.close()));
}

/** The index's cursor, the chain head its writer last saw, and its record count (for /healthz and /metrics). */
export async function indexStatus(config: Config): Promise<IndexStatus> {
  return (await storeFor(config.indexDb)).status();
}

export async function indexSource(config: Config): Promise<NftSource> {
  const store = await storeFor(config.indexDb);
  return {
    name: NAME,
    needsApiKey: false,
    transactionsByContract: async (query) =>
      answer(store, "by-contract", query.type, query, {
        contract: query.contract_address.toLowerCase(),
        direction: "desc",
      }),
    transactionsByToken: async (query) =>
      answer(store, "by-token", query.type, query, {
        contract: query.contract_address.toLowerCase(),
        tokenId: normaliseTokenId(query.token_id),
        direction: "desc",
      }),
    transactionsOnChain: async (query) =>
      answer(store, "on-chain", query.type, query, {
        ...(query.from_block !== undefined ? { fromBlock: storedBlock(query.from_block) } : {}),
        ...(query.to_block !== undefined ? { toBlock: storedBlock(query.to_block) } : {}),
        direction: "asc",
      }),
  };
}

/**
 * A block bound as the store compares it. Block numbers are uint64 and may be bigints; no chain is anywhere near
 * 2^53 blocks, so every bound beyond it means the same as 2^53 - 1 (and SQLite's integers are signed 64-bit).
 */
const storedBlock = (block: number | bigint): number =>
  block > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : Number(block);

/** `007` and `7` are the same token. */
const normaliseTokenId = (id: string): string => BigInt(id).toString();

interface Paging {
  continuation?: string | undefined;
  page_size?: number | undefined;
}

async function answer(
  store: IndexStore,
  operation: string,
  types: readonly string[] | undefined,
  paging: Paging,
  filter: Omit<PageQuery, "limit" | "kinds">,
): Promise<RetrieverOutcome> {
  const limit = paging.page_size ?? DEFAULT_PAGE_SIZE;
  if (limit > MAX_PAGE_SIZE) return refuse(pageTooLarge(limit), 400);
  const kinds = kindsOf(types);
  const fingerprint = JSON.stringify([
    operation,
    filter.contract,
    filter.tokenId,
    kinds,
    filter.fromBlock,
    filter.toBlock,
  ]);
  const after = paging.continuation ? decodeContinuation(paging.continuation, fingerprint) : undefined;
  if (paging.continuation && !after) return refuse(notOurContinuation(), 400);
  // bid/list (and everything when the filter names only them) come from off-chain order books: no records.
  let rows: ActivityRow[] = [];
  if (kinds === undefined || kinds.length > 0) {
    try {
      rows = await store.page({ ...filter, ...(kinds ? { kinds } : {}), ...(after ? { after } : {}), limit });
    } catch (err) {
      return refuse(storageError(store.target, err, "could not be read"), 500);
    }
  }
  const last = rows[rows.length - 1];
  const continuation =
    last && rows.length === limit
      ? encodeContinuation({ block: last.block_number, log: last.log_index, batch: last.batch_index }, fingerprint)
      : "";
  const transactions = rows.map(toRecord);
  const data: RetrieverResult = { response: "OK", transactions, continuation };
  // Like NFTPort, the raw body carries `continuation` only when there is a next page.
  const body = stringifyJson({ response: "OK", transactions, ...(continuation ? { continuation } : {}) });
  return { data, response: raw(200, body) };
}

function pageTooLarge(limit: number): ChainmailError {
  return new ChainmailError(
    "INVALID_INPUT",
    `query.page_size ${limit} is too large for ${NAME}: at most ${MAX_PAGE_SIZE}.`,
    {
      details: { field: "query.page_size", source: "index" },
    },
  );
}

function notOurContinuation(): ChainmailError {
  return new ChainmailError("INVALID_CONTINUATION", `query.continuation is not one ${NAME} issued for this query.`, {
    hint: "Pass query.continuation exactly as the previous page of the same query returned it, or omit it to start over.",
    details: { field: "query.continuation", source: "index" },
  });
}

/** The kinds to read, or undefined for all; [] when only off-chain kinds were asked for. */
function kindsOf(types: readonly string[] | undefined): string[] | undefined {
  if (!types || types.length === 0 || types.includes("all")) return undefined;
  return ON_CHAIN_KINDS.filter((kind) => types.includes(kind));
}

function raw(status: number, body: string): RawResponse {
  return { status, headers: { "content-type": "application/json", "x-chainmail-source": "index" }, body };
}

function refuse(error: ChainmailError, status: number): RetrieverOutcome {
  const payload: ErrorPayload = error.toPayload();
  return { error: payload, response: raw(status, stringifyJson(payload)) };
}

// ---- continuation: base64url("<block>.<log>.<batch>.<mac>"), mac = sha256(query fingerprint | position) ----

function mac(position: Position, fingerprint: string): string {
  return createHash("sha256")
    .update(`${fingerprint}|${position.block}.${position.log}.${position.batch}`)
    .digest("base64url")
    .slice(0, 16);
}

export function encodeContinuation(position: Position, fingerprint: string): string {
  const text = `${position.block}.${position.log}.${position.batch}.${mac(position, fingerprint)}`;
  return Buffer.from(text, "utf8").toString("base64url");
}

export function decodeContinuation(token: string, fingerprint: string): Position | undefined {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(token)) return undefined;
  const match = /^(\d{1,15})\.(\d{1,10})\.(\d{1,10})\.([A-Za-z0-9_-]{16})$/.exec(
    Buffer.from(token, "base64url").toString("utf8"),
  );
  if (!match) return undefined;
  const position = { block: Number(match[1]), log: Number(match[2]), batch: Number(match[3]) };
  return mac(position, fingerprint) === match[4] ? position : undefined;
}

// ---- records in NFTPort's shapes ----

/** Unix seconds → `YYYY-MM-DDTHH:MM:SS` (UTC, no zone suffix, as NFTPort writes it). */
function transactionDate(seconds: number): string {
  // Years beyond 9999 (no real block) as `Date` writes them.
  if (!(seconds >= 0 && seconds < LAST_FOUR_DIGIT_YEAR)) return new Date(seconds * 1000).toISOString().slice(0, 19);
  // A page's records are close in time: the day is formatted once, the time of day by arithmetic.
  const day = Math.floor(seconds / DAY);
  if (day !== lastDay.day) {
    lastDay.day = day;
    lastDay.prefix = new Date(day * DAY * 1000).toISOString().slice(0, 11);
  }
  const time = seconds - day * DAY;
  const minutes = Math.floor(time / 60);
  return `${lastDay.prefix}${TWO_DIGITS[Math.floor(minutes / 60)]}:${TWO_DIGITS[minutes % 60]}:${TWO_DIGITS[time % 60]}`;
}
const DAY = 86_400;
const LAST_FOUR_DIGIT_YEAR = 253_402_300_800;
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, "0"));
const lastDay = { day: Number.NaN, prefix: "" };

/**
 * One row as NFTPort's record. Each shape is one object literal in NFTPort's key order (no spreads: a page maps
 * 50 rows and this was a fifth of its time); a key NFTPort leaves out is added in its place only when present.
 * Exported for its property test (test/sources/own-index/source.records.props.test.ts).
 */
export function toRecord(row: ActivityRow): TransactionRecord {
  const quantity = toExactInteger(row.quantity)!;
  const date = transactionDate(row.timestamp);
  switch (row.kind) {
    case "sale":
      return {
        type: "sale",
        buyer_address: row.to_addr,
        seller_address: row.from_addr,
        nft: nftOf(row),
        quantity,
        price_details: priceDetails(row),
        transaction_hash: row.tx_hash,
        block_hash: row.block_hash,
        block_number: row.block_number,
        transaction_date: date,
        marketplace: row.marketplace ?? "opensea",
      };
    case "mint":
    case "burn":
      return {
        type: row.kind,
        owner_address: row.kind === "mint" ? row.to_addr : row.from_addr,
        contract_address: row.contract,
        token_id: row.token_id,
        quantity,
        transaction_hash: row.tx_hash,
        block_hash: row.block_hash,
        block_number: row.block_number,
        transaction_date: date,
      };
    default:
      return {
        type: row.kind,
        transfer_from: row.from_addr,
        transfer_to: row.to_addr,
        contract_address: row.contract,
        token_id: row.token_id,
        quantity,
        transaction_hash: row.tx_hash,
        block_hash: row.block_hash,
        block_number: row.block_number,
        transaction_date: date,
      };
  }
}

/** A sale's NFT; CryptoPunks have no contract type, and then no `contract_type` key. */
const nftOf = (row: ActivityRow) =>
  row.contract_type
    ? { contract_type: row.contract_type, contract_address: row.contract, token_id: row.token_id }
    : { contract_address: row.contract, token_id: row.token_id };

/** A sale's price: an ERC-20's address only for ERC-20s; a price the chain does not state has no `price` key (README). */
function priceDetails(row: ActivityRow) {
  // Keys added in NFTPort's order; `price_usd` (set last) is always there.
  const details = { asset_type: row.currency ? "ERC20" : "ETH" } as {
    asset_type: string;
    contract_address?: string;
    price?: number;
    price_usd: number | null;
  };
  if (row.currency) details.contract_address = row.currency;
  // The store keeps exact decimal strings: the number for code, its exact text beside it for JSON (exact-decimals.ts).
  if (row.price !== null) setExactDecimal(details, "price", row.price);
  if (row.price_usd === null) details.price_usd = null;
  else setExactDecimal(details, "price_usd", row.price_usd);
  return details;
}
