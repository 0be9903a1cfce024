/**
 * Ingestion: follows an Ethereum JSON-RPC node into the index store.
 *
 * The work comes in block ranges: `eth_getLogs` for every NFT transfer topic and every marketplace topic of the
 * venue table (venues/index.ts; the range is sized to the density of logs seen, shrinks when the provider refuses
 * it, using its hint when it gives one, and grows again on success), decoded a slice of logs at a time as it is
 * parsed, then one batch of block headers for the timestamps and, when a venue needs them (Blur v2's taker is the
 * sender), one batch of the range's transactions, cached. While catching up,
 * `concurrency` ranges are read at once (one shared 429 backoff); they are committed strictly in block order, each
 * in one transaction together with the cursor, so a crash or an abort resumes exactly where it stopped and a
 * re-run inserts nothing twice. At the head one range is read at a time. One process writes an index at a time
 * (the store's writer lock); others wait to take over.
 *
 * Reorgs: the hash of every block that got records (and of every range end) is kept. A range whose first block
 * does not extend the stored tip, or a tip whose hash changed, means a reorganisation: stored hashes are
 * compared with the chain, newest first, down to the common ancestor, and everything above it is deleted and
 * indexed again. `safeDepth` additionally keeps the index that many blocks behind the head.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Config, defaultConfig } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import type { WriterLock } from "../../db/database.js";
import {
  blocksToCheck,
  type Cut,
  type Header,
  judge,
  KNOWN_CAPS,
  LagWait,
  type NotYet,
  settle,
  Watch,
} from "./completeness.js";
import {
  type Activity,
  decodeAnswer,
  decodeTransfer,
  formatUnits,
  MAINNET_ETH_TOKENS,
  type RawLog,
  TOPIC,
  topic0,
} from "./decode.js";
import { rangeRefusal } from "./provider-errors.js";
import { LOGS_PER_RANGE, RangeSizer } from "./range-sizer.js";
import type { ResultSlices } from "./result-slices.js";
import { hexToNumber, RangeTooSlow, RPC_UPSTREAM, RpcAnswerTooLarge, RpcClient, RpcError, toHex } from "./rpc.js";
import { type ActivityRow, type Checkpoint, IndexStore, type PriceAnswer } from "./store.js";
import { MAINNET_SEAPORTS, type TransactionInfo, type Venue, type VenueTable, venueTable } from "./venues/index.js";

export interface IndexChainOptions {
  /** The Ethereum JSON-RPC endpoint. */
  rpcUrl: string;
  /** The index: an SQLite file (created when missing) or a `postgres://` URL. */
  dbPath: string;
  /** Index only these NFT contracts (cheap: the node filters by address). Default: the whole chain. */
  contracts?: string[];
  /** First block of a new index (ignored when resuming below it). Default 0. */
  fromBlock?: number;
  /** Keep polling for new blocks until `signal` aborts; otherwise stop at the head. */
  follow: boolean;
  /** Stay this many blocks behind the head. Default 0 (reorgs are then rolled back by parent hash). */
  safeDepth?: number;
  /** Address of a Chainlink-style ETH/USD aggregator emitting `AnswerUpdated` on the same chain. */
  priceFeed?: string;
  /** Seaport exchange addresses besides the mainnet 1.1/1.4/1.5/1.6 ones. */
  seaport?: string[];
  /** ERC-20 tokens worth one ETH (priced by the feed) besides mainnet WETH and Blur Pool. */
  ethTokens?: string[];
  signal?: AbortSignal;
  onProgress?: (p: IndexProgress) => void;
  /**
   * `waiting`: another indexer is writing this index and this one waits to take over (called once);
   * `writing`: this one now holds the index's writer lock.
   */
  onWriter?: (state: "waiting" | "writing") => void;
  /** Wait between polls when following the head. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Largest `eth_getLogs` range in blocks. Default 2000. */
  maxRange?: number;
  /**
   * Block ranges read at once while catching up (committed in block order all the same). Default 4; following
   * the head reads one range at a time.
   */
  concurrency?: number;
  /** Timeouts, retries and proxy of the RPC calls. Default: the process configuration. */
  config?: Config;
  /**
   * What the provider made the indexer wait for, as it happens: throttling and how long, a batch refusal, a block
   * whose logs are not complete yet.
   */
  onNotice?: (message: string) => void;
}

