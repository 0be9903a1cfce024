/**
 * OpenSea's events as transaction records. OpenSea's answer is untrusted: only own properties are read, every
 * value is checked (addresses, decimal token ids up to 78 digits, integer quantities of any size, bounded `decimals`
 * and strings) before it is used, and an event this source would return but cannot read fails the whole page with
 * the field that was wrong, rather than being dropped without a word.
 *
 * How events become records (facts and sources: docs/opensea.md):
 * - `sale` → sale; `transfer` → transfer, or mint from the zero address, or burn to it; `mint` → mint.
 * - `order` with `order_type` `listing` → list, `item_offer` → bid (the NFT under `asset`). Collection and trait
 *   offers name no token (`asset` is `{}`): they are not bids on an NFT and give no record. Older shapes
 *   (`event_type` `listing` / `offer`) read the same way, and `cancel` (no longer answered) gives cancel_list /
 *   cancel_bid.
 * - Events of other chains, and kinds OpenSea may add, give no record.
 */
import { decimalText, setExactDecimal } from "../../core/exact-decimals.js";
import { toExactInteger } from "../../core/json.js";
import type { TransactionRecord } from "../../schemas/transactions.js";

export type RecordKind = "transfer" | "mint" | "burn" | "sale" | "bid" | "list" | "cancel_bid" | "cancel_list";

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

/** What a page of OpenSea events holds: the events (unread) and the cursor of the next page. */
export interface EventsPage {
  events: readonly unknown[];
  next: string | undefined;
}

/** A value that broke a rule: where (`asset_events[3].payment.quantity`) and which rule. */
export class Unreadable {
  constructor(
    readonly field: string,
    readonly rule: string,
  ) {}
}

/** Longest `next` cursor taken (OpenSea's are ~60 characters): it goes into a URL and into a continuation. */
export const MAX_CURSOR_LENGTH = 256;
/** Whether `text` may be OpenSea's `next`: visible ASCII (no space), 1 to MAX_CURSOR_LENGTH characters. */
export const isCursor = (text: string): boolean => text.length <= MAX_CURSOR_LENGTH && /^[\x21-\x7e]+$/.test(text);
/** Most events one answer may hold (OpenSea's `limit` is at most 200). */
export const MAX_EVENTS = 1000;

type Loose = Record<string, unknown>;

const isObject = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An own property, never an inherited one. */
const own = (object: Loose, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);

/** Reads the envelope: `asset_events` (an array of at most MAX_EVENTS) and `next` (absent or null at the end). */
export function readEventsPage(body: unknown): EventsPage | Unreadable {
  if (!isObject(body)) return new Unreadable("(body)", "is not an object");
  const events = own(body, "asset_events");
  if (!Array.isArray(events)) return new Unreadable("asset_events", "is not an array");
  if (events.length > MAX_EVENTS) return new Unreadable("asset_events", `holds more than ${MAX_EVENTS} events`);
  const next = own(body, "next");
  if (next === undefined || next === null || next === "") return { events, next: undefined };
  if (typeof next !== "string" || !isCursor(next)) {
    return new Unreadable("next", `is not a cursor (visible ASCII, at most ${MAX_CURSOR_LENGTH} characters)`);
  }
  return { events, next };
}

/** The kind of record an event gives, or undefined for none (another chain, an offer on no token, a new kind). */
export function kindOf(event: unknown): RecordKind | undefined {
  if (!isObject(event) || own(event, "chain") !== "ethereum") return undefined;
  const type = own(event, "event_type");
  const orderType = own(event, "order_type");
  switch (type) {
    case "sale":
      return "sale";
    case "mint":
      return "mint";
    case "transfer": {
      const from = own(event, "from_address");
      const to = own(event, "to_address");
      if (typeof from === "string" && from.toLowerCase() === ZERO_ADDRESS) return "mint";
      if (typeof to === "string" && to.toLowerCase() === ZERO_ADDRESS) return "burn";
      return "transfer";
    }
    case "order":
      return orderType === "listing" ? "list" : orderType === "item_offer" ? "bid" : undefined;
    case "listing":
      return "list";
    case "offer":
      return orderType === undefined || orderType === "item_offer" ? "bid" : undefined;
    case "cancel":
      return orderType === "listing" ? "cancel_list" : orderType === "item_offer" ? "cancel_bid" : undefined;
    default:
      return undefined;
  }
}

/** The last date written: the events of a page often share their second. */
let lastDate: [number, string] = [0, "1970-01-01T00:00:00"];

