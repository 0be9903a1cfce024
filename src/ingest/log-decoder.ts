/**
 * Logs → records: an `eth_getLogs` answer decoded a slice of logs at a time as it is parsed, in chain order, into
 * the range's records (record.ts), the feed's answers, and a count of the logs of known exchanges that gave none.
 * Transfers and feed answers are decoded at once; a marketplace log once all its transaction's logs are seen (the
 * venue decoders, venues/ one file each, read the whole sale). No I/O of its own: the transactions a venue reads
 * and the prices come from what it is given (fetcher.ts, pricing.ts).
 */

import { hexToNumber } from "../chain/index.js";
import type { ActivityRow, PriceAnswer } from "../sources/own-index/index.js";
import { recordOf } from "../sources/own-index/index.js";
import { decodeAnswer, decodeTransfer, type RawLog, type SaleTerms, TOPIC, topic0 } from "./decode.js";
import type { SalePrice, Unpriced } from "./pricing.js";
import type { TransactionInfo, Venue, VenueTable } from "./venues/index.js";

/** Logs parsed at a time from an `eth_getLogs` answer (result-slices.ts): they are decoded before the next ones. */
const LOG_SLICE = 1_000;
/**
 * Logs of one transaction kept for the marketplace decoders while it goes on (sweeps hold a few hundred); a
 * longer one holding a sale has its logs read again from the answer at the end.
 */
const TRANSACTION_LOGS = 2_000;

/** What an `eth_getLogs` answer decodes to, before the headers are read. */
export interface Decoded {
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  /** Logs of known exchanges (and ERC-2309 ranges beyond the cap) that gave no record. */
  unknownLogs: number;
  /** Logs in the answer, removed ones included: the density the next ranges are sized by. */
  logs: number;
  /** The hash of each block the logs came from, lower case. */
  blocks: Map<number, string>;
  /** Logs of each block, removed ones left out: what `--verify-head` and `--verify-rpc` compare (verify.ts). */
  perBlock: Map<number, number>;
  /**
   * The timestamp of each block the logs came from, as its logs carry it (`blockTimestamp`); null where one of
   * its logs lacks it or disagrees: its header tells.
   */
  times: Map<number, number | null>;
  /** Some block's logs came with two different hashes (the chain moved during the read). */
  mixed: boolean;
}

/** What the decoder is given: what it decodes, and where the transactions and prices of sales come from. */
export interface DecoderSetup {
  venues: VenueTable;
  /** Only these NFT contracts' records; all when undefined. */
  contracts: ReadonlySet<string> | undefined;
  /** The ETH/USD feed whose `AnswerUpdated` logs are read, lower case. */
  feed: string | undefined;
  /** Loads the transactions a venue reads, for `transaction` to give. */
  loadTransactions(hashes: ReadonlySet<string>): Promise<void>;
  transaction(hash: string): TransactionInfo | undefined;
  priceOf(sale: SaleTerms, answer: bigint | undefined): Promise<SalePrice>;
}

/** One transaction's logs as the decoding meets them. */
interface Transaction {
  hash: string;
  /** All its logs, for the venue decoders; undefined once there are more than TRANSACTION_LOGS. */
  logs: RawLog[] | undefined;
  /** Its marketplace logs, with the feed's answer in force at each. */
  sales: { log: RawLog; address: string; answer: bigint | undefined; venue: Venue }[];
}

const newDecoded = (): Decoded => ({
  records: [],
  answers: [],
  unpriced: [],
  unknownLogs: 0,
  logs: 0,
  blocks: new Map(),
  perBlock: new Map(),
  times: new Map(),
  mixed: false,
});

export class LogDecoder {
  constructor(private readonly setup: DecoderSetup) {}

  /** An `eth_getLogs` answer decoded, in chain order whatever order the node answered in. */
  async decode(read: (size: number) => Iterable<unknown[]>): Promise<Decoded> {
    const decoded = newDecoded();
    if (await this.decodeLogs(read, decoded, true)) return decoded;
    // Not in chain order (nodes answer in order; this one did not): decoded again from one sorted list.
    const all: RawLog[] = [];
    for (const slice of read(LOG_SLICE)) all.push(...(slice as RawLog[]));
    const sorted = [sortInChainOrder(all)];
    const again = newDecoded();
    await this.decodeLogs(() => sorted, again, false);
    return again;
  }