export interface IndexChainResult {
  /** The last block fully in the index. */
  lastBlock: number;
  /** Records this call wrote. */
  records: number;
  /**
   * Logs this call read from known exchanges (and ERC-2309 ranges beyond the cap) that gave no record: a bundle,
   * a swap, a malformed event. Counted so that nothing is dropped silently.
   */
  unknownLogs: number;
}

export interface IndexProgress {
  block: number;
  head: number;
  records: number;
  unknownLogs: number;
}

const HEADER_BATCH = 100;
/** Logs parsed at a time from an `eth_getLogs` answer (result-slices.ts): they are decoded before the next ones. */
const LOG_SLICE = 1_000;
/**
 * Logs of one transaction kept for the marketplace decoders while it goes on (sweeps hold a few hundred); a
 * longer one holding a sale has its logs read again from the answer at the end.
 */
const TRANSACTION_LOGS = 2_000;
/** Transactions remembered between ranges (a sweep's logs may straddle a range boundary only in theory). */
const TRANSACTION_CACHE = 10_000;
const NFT_TOPICS: string[] = [TOPIC.transfer, TOPIC.transferSingle, TOPIC.transferBatch, TOPIC.consecutiveTransfer];
const DEFAULT_CONCURRENCY = 4;
/** Beyond any log index: "the end of the block" in a (block, log) position. */
const MAX_LOG_INDEX = 2 ** 31 - 1;

/**
 * A log answer larger than this (about 14,000 logs) is cut off unread and its range read again in pieces sized
 * from the announced length: where a chain turns dense within one range. A single block is read whole.
 */
const MAX_LOG_ANSWER_BYTES = 8 * 2 ** 20;
/**
 * Logs expected in ranges read but not yet committed, beyond which no further range starts (the next one in line
 * always does): over blocks denser than LOGS_PER_RANGE, fewer ranges are read at once than `concurrency`.
 */
const LOGS_IN_FLIGHT = 2 * LOGS_PER_RANGE;
/** Blocks of the first range. */
const FIRST_RANGE = 1;
/** A range the provider refused, or planned larger than the density now known allows: read again in pieces. */
const REFUSED = Symbol("refused");
/** A range planned as sparse whose last block looks dense: read again as the blocks before it, then that block. */
const DENSE_END = Symbol("dense end");
/**
 * Bits set, of a block header's 2048-bit `logsBloom`, from which the block is taken as dense: at 3 bits per
 * address or topic, 2040 bits are about 3,500 distinct ones (a few hundred logs leave most of the bloom clear).
 */
const DENSE_BLOOM_BITS = 2040;
type ReadOutcome = ReadRange | typeof REFUSED | typeof DENSE_END | Cut | NotYet | undefined;

/** One range read (possibly ahead of the commit cursor), ready to commit. */
interface ReadRange {
  from: number;
  to: number;
  headers: Map<number, Header>;
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  /** Logs of known exchanges that gave no record (counted when the range is committed). */
  unknownLogs: number;
}

/** What an `eth_getLogs` answer decodes to, before the headers are read. */
interface Decoded {
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  unknownLogs: number;
  /** Logs in the answer, removed ones included: the density the next ranges are sized by. */
  logs: number;
  /** The hash of each block the logs came from, lower case. */
  blocks: Map<number, string>;
  /** Some block's logs came with two different hashes (the chain moved during the read). */
  mixed: boolean;
}

const newDecoded = (): Decoded => ({
  records: [],
  answers: [],
  unpriced: [],
  unknownLogs: 0,
  logs: 0,
  blocks: new Map(),
  mixed: false,
});

/** One transaction's logs as the decoding meets them. */
interface Transaction {
  hash: string;
  /** All its logs, for the venue decoders; undefined once there are more than TRANSACTION_LOGS. */
  logs: RawLog[] | undefined;
  /** Its marketplace logs, with the feed's answer in force at each. */
  sales: { log: RawLog; address: string; answer: bigint | undefined; venue: Venue }[];
}

/** A sale priced as ETH whose USD rate is the feed answer in force before its range. */
interface Unpriced {
  row: ActivityRow;
  amount: bigint;
  decimals: number;
}

