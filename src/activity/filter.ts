/**
 * Which records a rule or a trigger wants beyond what its read asks the retriever: its contracts, its wallets on a
 * side of the record, its marketplaces, a minimum quantity. One predicate for the watch and the workflow packages'
 * triggers; the price bounds, which need the tokens worth one ETH, stay with the watch (watch/records.ts).
 */
import { Type } from "@sinclair/typebox";
import { ChainmailError, invalidInput, type Violation } from "../core/errors.js";
import { checkPort, readJsonData } from "../core/validate.js";
import { Address } from "../schemas/common.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { nftOf, partiesOf } from "./records.js";

/** Which party of a record a wallet must be. */
export const WALLET_SIDES = ["any", "buyer", "seller", "from", "to", "lister", "bidder"] as const;
export type WalletSide = (typeof WALLET_SIDES)[number];

/** Most addresses in `contracts` or `wallets`. */
const MAX_LIST = 1000;

/** The filters' fields, one schema for the watch's rules and the triggers' filters. */
export const RECORD_FILTER_FIELDS = {
  contracts: Type.Optional(
    Type.Array(Address("An NFT contract"), {
      minItems: 1,
      maxItems: MAX_LIST,
      uniqueItems: true,
      description: "Only records of these NFT contracts (in a watch rule: instead of contract_address)",
    }),
  ),
  wallets: Type.Optional(
    Type.Array(Address("A wallet"), {
      minItems: 1,
      maxItems: MAX_LIST,
      uniqueItems: true,
      description: "Only records where one of these addresses is the party on `side`",
    }),
  ),
  side: Type.Optional(
    Type.Union(
      WALLET_SIDES.map((s) => Type.Literal(s)),
      {
        description:
          "With wallets: any (default), buyer, seller (sales), from, to (transfers, mints, burns, sales), lister (listings), bidder (bids)",
      },
    ),
  ),
  marketplaces: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: "Only records of these marketplaces (as the source names them: opensea, blur, seaport…)",
    }),
  ),
  min_quantity: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "Only records moving at least this many tokens (a record without a quantity moves one)",
    }),
  ),
};

const RecordFilterSchema = Type.Object(RECORD_FILTER_FIELDS, { additionalProperties: false });

/**
 * A trigger's filter from its host's fields (untrusted): `invalid_input` naming every problem at once, each field
 * under `field` (`filter.wallets[2]`); `side` only with wallets.
 */
export function parseRecordFilter(value: unknown, field = "filter"): RecordFilter {
  const data = readJsonData(value, field);
  const violations: Violation[] = data.violations ? [...data.violations] : [];
  if (!data.violations) {
    violations.push(...checkPort(field, RecordFilterSchema, data.value).violations);
    const given = data.value as RecordFilter;
    if (!violations.length && given.side !== undefined && given.wallets === undefined) {
      violations.push({
        field: `${field}.side`,
        rule: "only with wallets",
        message: `${field}.side is only used with wallets`,
      });
    }
  }
  if (violations.length) {
    throw new ChainmailError("INVALID_INPUT", invalidInput(violations).error, { details: { violations } });
  }
  return (data as { value: unknown }).value as RecordFilter;
}

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
    // Who a move went from and to, as the record's identity and the mails read it (records.ts).
    case "from":
      return MOVES.has(r.type) ? lower(partiesOf(r).from) : "";
    case "to":
      return MOVES.has(r.type) ? lower(partiesOf(r).to) : "";
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