/** Unix seconds (an integer up to the year 9999) → `YYYY-MM-DDTHH:MM:SS`, UTC, as the other sources write it. */
function dateOf(seconds: unknown, at: string): string | Unreadable {
  if (typeof seconds !== "number" || !Number.isInteger(seconds) || seconds < 0 || seconds > 253_402_300_799) {
    return new Unreadable(at, "is not a Unix time in seconds");
  }
  if (lastDate[0] !== seconds) lastDate = [seconds, new Date(seconds * 1000).toISOString().slice(0, 19)];
  return lastDate[1];
}

function addressOf(value: unknown, at: string): string | Unreadable {
  return typeof value === "string" && /^0x[0-9a-fA-F]{40}$/.test(value)
    ? value.toLowerCase()
    : new Unreadable(at, "is not an address");
}

function hashOf(value: unknown, at: string): string | Unreadable {
  return typeof value === "string" && /^0x[0-9a-fA-F]{64}$/.test(value)
    ? value.toLowerCase()
    : new Unreadable(at, "is not a transaction hash");
}

/**
 * An integer quantity >= 0 of any size: a JSON integer (a bigint beyond 2^53) or a string of at most 78 digits. A
 * number beyond 2^53 (written as a float, `1e20`) is not exact and is refused.
 */
function quantityOf(value: unknown, at: string): number | bigint | Unreadable {
  const unsafe = typeof value === "number" && !Number.isSafeInteger(value);
  const exact = unsafe || (typeof value === "string" && !/^\d{1,78}$/.test(value)) ? undefined : toExactInteger(value);
  return exact === undefined || exact < 0 || (typeof exact === "bigint" && exact >= 10n ** 78n)
    ? new Unreadable(at, "is not a non-negative integer")
    : exact;
}

interface Nft {
  contract_type?: string;
  contract_address: string;
  token_id: string;
}

function nftOf(value: unknown, at: string): Nft | Unreadable {
  if (!isObject(value)) return new Unreadable(at, "is not an object");
  const contract = addressOf(own(value, "contract"), `${at}.contract`);
  if (contract instanceof Unreadable) return contract;
  const identifier = own(value, "identifier");
  if (typeof identifier !== "string" || !/^\d{1,78}$/.test(identifier)) {
    return new Unreadable(`${at}.identifier`, "is not a decimal token id");
  }
  // `007` and `7` are the same token; the other sources write the plain form.
  const tokenId = identifier.length > 1 && identifier[0] === "0" ? identifier.replace(/^0+(?=\d)/, "") : identifier;
  const standard = own(value, "token_standard");
  if (typeof standard !== "string" || !/^[a-z0-9_]{1,32}$/i.test(standard)) {
    return { contract_address: contract, token_id: tokenId };
  }
  return { contract_type: standard.toUpperCase(), contract_address: contract, token_id: tokenId };
}

/** Most decimals a payment token may claim: enough for any real token, and bounds the work of formatting a price. */
const MAX_DECIMALS = 77;

interface PriceDetails {
  asset_type: string;
  contract_address?: string;
  price: number;
}

/** A payment's exact amount in the token's smallest unit, for what is computed from it later (a USD value). */
export interface Payment {
  amount: bigint;
  decimals: number;
}

/** A record and, when it has a price, the exact payment it was computed from. */
export interface Mapped {
  record: TransactionRecord;
  payment?: Payment | undefined;
}

/**
 * The payment as SPEC's price object: `ETH` for the native token (address zero), else `ERC20` with the token's
 * address; `price` = quantity ÷ 10^decimals, the nearest number, with the exact decimal beside it (`price_exact`).
 * Undefined when the event carries no payment (its OpenAPI document does not require one).
 */
function priceOf(value: unknown, at: string): { details: PriceDetails; payment: Payment } | undefined | Unreadable {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) return new Unreadable(at, "is not an object");
  const quantity = own(value, "quantity");
  if (typeof quantity !== "string" || !/^\d{1,78}$/.test(quantity)) {
    return new Unreadable(`${at}.quantity`, "is not a decimal integer string");
  }
  const decimals = own(value, "decimals");
  if (typeof decimals !== "number" || !Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    return new Unreadable(`${at}.decimals`, `is not an integer from 0 to ${MAX_DECIMALS}`);
  }
  const token = addressOf(own(value, "token_address"), `${at}.token_address`);
  if (token instanceof Unreadable) return token;
  const amount = BigInt(quantity);
  const details: PriceDetails =
    token === ZERO_ADDRESS
      ? { asset_type: "ETH", price: 0 }
      : { asset_type: "ERC20", contract_address: token, price: 0 };
  // The nearest number, and its exact text beside it (`price_exact`) for JSON and for code that wants every digit.
  setExactDecimal(details, "price", decimalText(amount, decimals));
  return { details, payment: { amount, decimals } };
}

/** What the record needs of a field, or the first field that could not be read. */
type Read<T> = T | Unreadable;

function firstUnreadable(...values: Read<unknown>[]): Unreadable | undefined {
  return values.find((v): v is Unreadable => v instanceof Unreadable);
}