export async function indexChain(options: IndexChainOptions): Promise<IndexChainResult> {
  const store = await IndexStore.open(options.dbPath);
  try {
    // One writer per index: other indexers of the same index wait here and take over when it stops or dies.
    let lock: WriterLock;
    try {
      lock = await store.db.lockWriter("index", {
        signal: options.signal,
        onWait: () => options.onWriter?.("waiting"),
      });
    } catch (err) {
      if (options.signal?.aborted) return { lastBlock: (await store.lastBlock()) ?? -1, records: 0, unknownLogs: 0 };
      throw err;
    }
    try {
      options.onWriter?.("writing");
      return await new Indexer(options, store).run();
    } finally {
      await lock.release();
    }
  } finally {
    await store.close();
  }
}

class Indexer {
  private readonly rpc: RpcClient;
  private readonly contracts: Set<string> | undefined;
  private readonly venues: VenueTable;
  private readonly ethTokens: Set<string>;
  private readonly feed: string | undefined;
  private readonly safeDepth: number;
  private readonly maxRange: number;
  /** How many blocks the next range spans (range-sizer.ts). */
  private readonly sizer: RangeSizer;
  /** What `eth_getLogs` asks for, to check answers against the blocks' blooms. */
  private readonly watch: Watch;
  private readonly topics: string[];
  private readonly addresses: string[] | undefined;
  /** Waits on blocks the node does not show complete yet (completeness.ts). */
  private readonly lag: LagWait;
  private readonly concurrency: number;
  private readonly decimals = new Map<string, Promise<number>>();
  private written = 0;
  private noted = { head: -1, at: 0 };
  private unknownLogs = 0;
  private readonly transactions = new Map<string, TransactionInfo | null>();
  /** Ranges in a row whose logs and headers disagreed. */
  private inconsistent = 0;
  private feedDecimals = 8;

  constructor(
    private readonly options: IndexChainOptions,
    private readonly store: IndexStore,
  ) {
    const lower = (list: string[] | undefined) => list?.map((a) => a.toLowerCase());
    this.contracts = options.contracts?.length ? new Set(lower(options.contracts)) : undefined;
    this.venues = venueTable([...MAINNET_SEAPORTS, ...(lower(options.seaport) ?? [])]);
    this.ethTokens = new Set([...MAINNET_ETH_TOKENS, ...(lower(options.ethTokens) ?? [])]);
    this.feed = options.priceFeed?.toLowerCase();
    this.safeDepth = options.safeDepth ?? 0;
    this.maxRange = Math.max(1, options.maxRange ?? 2000);
    // Start at one block and double over sparse blocks, since a dense first range is read before it can shrink
    // (starting at 10 blocks saved the 100 ms-latency backfill a few doublings but, reading 4 ranges at once
    // into 10,000-log blocks, cost the 1,000,000-event index 30-45 MiB more peak RSS).
    this.sizer = new RangeSizer(this.maxRange, FIRST_RANGE);
    this.topics = [...NFT_TOPICS, ...this.venues.topics, ...(this.feed ? [TOPIC.answerUpdated] : [])];
    this.addresses = this.contracts
      ? [...this.contracts, ...this.venues.exchanges, ...(this.feed ? [this.feed] : [])]
      : undefined;
    this.watch = new Watch(this.topics, this.addresses);
    this.concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    const config = options.config ?? defaultConfig();
    this.rpc = new RpcClient(options.rpcUrl, {
      pool: config.pool,
      timeoutMs: config.indexRpc.timeoutMs,
      retry: config.indexRpc.retry,
      // A follower never stops for throttling alone: it waits as long as the provider throttles.
      throttleBudgetMs: options.follow ? Number.POSITIVE_INFINITY : config.indexRpc.throttleBudgetMs,
      onNotice: options.onNotice,
      signal: options.signal,
    });
    this.lag = new LagWait(this.rpc.origin, config.indexRpc.lagBudgetMs, options.onNotice, options.signal);
  }

  async run(): Promise<IndexChainResult> {
    const { signal } = this.options;
    try {
      await this.checkScope();
      if (this.feed) this.feedDecimals = await this.decimalsOf(this.feed, 8);
      let head = -1;
      while (!signal?.aborted) {
        const next = await this.nextBlock();
        if (next > head - this.safeDepth) {
          head = hexToNumber(await this.rpc.call<string>("eth_blockNumber", []));
          await this.noteHead(head);
          if (await this.tipReorged()) continue;
          if (next > head - this.safeDepth) {
            this.progress(next - 1, head);
            if (!this.options.follow) break;
            await sleep(this.options.pollIntervalMs ?? 1000, undefined, signal ? { signal } : undefined);
            continue;
          }
        }
        await this.catchUp(next, head - this.safeDepth, head);
      }
    } catch (err) {
      if (!signal?.aborted) throw toIndexError(err, this.rpc.origin);
    }
    return { lastBlock: (await this.nextBlock()) - 1, records: this.written, unknownLogs: this.unknownLogs };
  }

