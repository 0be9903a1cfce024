/**
 * What the watch needs to know about one transaction record, whatever its shape (transfer, sale, bid or listing):
 * its place in time, a key that names it across re-reads and reorgs, whether a rule wants it, and the values its
 * templates may use.
 */
import { filterPasses } from "../activity/filter.js";
import { nftOf, partiesOf } from "../activity/records.js";
import { MAINNET_ETH_TOKENS } from "../chain/index.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { Rule } from "./config-schema.js";

type Loose = Record<string, any>;

export { later, type Position, positionOf, recordKeys } from "../activity/records.js";

/**
 * NFTPort's filter semantics: `list` means listings and their cancellations, `bid` bids and theirs. Checked here too
 * because NFTPort's own filter is loose (`sale` on one token also returns `cancel_list` rows).
 */
function typeMatches(type: string, wanted: readonly string[]): boolean {
  if (wanted.includes("all") || wanted.includes(type)) return true;
  return (type === "cancel_list" && wanted.includes("list")) || (type === "cancel_bid" && wanted.includes("bid"));
}

/**
 * Whether a rule wants this record: its kind, its contracts, wallets, marketplaces and quantity (activity/filter.ts),
 * and its price when the rule sets a minimum or a maximum (records without such a price never pass a bound).
 */
export function ruleWants(rule: Rule, record: TransactionRecord, ethTokens: ReadonlySet<string>): boolean {
  const r = record as Loose;
  if (!typeMatches(String(r.type), rule.type)) return false;
  if (!filterPasses(rule, record)) return false;
  if (!rule.min_price && !rule.max_price) return true;
  const p = r.price_details;
  if (!p) return false;
  const inEth = p.asset_type === "ETH" || ethTokens.has(String(p.contract_address ?? "").toLowerCase());
  /** The record's price in the bound's unit, or undefined when it has none. */
  const priceIn = (bound: { eth?: number | undefined; usd?: number | undefined }): [number, number] | undefined => {
    if (bound.usd !== undefined) return typeof p.price_usd === "number" ? [p.price_usd, bound.usd] : undefined;
    return inEth && typeof p.price === "number" ? [p.price, bound.eth ?? 0] : undefined;
  };
  if (rule.min_price) {
    const at = priceIn(rule.min_price);
    if (!at || at[0] < at[1]) return false;
  }
  if (rule.max_price) {
    const at = priceIn(rule.max_price);
    if (!at || at[0] > at[1]) return false;
  }
  return true;
}

export const ETH_TOKENS: ReadonlySet<string> = new Set(MAINNET_ETH_TOKENS);

/** `0x1234…abcd` for an address; anything short stays whole. */
export const shortAddress = (address: string) =>
  address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;

const amount = (value: number, digits: number) => value.toLocaleString("en-US", { maximumFractionDigits: digits });

/**
 * The `{{var:…}}` values of one record, the same names for every shape; a value the record does not have is "".
 * `summary` is the whole record in one line.
 */
export function recordVariables(record: TransactionRecord, rule: string): Record<string, string> {
  const r = record as Loose;
  const { contract, tokenId, contractType } = nftOf(r);
  const { from, to } = partiesOf(r);
  const p = r.price_details ?? {};
  const currency = p.asset_type === "ETH" ? "ETH" : String(p.contract_address ?? p.asset_type ?? "");
  const price = typeof p.price === "number" ? String(p.price) : "";
  const priceUsd = typeof p.price_usd === "number" ? p.price_usd.toFixed(2) : "";
  const quantity = r.quantity === undefined ? "" : String(r.quantity);
  const parts = [
    `${r.type} of ${contractType ? `${contractType} ` : ""}${shortAddress(contract)} #${tokenId}`,
    quantity && quantity !== "1" ? ` x${quantity}` : "",
    price
      ? ` for ${amount(Number(price), 6)} ${p.asset_type === "ETH" ? "ETH" : shortAddress(currency)}${priceUsd ? ` ($${amount(Number(priceUsd), 2)})` : ""}`
      : "",
    from || to ? `, ${from ? shortAddress(from) : "…"} -> ${to ? shortAddress(to) : "…"}` : "",
    r.marketplace ? ` on ${r.marketplace}` : "",
    r.block_number !== undefined ? `, block ${r.block_number}` : "",
  ];
  return {
    rule,
    summary: parts.join(""),
    type: String(r.type),
    contract_address: contract,
    token_id: tokenId,
    contract_type: contractType,
    quantity,
    price,
    currency,
    price_usd: priceUsd,
    from: String(from),
    to: String(to),
    marketplace: String(r.marketplace ?? ""),
    block_number: r.block_number === undefined ? "" : String(r.block_number),
    block_hash: String(r.block_hash ?? ""),
    transaction_hash: String(r.transaction_hash ?? ""),
    transaction_date: String(r.transaction_date ?? ""),
  };
}

