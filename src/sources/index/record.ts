/**
 * The index record: one `ActivityRow` (the store's shape) from the decoder to the store, built here and nowhere else.
 *
 * A decoder's `Activity` becomes a row as soon as it is decoded, its price with it when it is a sale. Two columns are
 * known only later, and are filled in place: the block's `timestamp` once the range's headers are read
 * (`stampTimes`), and the `price_usd` of a sale priced before the range's first feed answer at its commit
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

/** Gives each record its block's timestamp, from the range's headers (records come in block order). */
export function stampTimes(records: ActivityRow[], headers: ReadonlyMap<number, Header>): void {
  let block = -1;
  let timestamp = 0;
  for (const record of records) {
    if (record.block_number !== block) {
      block = record.block_number;
      timestamp = hexToNumber(headers.get(block)!.timestamp);
    }
    record.timestamp = timestamp;
  }
}
