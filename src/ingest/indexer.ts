/**
 * Ingestion: follows an Ethereum JSON-RPC node into the index store. This file runs the job; each part of it is a
 * module of its own:
 * - range-planner.ts: which block ranges are read, `concurrency` at once while catching up, one at the head, sized
 *   by range-sizer.ts (to the density of logs and to what the provider refuses), which the planner alone changes;
 * - fetcher.ts: the calls to the node (through the chain folder's client: rpc.ts, rpc-retry.ts, provider-errors.ts);
 * - range-reader.ts: one range read: logs, headers, the answer checked complete (completeness.ts, bloom.ts);
 * - log-decoder.ts: logs → records (own-index/record.ts), through decode.ts and the venue decoders (venues/), no I/O;
 * - pricing.ts: a sale's price in its currency and in USD from the ETH/USD feed;
 * - reorg.ts: reorganisations and a chain moving under a read;
 * - own-index/store.ts: the index in SQLite or PostgreSQL.
 *
 * Ranges are committed strictly in block order, each in one transaction together with the cursor, so a crash or an
 * abort resumes exactly where it stopped and a re-run inserts nothing twice. One process writes an index at a time
 * (the store's writer lock); others wait to take over. `safeDepth` keeps the index that many blocks behind the head.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { RpcUsage } from "../chain/index.js";
import {
  type HeadMode,
  HeadWaiter,
  MAINNET_ETH_TOKENS,
  type Provider,
  providerOf,
  RPC_UPSTREAM,
  RpcClient,
  type RpcClientOptions,
  RpcError,
  rangeRefusal,
  subscriptionUrl,
} from "../chain/index.js";
import { type Config, defaultConfig } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import type { WriterLock } from "../db/database.js";
import { type Checkpoint, IndexStore } from "../sources/own-index/index.js";
import { LagWait, Watch } from "./completeness.js";
import { TOPIC } from "./decode.js";
import { Fetcher } from "./fetcher.js";
import { LogDecoder } from "./log-decoder.js";
import { Pricing } from "./pricing.js";
import type { ReadRange } from "./range-facts.js";
import { RangePlanner } from "./range-planner.js";
import { RangeReader } from "./range-reader.js";
import { type RangeSizer, sizerFor } from "./range-sizer.js";
import { Reorgs } from "./reorg.js";
import { MAINNET_SEAPORTS, venueTable } from "./venues/index.js";
import { checkVerifyOptions, HeadVerifier, type VerifyOptions } from "./verify.js";

export interface IndexChainOptions extends VerifyOptions {
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
  /**
   * Wait between polls when following the head. Default 1000 ms. Where the node offers `eth_subscribe` `newHeads`
   * over a WebSocket at the same address, a new head ends the wait at once (head-subscription.ts).
   */
  pollIntervalMs?: number;
  /** Follow the head by subscription where the node offers one. Default true. */
  subscribe?: boolean;
  /** How new heads are learnt while following: by subscription, or (the fallback) polling. Told on each change. */
  onHeadMode?: (mode: HeadMode) => void;
  /**
   * Largest `eth_getLogs` range in blocks. Default: the provider's rule (providers.ts: any range at Alchemy while
   * its answer holds at most 10K logs, 10,000 blocks at Infura and QuickNode), else 2000.
   */
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
  /** What the run spent at the JSON-RPC node: calls, units, throttled share, the pace it settled on. */
  rpc: RpcUsage;
}

export interface IndexProgress {
  block: number;
  head: number;
  records: number;
  unknownLogs: number;
  /** What was spent at the JSON-RPC node so far. */
  rpc: RpcUsage;
}

const NOTHING_SPENT: RpcUsage = {
  calls: {},
  unit: "requests",
  throttledShare: 0,
  stated: false,
  randomThrottling: false,
};

const NFT_TOPICS: string[] = [TOPIC.transfer, TOPIC.transferSingle, TOPIC.transferBatch, TOPIC.consecutiveTransfer];
const DEFAULT_CONCURRENCY = 4;