  private progress(block: number, head: number): void {
    this.options.onProgress?.({ block, head, records: this.written, unknownLogs: this.unknownLogs });
  }

  /** Records the head for readers' /healthz: when it moved, or once a second as a sign of life. */
  private async noteHead(head: number): Promise<void> {
    if (head === this.noted.head && Date.now() - this.noted.at < 1000) return;
    this.noted = { head, at: Date.now() };
    await this.store.noteHead(head);
  }

  /** An index built for one set of contracts cannot silently continue for another. */
  private async checkScope(): Promise<void> {
    const scope = this.contracts ? [...this.contracts].sort().join(",") : "*";
    const stored = await this.store.getMeta("scope");
    if (stored !== undefined && stored !== scope) {
      throw new ChainmailError(
        "INVALID_INPUT",
        `The index ${this.store.target} was built for contracts ${stored === "*" ? "(the whole chain)" : stored}, not ${scope === "*" ? "the whole chain" : scope}.`,
        { hint: "Use the same --contracts as before, or another --db.", details: { field: "contracts" } },
      );
    }
    if (stored === undefined) {
      await this.store.setMeta("scope", scope);
      await this.store.setMeta("first_block", String(this.options.fromBlock ?? 0));
    }
  }

  private async nextBlock(): Promise<number> {
    const last = await this.store.lastBlock();
    const first = this.options.fromBlock ?? 0;
    return last === undefined ? first : Math.max(last + 1, first);
  }

  /** Whether the stored tip left the canonical chain (then it has been rolled back). */
  private async tipReorged(): Promise<boolean> {
    const [tip] = await this.store.checkpoints(Number.MAX_SAFE_INTEGER, 1);
    if (!tip) return false;
    const header = await this.rpc.call<Header | null>("eth_getBlockByNumber", [toHex(tip.number), false]);
    // No header is "not there yet" (a lagging backend), which says nothing of a reorg.
    if (!header || header.hash.toLowerCase() === tip.hash) return false;
    return this.rollBack(tip.number);
  }

  /**
   * Walks stored hashes back from `below` to the newest one still on the chain and deletes what is above it; false
   * (nothing deleted) when the node has no header for a block on the way yet: it is looked at again later.
   */
  private async rollBack(below: number): Promise<boolean> {
    let from = below;
    for (;;) {
      const stored = await this.store.checkpoints(from, HEADER_BATCH);
      if (stored.length === 0) {
        await this.store.rollbackTo(Number((await this.store.getMeta("first_block")) ?? "0") - 1);
        return true;
      }
      const headers = await this.headers(stored.map((c) => c.number));
      const ancestor = stored.findIndex((c) => headers.get(c.number)?.hash.toLowerCase() === c.hash);
      const unknown = stored.slice(0, ancestor < 0 ? stored.length : ancestor).find((c) => !headers.has(c.number));
      if (unknown) {
        await this.lag.wait(unknown.number, "it answered null for the block's header", async () => below);
        return false;
      }
      if (ancestor >= 0) {
        await this.store.rollbackTo(stored[ancestor]!.number);
        return true;
      }
      from = stored[stored.length - 1]!.number - 1;
    }
  }