  /**
   * Decodes an answer a slice at a time, so that its logs die young. False, with `out` half filled, when
   * `checkOrder` finds the logs out of chain order.
   */
  private async decodeLogs(
    read: (size: number) => Iterable<unknown[]>,
    out: Decoded,
    checkOrder: boolean,
  ): Promise<boolean> {
    const { venues, contracts, feed } = this.setup;
    const shared = sharedStrings();
    // The feed's answer in force so far in this range; before its first answer, the commit fills the rate in.
    let answer: bigint | undefined;
    const countSkipped = () => out.unknownLogs++;
    let group: Transaction | undefined;
    /** Transactions holding marketplace logs, all their logs seen, waiting to be decoded. */
    let complete: Transaction[] = [];
    /** Such transactions with too many logs to keep: their logs are read again at the end. */
    const reread = new Map<string, Transaction>();
    const finish = (tx: Transaction | undefined) => {
      if (!tx?.sales.length) return;
      if (tx.logs) complete.push(tx);
      else reread.set(tx.hash, tx);
    };
    let blockKey = "";
    let hashKey = "";
    let block = -1;
    let lastIndex = -1;
    /** Logs of `block` in its current run, added to `perBlock` when the run ends. */
    let run = 0;
    const endRun = () => {
      if (run > 0) out.perBlock.set(block, (out.perBlock.get(block) ?? 0) + run);
      run = 0;
    };
    let timeKey: unknown;
    for (const slice of read(LOG_SLICE)) {
      for (const log of slice as RawLog[]) {
        out.logs++;
        if (log.removed) continue;
        if (log.blockNumber !== blockKey || log.blockHash !== hashKey) {
          timeKey = log.blockTimestamp;
          // Logs come grouped by block: a block's number and hash are looked at once per run of its logs.
          const number = hexToNumber(log.blockNumber);
          if (checkOrder && number < block) return false;
          endRun();
          if (number !== block) lastIndex = -1;
          blockKey = log.blockNumber;
          hashKey = log.blockHash;
          block = number;
          const hash = hashKey.toLowerCase();
          const seen = out.blocks.get(number);
          if (seen !== undefined && seen !== hash) out.mixed = true;
          out.blocks.set(number, hash);
          const time = timestampOf(timeKey);
          const known = out.times.get(number);
          out.times.set(number, known === undefined || known === time ? time : null);
        } else if (log.blockTimestamp !== timeKey) out.times.set(block, null);
        run++;
        const index = hexToNumber(log.logIndex);
        if (checkOrder && index <= lastIndex) return false;
        lastIndex = index;
        const txHash = log.transactionHash.toLowerCase();
        if (group?.hash !== txHash) {
          finish(group);
          group = { hash: txHash, logs: [], sales: [] };
        }
        if (group.logs) {
          if (group.logs.length < TRANSACTION_LOGS) group.logs.push(log);
          else group.logs = undefined;
        }
        const address = log.address.toLowerCase();
        const topic = topic0(log) ?? "";
        if (feed && address === feed && topic === TOPIC.answerUpdated) {
          const value = decodeAnswer(log);
          if (value !== undefined) {
            answer = value;
            out.answers.push({ block, log: index, answer: value });
          }
          continue;
        }
        const venue = venues.byTopic.get(topic);
        if (venue) {
          if (venue.addresses !== "any" && !venue.addresses.includes(address)) continue; // same topic, other contract
          group.sales.push({ log, address, answer, venue });
          continue;
        }
        if (contracts && !contracts.has(address)) continue;
        for (const activity of decodeTransfer(log, countSkipped))
          out.records.push(recordOf(activity, undefined, shared));
      }
      // Between slices: the sales whose transactions ended in this one.
      if (complete.length > 0) {
        await this.decodeSales(complete, out, shared);
        complete = [];
      }
    }
    endRun();
    finish(group);
    if (reread.size > 0) {
      for (const tx of reread.values()) tx.logs = [];
      for (const slice of read(LOG_SLICE)) {
        for (const log of slice as RawLog[]) {
          const tx = reread.get(log.transactionHash.toLowerCase());
          if (tx && !log.removed) tx.logs!.push(log);
        }
      }
      complete.push(...reread.values());
    }
    await this.decodeSales(complete, out, shared);
    return true;
  }

  /** The marketplace logs of whole transactions, into sale records (and unknown logs counted). */
  private async decodeSales(transactions: Transaction[], out: Decoded, shared: (value: string) => string) {
    if (transactions.length === 0) return;
    const { venues, contracts } = this.setup;
    await this.loadTransactions(transactions);
    for (const tx of transactions) {
      for (const { log, address, answer, venue } of tx.sales) {
        const decoded = venue.decode(log, { logs: tx.logs ?? [], transaction: this.setup.transaction(tx.hash) });
        if (!decoded) {
          if (venues.exchanges.has(address)) out.unknownLogs++;
          continue;
        }
        for (const activity of decoded) {
          if (contracts && !contracts.has(activity.contract)) continue;
          if (!activity.sale) {
            out.records.push(recordOf(activity, undefined, shared));
            continue;
          }
          const price = await this.setup.priceOf(activity.sale, answer);
          const row = recordOf(activity, price, shared);
          out.records.push(row);
          // Priced as ETH before the range's first feed answer: the commit prices it (pricing.ts).
          if (price.pending) out.unpriced.push({ row, ...price.pending });
        }
      }
    }
  }

  /** The transactions of the sales whose venue reads them (Blur v2's taker, a CryptoPunks bid's price). */
  private async loadTransactions(transactions: Transaction[]): Promise<void> {
    const wanted = new Set<string>();
    for (const tx of transactions) {
      for (const { log } of tx.sales) {
        const topic = topic0(log) ?? "";
        if (this.setup.venues.byTopic.get(topic)?.needsTransaction?.(topic))
          wanted.add(log.transactionHash.toLowerCase());
      }
    }
    if (wanted.size > 0) await this.setup.loadTransactions(wanted);
  }
}

/** A log's `blockTimestamp` as seconds; null when it has none usable (a quantity below 2^52). */
function timestampOf(value: unknown): number | null {
  if (typeof value !== "string" || !/^0x[0-9a-f]{1,13}$/i.test(value)) return null;
  return hexToNumber(value);
}

/** Logs sorted by (block, log index), for a node that did not answer them in that order (`decodeLogs` finds it). */
function sortInChainOrder(logs: RawLog[]): RawLog[] {
  return logs.sort(
    (a, b) =>
      hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) || hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
  );
}

/**
 * One string for equal ones within a range: the addresses and hashes repeated across its records (a contract, a
 * busy wallet, the block and transaction of many logs) are then held once while the range waits for its commit,
 * instead of once per record, each also keeping alive the log field it was cut from.
 */
function sharedStrings(): (value: string) => string {
  const seen = new Map<string, string>();
  return (value) => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, value);
    return value;
  };
}
