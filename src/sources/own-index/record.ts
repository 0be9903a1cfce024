/**
 * The index record: one `ActivityRow` from the decoder to the store, its shape written once, in `COLUMN_TABLE`: each
 * stored column, in the store's order, with how a decoded record fills it and how an engine's value reads back.
 * The row type, the column list the store inserts and selects, the positional reader of a selected row and the
 * mapping of a decoded record (`recordOf`) all follow from it.
 *
 * A decoder's `Activity` becomes a row as soon as it is decoded, its price with it when it is a sale. Two columns are
 * known only later, and are filled in place: the block's `timestamp` once the range's logs are all read, from the
 * logs' own `blockTimestamp` or the block's header (`stampTimes`), and the `price_usd` of a sale priced before the
 * range's first feed answer at its commit (pricing.ts).
 */

import { type Header, hexToNumber } from "../../chain/index.js";

export type Kind = "transfer" | "mint" | "burn" | "sale";

/** One record of the index, before its block's timestamp and USD price are known. */
export interface Activity {
  blockNumber: number;
  logIndex: number;
  batchIndex: number;
  kind: Kind;
  contract: string;
  tokenId: string;
  from: string;
  to: string;
  /** Decimal string: ERC-1155 quantities exceed 2^53. */
  quantity: string;
  txHash: string;
  blockHash: string;
  /** `null` where the contract predates both standards (CryptoPunks), as NFTPort leaves it out. */
  contractType: ContractType | null;
  sale?: SaleTerms;
}

/** The lazy types are NFTPort's names for NFTs a sale minted on the way (Rarible's lazy-mint asset classes). */
export type ContractType = "ERC721" | "ERC1155" | "ERC721_lazy" | "ERC1155_lazy";

export interface SaleTerms {
  marketplace: string;
  /** `null` for ETH, else the ERC-20 token address. */
  currency: string | null;
  /** Gross amount paid, fees included, in the currency's smallest unit; `null` when the chain does not say. */
  amount: bigint | null;
}

/** A sale's price as decoded: the amount in whole units of its currency, and in USD when the feed tells. */
export interface Price {
  price: string | null;
  usd: string | null;
}

/** How one column is filled from a decoded record, and read back from an engine's value. */
interface Column<T> {
  /** Its value in a new record: the decoded `Activity`, its sale's price, `shared` (one string for equal ones). */
  of(activity: Activity, price: Price | undefined, shared: (value: string) => string): T;
  /** Its value from what the engine returns (default: as returned). */
  read?(value: unknown): T;
}

const column = <T>(of: Column<T>["of"], read?: Column<T>["read"]): Column<T> => (read ? { of, read } : { of });

/** The stored record's columns, in the order of the `activity` table's columns (migrations/index/<engine>/). */
const COLUMN_TABLE = {
  block_number: column<number>((a) => a.blockNumber),
  log_index: column<number>((a) => a.logIndex),
  batch_index: column<number>((a) => a.batchIndex),
  kind: column<Kind>((a) => a.kind),
  contract: column<string>((a, _, shared) => shared(a.contract)),
  /** Decimal string (uint256). */
  token_id: column<string>((a) => a.tokenId),
  from_addr: column<string>((a, _, shared) => shared(a.from)),
  to_addr: column<string>((a, _, shared) => shared(a.to)),
  /** Decimal string (uint256). */
  quantity: column<string>((a) => a.quantity),
  tx_hash: column<string>((a, _, shared) => shared(a.txHash)),
  block_hash: column<string>((a, _, shared) => shared(a.blockHash)),
  /** Unix seconds of the block: 0 until `stampTimes`. */
  timestamp: column<number>(() => 0),
  /** `null` for contracts older than both standards (CryptoPunks). */
  contract_type: column<string | null>((a) => a.contractType),
  marketplace: column<string | null>((a) => a.sale?.marketplace ?? null),
  /** `null` for ETH, else the ERC-20 token address. */
  currency: column<string | null>((a) => a.sale?.currency ?? null),
  /** Exact decimal string in whole units of the currency. */
  price: column<string | null>((_, price) => price?.price ?? null),
  /** Decimal string: exact on PostgreSQL; SQLite keeps a double (read back as its shortest decimal). */
  price_usd: column<string | null>(
    (_, price) => price?.usd ?? null,
    (value) => (value === null ? null : String(value)),
  ),
};

type Table = typeof COLUMN_TABLE;

/** One row of `activity`, as stored. */
export type ActivityRow = { [K in keyof Table]: ReturnType<Table[K]["of"]> };

/** The `activity` table's columns, in order: what the store inserts and selects. */
export const ACTIVITY_COLUMNS = Object.keys(COLUMN_TABLE) as (keyof ActivityRow)[];

const COLUMNS = Object.values(COLUMN_TABLE) as Column<unknown>[];
/** A row with every column, in order: each record is a copy of it, so every record has one shape. */
const TEMPLATE = Object.fromEntries(ACTIVITY_COLUMNS.map((name) => [name, null])) as unknown as ActivityRow;
const same = (value: string): string => value;

/**
 * A row as the engines return it (its values in `ACTIVITY_COLUMNS` order: PostgreSQL NUMERICs as strings, SQLite's
 * REAL price_usd as a number). Rows are read as arrays and copied into the one shape: no object with named keys is
 * built per row by the driver (node:sqlite's are dictionaries, slow to read).
 */
export function activityRow(values: readonly unknown[]): ActivityRow {
  const row = { ...TEMPLATE } as Record<string, unknown>;
  for (let i = 0; i < COLUMNS.length; i++) {
    const read = COLUMNS[i]!.read;
    row[ACTIVITY_COLUMNS[i]!] = read ? read(values[i]) : values[i];
  }
  return row as ActivityRow;
}

/**
 * The row of one decoded record; `price` for a sale. `shared` returns one string for equal ones (the decoder's
 * `sharedStrings`), so that a range's rows hold each repeated address and hash once while they wait for the commit.
 * Its `timestamp` is 0 until `stampTimes`.
 */
export function recordOf(a: Activity, price?: Price, shared: (value: string) => string = same): ActivityRow {
  const row = { ...TEMPLATE } as Record<string, unknown>;
  for (let i = 0; i < COLUMNS.length; i++) row[ACTIVITY_COLUMNS[i]!] = COLUMNS[i]!.of(a, price, shared);
  return row as ActivityRow;
}

/** The blocks of these records whose logs carried no timestamp (`times`): their headers must tell. */
export function timelessBlocks(
  records: readonly ActivityRow[],
  times: ReadonlyMap<number, number | null>,
): Set<number> {
  const out = new Set<number>();
  for (const record of records) if ((times.get(record.block_number) ?? null) === null) out.add(record.block_number);
  return out;
}

/**
 * Gives each record its block's timestamp: as its logs carried it (`times`), else from the block's header (those of
 * `timelessBlocks` read). Records come in block order.
 */
export function stampTimes(
  records: ActivityRow[],
  times: ReadonlyMap<number, number | null>,
  headers: ReadonlyMap<number, Header>,
): void {
  let block = -1;
  let timestamp = 0;
  for (const record of records) {
    if (record.block_number !== block) {
      block = record.block_number;
      timestamp = times.get(block) ?? hexToNumber(headers.get(block)!.timestamp);
    }
    record.timestamp = timestamp;
  }
}