  /**
   * Indexes `[next, target]`: up to `concurrency` ranges are read at once (logs, headers, decoding) and committed
   * strictly in block order, each in one transaction with the cursor. A range the provider refuses is split into
   * smaller ones in its place. A reorg found at a commit, or a range read across a moving chain, drops what is in
   * flight; the caller then starts again from the cursor.
   */
  private async catchUp(next: number, target: number, head: number): Promise<void> {
    // Contiguous, in block order; the first `concurrency` are being read. Planned only as far as they are read,
    // so a range size learnt from a refusal applies to the next ones, and memory stays bounded.
    const queue: { from: number; to: number; read?: Promise<ReadOutcome> }[] = [];
    let planned = next;
    const fill = () => {
      while (queue.length < this.concurrency && planned <= target) {
        const to = Math.min(target, planned + this.sizer.size - 1);
        queue.push({ from: planned, to });
        planned = to + 1;
      }
      let room = LOGS_IN_FLIGHT;
      for (const slot of queue.slice(0, this.concurrency)) {
        const expected = (slot.to - slot.from + 1) * this.sizer.density;
        if (!slot.read) {
          if (expected > room && slot !== queue[0]) break;
          slot.read = this.readRange(slot.from, slot.to, head);
          slot.read.catch(() => {}); // seen when its turn comes, or dropped with the rest
        }
        room -= expected;
      }
    };
    try {
      for (fill(); queue.length > 0; fill()) {
        const slot = queue[0]!;
        const range = await slot.read!;
        // Stopped: ranges already read are not committed (the cursor stays where the abort found it).
        if (this.options.signal?.aborted) return;
        queue.shift();
        if (range === REFUSED) {
          // Read it again as ranges of the size the provider accepts, first in line.
          const pieces = [];
          for (let from = slot.from; from <= slot.to; from += this.sizer.size) {
            pieces.push({ from, to: Math.min(slot.to, from + this.sizer.size - 1) });
          }
          queue.unshift(...pieces);
          continue;
        }
        if (range === DENSE_END) {
          queue.unshift({ from: slot.from, to: slot.to - 1 }, { from: slot.to, to: slot.to });
          continue;
        }
        if (!range) return this.chainMoved(slot.from, slot.to);
        if ("cut" in range) {
          // Cut off silently: the blocks before the last one it reached, then that block on.
          queue.unshift(...(range.cut > slot.from ? [{ from: slot.from, to: range.cut - 1 }] : []), {
            from: range.cut,
            to: slot.to,
          });
          continue;
        }
        if ("said" in range) return this.lag.wait(range.block, range.said, async () => (await this.nextBlock()) - 1);
        this.inconsistent = 0;
        this.lag.complete();
        // The next reads start while this range commits: it holds its records now, no longer its logs.
        fill();
        if (!(await this.commit(range))) return;
        this.progress(range.to, head);
      }
    } finally {
      // Ranges read past a reorg or a failure are dropped, but not left running against a closing store.
      await Promise.allSettled(queue.map((slot) => slot.read));
    }
  }

  /** The chain moved under a read: read again, but not forever against a node that never agrees. */
  private async chainMoved(from: number, to: number): Promise<void> {
    if (++this.inconsistent > 10) {
      throw new ChainmailError(
        "UPSTREAM_BAD_RESPONSE",
        `The JSON-RPC node at ${this.rpc.origin} keeps answering logs that do not match its block hashes (blocks ${from}-${to}).`,
        {
          hint: "A load-balanced endpoint may mix nodes at different heads; use one node or a --safe-depth.",
          details: { upstream: RPC_UPSTREAM, from_block: from, to_block: to },
        },
      );
    }
    await sleep(100 * this.inconsistent, undefined, this.options.signal ? { signal: this.options.signal } : undefined);
  }

