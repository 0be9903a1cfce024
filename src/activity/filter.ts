/**
 * Which records a rule or a trigger wants beyond what its read asks the retriever: its contracts, its wallets on a
 * side of the record, its marketplaces, a minimum quantity. One predicate for the watch and the workflow packages'
 * triggers; the price bounds, which need the tokens worth one ETH, stay with the watch (watch/records.ts).
 */
import type { TransactionRecord } from "../schemas/transactions.js";
import { nftOf } from "./records.js";

/** Which party of a record a wallet must be. */
export const WALLET_SIDES = ["any", "buyer", "seller", "from", "to", "lister", "bidder"] as const;
export type WalletSide = (typeof WALLET_SIDES)[number];

export interface RecordFilter {
  /** The record's NFT contract is one of these. */
  contracts?: readonly string[] | undefined;
  /** One of these addresses is the record's party on `side` (default any). */
  wallets?: readonly string[] | undefined;
  side?: WalletSide | undefined;
  /** The record's marketplace is one of these (records without one never pass). */
  marketplaces?: readonly string[] | undefined;
  /** The record moves at least this many tokens (a record without a quantity moves one). */
  min_quantity?: number | undefined;
}

type Loose = Record<string, any>;

const lower = (value: unknown): string => (typeof value === "string" ? value.toLowerCase() : "");

/** Movements (transfers, mints, burns and sales) have a from and a to; a sale a seller and a buyer. */
const MOVES = new Set(["transfer", "mint", "burn", "sale"]);

/** The record's addresses on one side ("" where it has none). */
export function partyOn(record: TransactionRecord, side: Exclude<WalletSide, "any">): string {
  const r = record as Loose;
  switch (side) {
    case "buyer":
      return r.type === "sale" ? lower(r.buyer_address) : "";
    case "seller":
      return r.type === "sale" ? lower(r.seller_address) : "";
    case "from":
      if (!MOVES.has(r.type)) return "";
      if (r.type === "sale") return lower(r.seller_address);
      if (r.type === "mint") return "";
      return lower(r.transfer_from ?? (r.type === "burn" ? r.owner_address : undefined));
    case "to":
      if (!MOVES.has(r.type)) return "";
      if (r.type === "sale") return lower(r.buyer_address);
      if (r.type === "burn") return "";
      return lower(r.transfer_to ?? (r.type === "mint" ? r.owner_address : undefined));
    case "lister":
      return r.type === "list" || r.type === "cancel_list" ? lower(r.lister_address) : "";
    case "bidder":
      return r.type === "bid" || r.type === "cancel_bid" ? lower(r.bidder_address) : "";
  }
}

const SIDES = WALLET_SIDES.filter((s): s is Exclude<WalletSide, "any"> => s !== "any");

/** The quantity as an exact integer; a record without one (or with one that is not an integer) moves one token. */
function quantityOf(record: TransactionRecord): bigint {
  const q = (record as Loose).quantity;
  if (typeof q === "bigint") return q;
  if (typeof q === "number" && Number.isSafeInteger(q)) return BigInt(q);
  if (typeof q === "string" && /^[0-9]{1,78}$/.test(q)) return BigInt(q);
  return 1n;
}

/** Whether the record passes the filter: every filter given must hold. */
export function filterPasses(filter: RecordFilter, record: TransactionRecord): boolean {
  if (filter.contracts && !filter.contracts.some((c) => lower(c) === nftOf(record as Loose).contract)) return false;
  if (filter.wallets) {
    const sides = !filter.side || filter.side === "any" ? SIDES : [filter.side];
    const parties = new Set(sides.map((side) => partyOn(record, side)).filter(Boolean));
    if (!filter.wallets.some((w) => parties.has(lower(w)))) return false;
  }
  if (filter.marketplaces) {
    const marketplace = lower((record as Loose).marketplace);
    if (!marketplace || !filter.marketplaces.some((m) => lower(m) === marketplace)) return false;
  }
  if (filter.min_quantity !== undefined && quantityOf(record) < BigInt(filter.min_quantity)) return false;
  return true;
}