/**
 * The record of one event of a known kind (`kindOf`), or the field that could not be read; undefined for an order
 * that names no token (an `asset` without an identifier).
 */
export function toRecord(event: Loose, kind: RecordKind, at: string): Mapped | undefined | Unreadable {
  const date = dateOf(own(event, "event_timestamp"), `${at}.event_timestamp`);
  const quantity = quantityOf(own(event, "quantity"), `${at}.quantity`);
  if (date instanceof Unreadable) return date;
  if (quantity instanceof Unreadable) return quantity;

  if (kind === "sale") return saleOf(event, at, date, quantity);
  if (kind === "transfer" || kind === "mint" || kind === "burn") return movementOf(event, kind, at, date, quantity);
  return orderOf(event, kind, at, date, quantity);
}

type Quantity = Exclude<ReturnType<typeof quantityOf>, Unreadable>;

function saleOf(event: Loose, at: string, date: string, quantity: Quantity): Mapped | Unreadable {
  const nft = nftOf(own(event, "nft"), `${at}.nft`);
  const seller = addressOf(own(event, "seller"), `${at}.seller`);
  const buyerRaw = own(event, "buyer");
  const buyer = buyerRaw === undefined || buyerRaw === "" ? undefined : addressOf(buyerRaw, `${at}.buyer`);
  const hash = hashOf(own(event, "transaction"), `${at}.transaction`);
  const price = priceOf(own(event, "payment"), `${at}.payment`);
  const bad = firstUnreadable(nft, seller, buyer, hash, price);
  if (bad) return bad;
  // A sale that went through an OpenSea order names it; other marketplaces' fills come with an empty order_hash.
  const orderHash = own(event, "order_hash");
  const viaOpenSea = typeof orderHash === "string" && orderHash !== "";
  const priced = price as { details: PriceDetails; payment: Payment } | undefined;
  const record = {
    type: "sale",
    ...(buyer ? { buyer_address: buyer as string } : {}),
    seller_address: seller as string,
    nft: nft as Nft,
    quantity,
    ...(priced ? { price_details: priced.details } : {}),
    transaction_hash: hash as string,
    transaction_date: date,
    ...(viaOpenSea ? { marketplace: "opensea" } : {}),
  } as unknown as TransactionRecord;
  return { record, payment: priced?.payment };
}

function movementOf(
  event: Loose,
  kind: "transfer" | "mint" | "burn",
  at: string,
  date: string,
  quantity: Quantity,
): Mapped | Unreadable {
  const nft = nftOf(own(event, "nft"), `${at}.nft`);
  // A `mint` event (as OpenSea's SDK types it) names only the receiver.
  const fromRaw = own(event, "from_address");
  const from = kind === "mint" && fromRaw === undefined ? ZERO_ADDRESS : addressOf(fromRaw, `${at}.from_address`);
  const to = addressOf(own(event, "to_address"), `${at}.to_address`);
  const hash = hashOf(own(event, "transaction"), `${at}.transaction`);
  const bad = firstUnreadable(nft, from, to, hash);
  if (bad) return bad;
  const { contract_address, token_id } = nft as Nft;
  const parties =
    kind === "mint"
      ? { owner_address: to as string }
      : kind === "burn"
        ? { owner_address: from as string }
        : { transfer_from: from as string, transfer_to: to as string };
  const record = {
    type: kind,
    ...parties,
    contract_address,
    token_id,
    quantity,
    transaction_hash: hash as string,
    transaction_date: date,
  } as unknown as TransactionRecord;
  return { record };
}

function orderOf(
  event: Loose,
  kind: RecordKind,
  at: string,
  date: string,
  quantity: Quantity,
): Mapped | undefined | Unreadable {
  // Orders: listings and bids (and their cancellations), the NFT under `asset` (older shapes: `nft`).
  const asset = own(event, "asset") ?? own(event, "nft");
  if (!isObject(asset) || own(asset, "identifier") === undefined) return undefined;
  const nft = nftOf(asset, `${at}.asset`);
  const maker = addressOf(own(event, "maker"), `${at}.maker`);
  const price = priceOf(own(event, "payment"), `${at}.payment`);
  const bad = firstUnreadable(nft, maker, price);
  if (bad) return bad;
  const party = kind === "bid" || kind === "cancel_bid" ? "bidder_address" : "lister_address";
  const priced = price as { details: PriceDetails; payment: Payment } | undefined;
  const record = {
    type: kind,
    [party]: maker as string,
    nft: nft as Nft,
    quantity,
    ...(priced ? { price_details: priced.details } : {}),
    transaction_date: date,
    marketplace: "opensea",
  } as unknown as TransactionRecord;
  return { record, payment: priced?.payment };
}