  /**
   * Reads `[from, to]`: the end's hash before the logs, the headers after them; undefined when they disagree
   * (the chain moved meanwhile), REFUSED when the provider refused the range (which then shrinks), DENSE_END when
   * its end block looks dense before any log is asked for.
   */
  private async readRange(from: number, to: number, head: number): Promise<ReadOutcome> {
    const before = await this.rpc.call<Header | null>("eth_getBlockByNumber", [toHex(to), false]);
    // `null` is "not there yet" (a backend behind the head another one announced), never "nothing there".
    if (!before) return { block: to, said: "it answered null for the block's header" };
    // A range sized before the density now known would have the node build an answer far larger than wanted, only
    // to have it cut off: it is planned again first. Where the chain turns dense after sparse blocks, the end
    // block's bloom (in the header read anyway) warns of that before the logs are asked for.
    if (from < to) {
      const expected = (to - from + 1) * this.sizer.density;
      if (expected > 2 * this.sizer.target) {
        this.sizer.replan();
        return REFUSED;
      }
      if (expected < LOGS_PER_RANGE / 2 && looksDense(before)) {
        this.sizer.denseAhead();
        return DENSE_END;
      }
    }
    const answer = await this.getLogs(from, to);
    if (answer === REFUSED) return REFUSED;
    if (answer === null) return { block: from, said: `it answered null for the logs of blocks ${from}-${to}` };
    let decoded = await this.decodeAnswer((size) => answer.slices(size));
    this.sizer.read(to - from + 1, decoded.logs);
    const shape = { from, to, logs: decoded.logs, blocks: decoded.blocks };
    const needed = [...new Set([from, to, ...decoded.blocks.keys(), ...blocksToCheck(shape, head)])];
    const headers = await this.headers(needed);
    const missing = needed.find((n) => !headers.has(n));
    if (missing !== undefined) return { block: missing, said: "it answered null for the block's header" };
    let consistent = !decoded.mixed && headers.get(to)?.hash === before.hash;
    for (const [number, hash] of decoded.blocks) {
      if (!consistent) break;
      consistent = headers.get(number)?.hash.toLowerCase() === hash;
    }
    // Logs of another block than the header names for their number: a reorg under the read, handled as one.
    if (!consistent) return undefined;
    const verdict = judge(shape, headers, this.watch, head, this.sizer.suspectCounts(KNOWN_CAPS));
    const settled = await settle(this.rpc, this.watch, verdict, headers, decoded.logs, () => answer.slices(LOG_SLICE));
    if (settled && "cut" in settled) this.sizer.cutAt(decoded.logs);
    if (settled && !Array.isArray(settled)) return settled;
    if (settled) decoded = await this.decodeAnswer(() => [settled]);
    // Records are decoded before the headers are read: their block's timestamp goes in now.
    let block = -1;
    let timestamp = 0;
    for (const record of decoded.records) {
      if (record.block_number !== block) {
        block = record.block_number;
        timestamp = hexToNumber(headers.get(block)!.timestamp);
      }
      record.timestamp = timestamp;
    }
    const { records, answers, unpriced, unknownLogs } = decoded;
    return { from, to, headers, records, answers, unpriced, unknownLogs };
  }

