/**
 * The index record: one `ActivityRow` (the store's shape) from the decoder to the store, built here and nowhere else.
 *
 * A decoder's `Activity` becomes a row as soon as it is decoded, its price with it when it is a sale. Two columns are
 * known only later, and are filled in place: the block's `timestamp` once the range's logs are all read, from the
 * logs' own `blockTimestamp` or the block's header (`stampTimes`), and the `price_usd` of a sale priced before the range's first feed answer at its commit
 * (pricing.ts).
 */
import type { Header } from "./completeness.js";
import type { Activity } from "./decode.js";
import { hexToNumber } from "./rpc.js";
import type { ActivityRow } from "./store.js";

/** A sale's price as decoded: the amount in whole units of its currency, and in USD when the feed tells. */
export interface Price {
  price: string | null;
  usd: string | null;
}

const same = (value: string): string => value;

/**
 * The row of one decoded record; `price` for a sale. `shared` returns one string for equal ones (the decoder's
 * `sharedStrings`), so that a range's rows hold each repeated address and hash once while they wait for the commit.
 * Its `timestamp` is 0 until `stampTimes`.
 */
export function recordOf(a: Activity, price?: Price, shared: (value: string) => string = same): ActivityRow {
  return {
    block_number: a.blockNumber,
    log_index: a.logIndex,
    batch_index: a.batchIndex,
    kind: a.kind,
    contract: shared(a.contract),
    token_id: a.tokenId,
    from_addr: shared(a.from),
    to_addr: shared(a.to),
    quantity: a.quantity,
    tx_hash: shared(a.txHash),
    block_hash: shared(a.blockHash),
    timestamp: 0,
    contract_type: a.contractType,
    marketplace: a.sale?.marketplace ?? null,
    currency: a.sale?.currency ?? null,
    price: price?.price ?? null,
    price_usd: price?.usd ?? null,
  };
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
