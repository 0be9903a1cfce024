/**
 * What names a transaction record across reads, whatever its shape (transfer, sale, bid or listing): its place in
 * time and a key that stays the same when it is read again or re-mined after a reorg. The watch and the workflow
 * packages' activity triggers both keep these, to take each record once.
 */
import { createHash } from "node:crypto";
import { stringifyJson } from "../core/json.js";
import type { TransactionRecord } from "../schemas/transactions.js";

type Loose = Record<string, any>;

/** Where a record sits in time: its block when it has one (on-chain kinds), its date always. */
export interface Position {
  block: number | undefined;
  date: string;
}

export function positionOf(record: TransactionRecord): Position {
  const r = record as Loose;
  return { block: typeof r.block_number === "number" ? r.block_number : undefined, date: String(r.transaction_date) };
}

/** The NFT of any shape: sales, bids and listings nest it in `nft`, transfers carry it flat. */
export function nftOf(r: Loose): { contract: string; tokenId: string; contractType: string } {
  const nft = r.nft ?? {};
  return {
    contract: String(nft.contract_address ?? r.contract_address ?? "").toLowerCase(),
    tokenId: String(nft.token_id ?? r.token_id ?? ""),
    contractType: String(nft.contract_type ?? ""),
  };
}

/** The parties of any shape as (from, to): seller → buyer, transfer_from → transfer_to, the owner, the bidder. */
export function partiesOf(r: Loose): { from: string; to: string } {
  switch (r.type) {
    case "sale":
      return { from: r.seller_address ?? "", to: r.buyer_address ?? "" };
    case "mint":
      return { from: "", to: r.owner_address ?? r.transfer_to ?? "" };
    case "burn":
      return { from: r.owner_address ?? r.transfer_from ?? "", to: "" };
    case "bid":
    case "cancel_bid":
      return { from: r.bidder_address ?? "", to: "" };
    case "list":
    case "cancel_list":
      return { from: r.lister_address ?? "", to: "" };
    default:
      return { from: r.transfer_from ?? "", to: r.transfer_to ?? "" };
  }
}

/**
 * The record's identity: what stays the same when the same event is read again, or re-mined in another block
 * after a reorg (block number, hash, date and the USD rate may change; the transaction and what it did do not).
 * Rows without a transaction (order-book bids and listings) are named by their date as well.
 */
function identity(record: TransactionRecord): string {
  const r = record as Loose;
  const { contract, tokenId } = nftOf(r);
  const { from, to } = partiesOf(r);
  const p = r.price_details ?? {};
  const fields = [
    r.type,
    r.transaction_hash ?? `@${r.transaction_date}`,
    contract,
    tokenId,
    String(from).toLowerCase(),
    String(to).toLowerCase(),
    stringifyJson(r.quantity ?? null),
    stringifyJson(p.price ?? null),
    p.asset_type ?? "",
    String(p.contract_address ?? "").toLowerCase(),
    r.marketplace ?? "",
  ];
  return createHash("sha256").update(fields.join("\u0000")).digest("hex").slice(0, 24);
}

/**
 * Keys of records read together, in their order: the identity, and `.2`, `.3`… for a second and third record with
 * the same identity (one transaction moving the same token twice). Stable because a read always covers whole
 * blocks, so every record of a transaction is counted in the same read.
 */
export function recordKeys(records: readonly TransactionRecord[]): string[] {
  const seen = new Map<string, number>();
  return records.map((record) => {
    const id = identity(record);
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? id : `${id}.${n}`;
  });
}

/**
 * The later of two read positions, block and date each: a read that mixes records with a block (on-chain) and
 * without (bids and listings) keeps the newest of each, so that neither kind's horizon stays behind.
 */
export function later(a: Position | undefined, b: Position | undefined): Position | undefined {
  if (!a) return b;
  if (!b) return a;
  const block = a.block === undefined ? b.block : b.block === undefined ? a.block : Math.max(a.block, b.block);
  // Dates are strings in one format: their order is the text's (Math.max would make numbers of them).
  const date = [a.date, b.date].sort()[1]!;
  return block === a.block && date === a.date ? a : { block, date };
}