  /** An `eth_getLogs` answer decoded, in chain order whatever order the node answered in. */
  private async decodeAnswer(read: (size: number) => Iterable<unknown[]>): Promise<Decoded> {
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

  /** Commits a range read in parallel, after checking it extends the stored chain; false after a rollback. */
  private async commit(range: ReadRange): Promise<boolean> {
    const [last] = await this.store.checkpoints(range.from - 1, 1);
    const first = range.headers.get(range.from);
    if (last && last.number === range.from - 1 && first && first.parentHash.toLowerCase() !== last.hash) {
      await this.rollBack(range.from - 1);
      return false;
    }
    if (range.unpriced.length > 0) {
      // Sales before the range's first feed answer take the rate in force before the range, known only now.
      const rate = await this.store.answerAt(range.from - 1, MAX_LOG_INDEX);
      for (const { row, amount, decimals } of range.unpriced) row.price_usd = this.usd(amount, decimals, rate);
    }
    const blocks: Checkpoint[] = [...range.headers].map(([number, header]) => ({
      number,
      hash: header.hash.toLowerCase(),
    }));
    this.unknownLogs += range.unknownLogs;
    this.written += await this.store.commitRange({
      records: range.records,
      blocks,
      answers: range.answers,
      lastBlock: range.to,
    });
    return true;
  }

  /**
   * `eth_getLogs` over `[from, to]`; REFUSED when the provider refused the range's size, timed out on it or
   * answered HTTP 504 (it then shrinks); null when it answered `null` (not there yet).
   */
  private async getLogs(from: number, to: number): Promise<ResultSlices | null | typeof REFUSED> {
    const filter = {
      fromBlock: toHex(from),
      toBlock: toHex(to),
      topics: [this.topics],
      ...(this.addresses ? { address: this.addresses } : {}),
    };
    const size = to - from + 1;
    try {
      // One block cannot be split: it is read whole whatever its size or time.
      return await this.rpc.callSlices("eth_getLogs", [filter], {
        maxAnswerBytes: size > 1 ? MAX_LOG_ANSWER_BYTES : undefined,
        splittable: size > 1,
      });
    } catch (err) {
      if (!(err instanceof RpcError) || size <= 1) throw err;
      const refusal =
        err instanceof RangeTooSlow || err instanceof RpcAnswerTooLarge ? {} : rangeRefusal(err, from, size);
      if (!refusal) throw err;
      this.sizer.refused(size, err, refusal.blocks);
      return REFUSED;
    }
  }

  private async headers(numbers: number[]): Promise<Map<number, Header>> {
    const out = new Map<number, Header>();
    for (let i = 0; i < numbers.length; i += HEADER_BATCH) {
      const chunk = numbers.slice(i, i + HEADER_BATCH);
      const results = await this.rpc.batch(
        chunk.map((n) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] })),
      );
      results.forEach((header, j) => {
        if (header) out.set(chunk[j]!, header as Header);
      });
    }
    return out;
  }

  /**
   * Decodes an `eth_getLogs` answer a slice at a time, so that its logs die young: transfers and feed answers at
   * once, a marketplace log once all its transaction's logs are seen (the venue decoders read the whole sale).
   * False, with `out` half filled, when `checkOrder` finds the logs out of chain order.
   */
  private async decodeLogs(
    read: (size: number) => Iterable<unknown[]>,
    out: Decoded,
    checkOrder: boolean,
  ): Promise<boolean> {
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
    for (const slice of read(LOG_SLICE)) {
      for (const log of slice as RawLog[]) {
        out.logs++;
        if (log.removed) continue;
        if (log.blockNumber !== blockKey || log.blockHash !== hashKey) {
          // Logs come grouped by block: a block's number and hash are looked at once per run of its logs.
          const number = hexToNumber(log.blockNumber);
          if (checkOrder && number < block) return false;
          if (number !== block) lastIndex = -1;
          blockKey = log.blockNumber;
          hashKey = log.blockHash;
          block = number;
          const hash = hashKey.toLowerCase();
          const seen = out.blocks.get(number);
          if (seen !== undefined && seen !== hash) out.mixed = true;
          out.blocks.set(number, hash);
        }
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
        if (this.feed && address === this.feed && topic === TOPIC.answerUpdated) {
          const value = decodeAnswer(log);
          if (value !== undefined) {
            answer = value;
            out.answers.push({ block, log: index, answer: value });
          }
          continue;
        }
        const venue = this.venues.byTopic.get(topic);
        if (venue) {
          if (venue.addresses !== "any" && !venue.addresses.includes(address)) continue; // same topic, other contract
          group.sales.push({ log, address, answer, venue });
          continue;
        }
        if (this.contracts && !this.contracts.has(address)) continue;
        for (const activity of decodeTransfer(log, countSkipped)) out.records.push(row(activity, 0, shared));
      }
      // Between slices: the sales whose transactions ended in this one.
      if (complete.length > 0) {
        await this.decodeSales(complete, out);
        complete = [];
      }
    }
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
    await this.decodeSales(complete, out);
    return true;
  }

  /** The marketplace logs of whole transactions, into sale records (and unknown logs counted). */
  private async decodeSales(transactions: Transaction[], out: Decoded): Promise<void> {
    if (transactions.length === 0) return;
    await this.loadTransactions(transactions.flatMap((tx) => tx.sales.map((sale) => sale.log)));
    for (const tx of transactions) {
      for (const { log, address, answer, venue } of tx.sales) {
        const decoded = venue.decode(log, {
          logs: tx.logs ?? [],
          transaction: this.transactions.get(tx.hash) ?? undefined,
        });
        if (!decoded) {
          if (this.venues.exchanges.has(address)) out.unknownLogs++;
          continue;
        }
        for (const activity of decoded) {
          if (this.contracts && !this.contracts.has(activity.contract)) continue;
          out.records.push(activity.sale ? await this.saleRow(activity, 0, answer, out.unpriced) : row(activity, 0));
        }
      }
    }
  }

  /** The transactions of the logs whose venue reads them (Blur v2's taker, a CryptoPunks bid's price): one batch. */
  private async loadTransactions(logs: RawLog[]): Promise<void> {
    const wanted = new Set<string>();
    for (const log of logs) {
      const topic = topic0(log) ?? "";
      const hash = log.transactionHash.toLowerCase();
      if (this.venues.byTopic.get(topic)?.needsTransaction?.(topic) && !this.transactions.has(hash)) wanted.add(hash);
    }
    if (wanted.size === 0) return;
    if (this.transactions.size + wanted.size > TRANSACTION_CACHE) this.transactions.clear();
    const hashes = [...wanted];
    for (let i = 0; i < hashes.length; i += HEADER_BATCH) {
      const chunk = hashes.slice(i, i + HEADER_BATCH);
      const results = await this.rpc.batch(
        chunk.map((hash) => ({ method: "eth_getTransactionByHash", params: [hash] })),
      );
      results.forEach((tx, j) => {
        const info = tx as TransactionInfo | null;
        this.transactions.set(
          chunk[j]!,
          info ? { from: info.from, to: info.to ?? null, input: info.input ?? "0x", value: info.value ?? "0x0" } : null,
        );
      });
    }
  }

  /**
   * A sale's row. `answer` is the feed's answer in force; a sale priced as ETH before the range's first answer
   * joins `unpriced`, for the commit to price at the rate in force before the range.
   */
  private async saleRow(
    sale: Activity,
    timestamp: number,
    answer: bigint | undefined,
    unpriced: Unpriced[],
  ): Promise<ActivityRow> {
    const { currency, amount } = sale.sale!;
    const decimals = currency ? await this.decimalsOf(currency, 18) : 18;
    const record: ActivityRow = {
      ...row(sale, timestamp),
      marketplace: sale.sale!.marketplace,
      currency,
      // A price the chain does not state stays NULL (the record then carries no `price`): never a guess.
      price: amount === null ? null : formatUnits(amount, decimals),
      price_usd: null,
    };
    if (this.feed && amount !== null && (currency === null || this.ethTokens.has(currency))) {
      if (answer === undefined) unpriced.push({ row: record, amount, decimals });
      else record.price_usd = this.usd(amount, decimals, answer);
    }
    return record;
  }

  /** Exact USD value of an amount priced as ETH at a feed answer; null without an answer (never guessed). */
  private usd(amount: bigint, decimals: number, answer: bigint | undefined): string | null {
    return answer === undefined ? null : formatUnits(amount * answer, decimals + this.feedDecimals);
  }

  /** `decimals()` of a token or feed, cached in memory and in the store; `fallback` when the contract has none. */
  private decimalsOf(address: string, fallback: number): Promise<number> {
    let decimals = this.decimals.get(address);
    if (!decimals) {
      decimals = this.readDecimals(address, fallback);
      this.decimals.set(address, decimals);
      decimals.catch(() => this.decimals.delete(address));
    }
    return decimals;
  }

  private async readDecimals(address: string, fallback: number): Promise<number> {
    const known = await this.store.tokenDecimals(address);
    if (known !== undefined) return known;
    let decimals = fallback;
    try {
      const result = await this.rpc.call<string>("eth_call", [{ to: address, data: "0x313ce567" }, "latest"]);
      if (result && result !== "0x") decimals = hexToNumber(result);
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
    }
    if (!Number.isInteger(decimals) || decimals > 77) decimals = fallback;
    await this.store.setTokenDecimals(address, decimals);
    return decimals;
  }
}