/** The names `recordVariables` fills, for checking templates before anything runs. */
export const RECORD_VARIABLES: readonly string[] = Object.keys(
  recordVariables({ type: "sale", transaction_date: "" } as unknown as TransactionRecord, ""),
);

/** The variables a transaction's mail (`group: "transaction"`) adds to its first record's. */
export const GROUP_VARIABLES = ["count", "token_ids", "total_price", "total_price_usd"] as const;

/** A decimal's digits without exponent notation. */
const decimalText = (value: unknown): string | undefined => {
  if (typeof value === "string" && /^[0-9]+(\.[0-9]+)?$/.test(value)) return value;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return undefined;
  return value.toLocaleString("en-US", { useGrouping: false, maximumFractionDigits: 20 });
};

/** The exact sum of decimal texts; undefined when one is missing. */
function sumDecimals(texts: readonly (string | undefined)[]): string | undefined {
  if (!texts.length || texts.some((t) => t === undefined)) return undefined;
  const scale = Math.max(...texts.map((t) => t!.split(".")[1]?.length ?? 0));
  const total = texts.reduce((sum, t) => {
    const [whole, fraction = ""] = t!.split(".");
    return sum + BigInt(whole + fraction.padEnd(scale, "0"));
  }, 0n);
  const digits = total.toString().padStart(scale + 1, "0");
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return scale ? text.replace(/\.?0+$/, "") : text;
}

/**
 * The variables of one transaction's records (oldest first): the first record's, with `count`, every token id, the
 * total price (when every record has a price in the same currency) and `summary` for all of them.
 */
export function groupVariables(records: readonly TransactionRecord[], rule: string): Record<string, string> {
  const each = records.map((r) => recordVariables(r, rule));
  const first = each[0]!;
  const ids = [...new Set(each.map((v) => v.token_id))];
  const oneCurrency = each.every((v) => v.currency === first.currency);
  const priceOf = (r: TransactionRecord) => {
    const p = (r as Loose).price_details ?? {};
    return decimalText(p.price_exact ?? p.price);
  };
  const total = oneCurrency ? (sumDecimals(records.map(priceOf)) ?? "") : "";
  const usd = sumDecimals(records.map((r) => decimalText((r as Loose).price_details?.price_usd)));
  const totalUsd = usd === undefined ? "" : Number(usd).toFixed(2);
  const unit = first.currency === "ETH" ? "ETH" : shortAddress(first.currency ?? "");
  const summary = [
    `${records.length} ${first.type}${records.length > 1 ? "s" : ""} of ${shortAddress(first.contract_address ?? "")}`,
    ` #${ids.join(", #")}`,
    total ? ` for ${total} ${unit}${totalUsd ? ` ($${amount(Number(totalUsd), 2)})` : ""}` : "",
    first.marketplace ? ` on ${first.marketplace}` : "",
    first.transaction_hash ? ` in ${shortAddress(first.transaction_hash)}` : "",
  ].join("");
  return {
    ...first,
    summary,
    count: String(records.length),
    token_ids: ids.join(", "),
    total_price: total,
    total_price_usd: totalUsd,
  };
}