export async function indexChain(options: IndexChainOptions): Promise<IndexChainResult> {
  checkVerifyOptions(options);
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
      if (options.signal?.aborted) {
        return { lastBlock: (await store.lastBlock()) ?? -1, records: 0, unknownLogs: 0, rpc: NOTHING_SPENT };
      }
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

function rpcOptionsOf(options: IndexChainOptions, config: Config, provider: Provider): RpcClientOptions {
  return {
    pool: config.pool,
    timeoutMs: config.indexRpc.timeoutMs,
    retry: config.indexRpc.retry,
    // A follower never stops for throttling alone: it waits as long as the provider throttles.
    throttleBudgetMs: options.follow ? Number.POSITIVE_INFINITY : config.indexRpc.throttleBudgetMs,
    onNotice: options.onNotice,
    signal: options.signal,
    provider,
    unitsPerSecond: config.indexRpc.unitsPerSecond,
    requestsPerSecond: config.indexRpc.requestsPerSecond,
  };
}

/** One run of `indexChain`: its parts, and what it wrote. */
class Indexer {
  private readonly fetcher: Fetcher;
  private readonly reader: RangeReader;
  private readonly pricing: Pricing;
  private readonly reorgs: Reorgs;
  /** How many blocks the next range spans (range-sizer.ts): the planners' alone to change. */
  private readonly sizer: RangeSizer;
  /** Waits on blocks the node does not show complete yet (completeness.ts). */
  private readonly lag: LagWait;
  private readonly contracts: Set<string> | undefined;
  private readonly safeDepth: number;
  private readonly concurrency: number;
  private written = 0;
  private unknownLogs = 0;
  private noted = { head: -1, at: 0 };

  // Long on purpose: the one place the run's parts are built and wired to each other (client, fetcher, decoder,
  // pricing, verifier, reader), in the order they depend on each other; each line is one part.
  constructor(
    private readonly options: IndexChainOptions,
    private readonly store: IndexStore,
  ) {
    const lower = (list: string[] | undefined) => list?.map((a) => a.toLowerCase());
    const contracts = options.contracts?.length ? new Set(lower(options.contracts)) : undefined;
    const venues = venueTable([...MAINNET_SEAPORTS, ...(lower(options.seaport) ?? [])]);
    const feed = options.priceFeed?.toLowerCase();
    this.contracts = contracts;
    this.safeDepth = options.safeDepth ?? 0;
    this.concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    const config = options.config ?? defaultConfig();
    const provider = providerOf(config.indexRpc.provider, options.rpcUrl);
    // At a provider whose range rule is known, the first range is the largest it promises (read alone until the
    // density is known). Elsewhere, one block doubling over sparse blocks, since a dense first range is read before
    // it can shrink (starting at 10 blocks saved the 100 ms-latency backfill a few doublings but, reading 4 ranges
    // at once into 10,000-log blocks, cost the 1,000,000-event index 30-45 MiB more peak RSS).
    this.sizer = sizerFor(provider.range, options.maxRange);
    const topics = [...NFT_TOPICS, ...venues.topics, ...(feed ? [TOPIC.answerUpdated] : [])];
    const addresses = contracts ? [...contracts, ...venues.exchanges, ...(feed ? [feed] : [])] : undefined;
    const rpcOptions = rpcOptionsOf(options, config, provider);
    const rpc = new RpcClient(options.rpcUrl, rpcOptions);
    this.fetcher = new Fetcher(rpc, { topics, addresses });
    this.lag = new LagWait(rpc.origin, config.indexRpc.lagBudgetMs, options.onNotice, options.signal);
    const ethTokens = new Set([...MAINNET_ETH_TOKENS, ...(lower(options.ethTokens) ?? [])]);
    this.pricing = new Pricing(feed, ethTokens, store, this.fetcher.readDecimals);
    const decoder = new LogDecoder({
      venues,
      contracts,
      feed,
      loadTransactions: (hashes) => this.fetcher.loadTransactions(hashes),
      transaction: (hash) => this.fetcher.transaction(hash),
      priceOf: (sale, answer) => this.pricing.priceOf(sale, answer),
    });
    const watch = new Watch(topics, addresses);
    const verifier = HeadVerifier.of(options, {
      rpc,
      // The second endpoint is paced by its own provider's rules: the stated plan is the first endpoint's.
      client: (url) =>
        new RpcClient(url, {
          ...rpcOptions,
          provider: providerOf(undefined, url),
          unitsPerSecond: undefined,
          requestsPerSecond: undefined,
        }),
      watch,
      filter: { topics, addresses },
      headers: (numbers) => this.fetcher.headers(numbers),
      notice: options.onNotice,
    });
    // A provider that refuses answers over its cap (by its table, or as its words showed) never cuts one silently:
    // a long answer's tail needs no check until it shows otherwise.
    const mayCut = () => !(provider.refusesOverCap || this.sizer.refusesOverCap) || this.sizer.seenCut;
    this.reader = new RangeReader(this.fetcher, decoder, watch, this.sizer, mayCut, verifier);
    this.reorgs = new Reorgs(store, this.fetcher, this.lag, options.signal);
  }

  async run(): Promise<IndexChainResult> {
    const { signal } = this.options;
    const heads = this.headWaiter();
    try {
      await this.checkScope();
      await this.pricing.start();
      let head = -1;
      while (!signal?.aborted) {
        const next = await this.nextBlock();
        if (next > head - this.safeDepth) {
          // `--once` reads the head once, and stops when it has caught up with it.
          if (!this.options.follow && head >= 0) {
            this.progress(next - 1, head);
            break;
          }
          // The `latest` header tells the head and serves as its header (and the stored tip's check) too.
          head = await this.fetcher.latest();
          await this.noteHead(head);
          if (await this.reorgs.tipReorged(this.fetcher.keptHeader(head))) continue;
          if (next > head - this.safeDepth) {
            this.progress(next - 1, head);
            if (!this.options.follow) break;
            await heads.next(head);
            continue;
          }
        }
        await this.catchUp(next, head - this.safeDepth, head);
      }
    } catch (err) {
      if (!signal?.aborted) throw toIndexError(err, this.fetcher.rpc.origin);
    } finally {
      heads.close();
    }
    return {
      lastBlock: (await this.nextBlock()) - 1,
      records: this.written,
      unknownLogs: this.unknownLogs,
      rpc: this.fetcher.rpc.usage(),
    };
  }

  /** What a caught-up follower waits on: a new head by subscription, else the poll interval. */
  private headWaiter(): { next(head: number): Promise<void>; close(): void } {
    const { signal, pollIntervalMs = 1000 } = this.options;
    if (this.options.subscribe === false) {
      return {
        next: () => sleep(pollIntervalMs, undefined, signal ? { signal } : undefined).then(() => undefined),
        close: () => undefined,
      };
    }
    const url = (this.options.config ?? defaultConfig()).indexRpc.wsUrl ?? subscriptionUrl(this.options.rpcUrl);
    return new HeadWaiter(url, { pollIntervalMs, signal, onMode: this.options.onHeadMode });
  }

  private progress(block: number, head: number): void {
    this.options.onProgress?.({
      block,
      head,
      records: this.written,
      unknownLogs: this.unknownLogs,
      rpc: this.fetcher.rpc.usage(),
    });
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

  /**
   * Indexes `[next, target]`: ranges are read ahead (range-planner.ts) and committed strictly in block order. A
   * range to read again goes back first in line, in pieces. A reorg found at a commit, or a range read across a
   * moving chain, drops what is in flight; the caller then starts again from the cursor.
   */
  private async catchUp(next: number, target: number, head: number): Promise<void> {
    const plan = new RangePlanner(next, target, this.concurrency, this.sizer, (from, to, sparse) =>
      this.reader.read(from, to, head, sparse),
    );
    try {
      for (plan.fill(); ; plan.fill()) {
        const slot = plan.take();
        if (!slot) return;
        const fact = await slot.read;
        // Stopped: ranges already read are not committed (the cursor stays where the abort found it).
        if (this.options.signal?.aborted) return;
        switch (fact.kind) {
          case "refused":
          case "cut":
          case "dense end":
            // Read again first in line, in the pieces the planner decides.
            plan.again(slot, fact);
            continue;
          case "moved":
            return this.reorgs.chainMoved(slot.from, slot.to);
          case "not yet":
            return this.lag.wait(fact.block, fact.said, async () => (await this.nextBlock()) - 1);
        }
        const range = fact.range;
        this.reorgs.consistent();
        this.lag.complete();
        // The next reads start while this range commits: it holds its records now, no longer its logs.
        plan.fill();
        if (!(await this.commit(range))) return;
        this.progress(range.to, head);
      }
    } finally {
      // Ranges read past a reorg or a failure are dropped, but not left running against a closing store.
      plan.close();
      await Promise.allSettled(plan.reads());
      // Headers kept for the ranges read: the next step reads the chain afresh (it may have moved), memory bounded.
      this.fetcher.forgetHeaders();
    }
  }

  /** Commits a range read ahead, after checking it extends the stored chain; false after a rollback. */
  private async commit(range: ReadRange): Promise<boolean> {
    if (!(await this.reorgs.extendsStored(range.from, range.headers.get(range.from)))) return false;
    // Sales before the range's first feed answer take the rate in force before the range, known only now.
    await this.pricing.priceBefore(range.from, range.unpriced);
    // The blocks of its headers and of its logs: the hashes a later reorg is traced back through.
    const hashes = new Map(range.blocks);
    for (const [number, header] of range.headers) hashes.set(number, header.hash.toLowerCase());
    const blocks: Checkpoint[] = [...hashes].map(([number, hash]) => ({ number, hash }));
    this.unknownLogs += range.unknownLogs;
    this.written += await this.store.commitRange({
      records: range.records,
      blocks,
      answers: range.answers,
      lastBlock: range.to,
    });
    this.fetcher.forgetHeaders(range.to);
    return true;
  }
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