/** Whether a header's `logsBloom` is (nearly) full; false when the node left it out. */
function looksDense(header: Header | null): boolean {
  const bloom = header?.logsBloom;
  if (typeof bloom !== "string" || bloom.length !== 2 + 512) return false;
  let bits = 0;
  for (let i = 2; i < bloom.length; i += 6) {
    let word = Number.parseInt(bloom.slice(i, i + 6), 16);
    for (; word; word &= word - 1) bits++;
  }
  return bits >= DENSE_BLOOM_BITS;
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

function row(a: Activity, timestamp: number, shared: (value: string) => string = (value) => value): ActivityRow {
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
    timestamp,
    contract_type: a.contractType,
    marketplace: null,
    currency: null,
    price: null,
    price_usd: null,
  };
}

function toIndexError(err: unknown, origin: string): unknown {
  if (err instanceof RpcError) {
    const said = `${err.method}: ${err.rpcMessage} (JSON-RPC code ${err.code}${err.status === 200 ? "" : `, HTTP ${err.status}`})`;
    const cap = err.method === "eth_getLogs" && rangeRefusal(err, 0, Number.POSITIVE_INFINITY) !== undefined;
    return new ChainmailError("UPSTREAM_REJECTED", `The JSON-RPC node at ${origin} refused ${said}.`, {
      hint: cap
        ? "It refuses even a single block's logs: its cap is below one block of this chain. Use an endpoint without such a cap (or a paid plan), or index fewer contracts (--contracts)."
        : "The node refused the request itself: check that it serves eth_getLogs and eth_getBlockByNumber for these blocks (an archive node for old blocks).",
      details: { upstream: RPC_UPSTREAM, rpc_code: err.code, method: err.method },
    });
  }
  return err;
}
