/**
 * Ingestion: follows an Ethereum JSON-RPC node into the index store.
 *
 * Each step takes one block range: `eth_getLogs` for every NFT transfer topic and every marketplace topic of the
 * venue table (venues/index.ts; the range shrinks when the provider refuses it, using its hint when it gives one,
 * and grows again on success), then one batch of block headers for the timestamps and, when a venue needs them
 * (Blur v2's taker is the sender), one batch of the range's transactions, cached. A range is committed in one transaction together with the cursor, so a crash or an
 * abort resumes exactly where it stopped and a re-run inserts nothing twice.
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
  type Activity,
  decodeAnswer,
  decodeTransfer,
  formatUnits,
  MAINNET_ETH_TOKENS,
  type RawLog,
  TOPIC,
  topic0,
} from "./decode.js";
import { hexToNumber, RPC_UPSTREAM, RpcClient, RpcError, toHex } from "./rpc.js";
import { type ActivityRow, type Checkpoint, IndexStore, type PriceAnswer } from "./store.js";
import { MAINNET_SEAPORTS, type TransactionInfo, type VenueTable, venueTable } from "./venues/index.js";

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
  /** Called once when another indexer is writing this index and this one waits to take over. */
  onWait?: () => void;
  /** Wait between polls when following the head. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Largest `eth_getLogs` range in blocks. Default 2000. */
  maxRange?: number;
  /** Timeouts, retries and proxy of the RPC calls. Default: the process configuration. */
  config?: Config;
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

interface Header {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}

const HEADER_BATCH = 100;
/** Transactions remembered between ranges (a sweep's logs may straddle a range boundary only in theory). */
const TRANSACTION_CACHE = 10_000;
const NFT_TOPICS: string[] = [TOPIC.transfer, TOPIC.transferSingle, TOPIC.transferBatch, TOPIC.consecutiveTransfer];

export async function indexChain(options: IndexChainOptions): Promise<IndexChainResult> {
  const store = await IndexStore.open(options.dbPath);
  try {
    // One writer per index: other indexers of the same index wait here and take over when it stops or dies.
    let lock: WriterLock;
    try {
      lock = await store.db.lockWriter("index", { signal: options.signal, onWait: options.onWait });
    } catch (err) {
      if (options.signal?.aborted) return { lastBlock: (await store.lastBlock()) ?? -1, records: 0, unknownLogs: 0 };
      throw err;
    }
    try {
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
  private range: number;
  private written = 0;
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
    this.range = Math.min(this.maxRange, 500);
    const config = options.config ?? defaultConfig();
    this.rpc = new RpcClient(options.rpcUrl, {
      dispatcher: config.dispatcher,
      timeoutMs: config.indexRpc.timeoutMs,
      retry: config.indexRpc.retry,
      signal: options.signal,
    });
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
          if (await this.tipReorged()) continue;
          if (next > head - this.safeDepth) {
            this.progress(next - 1, head);
            if (!this.options.follow) break;
            await sleep(this.options.pollIntervalMs ?? 1000, undefined, signal ? { signal } : undefined);
            continue;
          }
        }
        await this.step(next, head - this.safeDepth);
        this.progress((await this.nextBlock()) - 1, head);
      }
    } catch (err) {
      if (!signal?.aborted) throw toIndexError(err, this.rpc.origin);
    }
    return { lastBlock: (await this.nextBlock()) - 1, records: this.written, unknownLogs: this.unknownLogs };
  }

  private progress(block: number, head: number): void {
    this.options.onProgress?.({ block, head, records: this.written, unknownLogs: this.unknownLogs });
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
    if (header?.hash.toLowerCase() === tip.hash) return false;
    await this.rollBack(tip.number);
    return true;
  }

  /** Walks stored hashes back from `below` to the newest one still on the chain and deletes what is above it. */
  private async rollBack(below: number): Promise<void> {
    let from = below;
    for (;;) {
      const stored = await this.store.checkpoints(from, HEADER_BATCH);
      if (stored.length === 0) {
        await this.store.rollbackTo(Number((await this.store.getMeta("first_block")) ?? "0") - 1);
        return;
      }
      const headers = await this.headers(stored.map((c) => c.number));
      const ancestor = stored.find((c) => headers.get(c.number)?.hash.toLowerCase() === c.hash);
      if (ancestor) {
        await this.store.rollbackTo(ancestor.number);
        return;
      }
      from = stored[stored.length - 1]!.number - 1;
    }
  }

  /** Indexes `[next, …]` up to at most `target`: one committed range. */
  private async step(next: number, target: number): Promise<void> {
    const to = Math.min(target, next + this.range - 1);
    // The range end's hash before and after reading the logs: equal means the logs come from one chain.
    const before = await this.rpc.call<Header | null>("eth_getBlockByNumber", [toHex(to), false]);
    const logs = await this.getLogs(next, to);
    if (logs.to !== to) return; // the range shrank: start over, reading the end hash of the smaller range first
    const live = logs.logs.filter((log) => !log.removed);
    const blockNumbers = new Set<number>([next, to, ...live.map((log) => hexToNumber(log.blockNumber))]);
    const headers = await this.headers([...blockNumbers]);
    const [last] = await this.store.checkpoints(next - 1, 1);
    const first = headers.get(next);
    if (last && last.number === next - 1 && first && first.parentHash.toLowerCase() !== last.hash) {
      await this.rollBack(next - 1);
      return;
    }
    const end = headers.get(to);
    const consistent =
      before &&
      end &&
      before.hash === end.hash &&
      live.every(
        (log) => headers.get(hexToNumber(log.blockNumber))?.hash.toLowerCase() === log.blockHash.toLowerCase(),
      );
    if (!consistent) {
      // The chain moved under us: read the range again, but not forever against a node that never agrees.
      if (++this.inconsistent > 10) {
        throw new ChainmailError(
          "UPSTREAM_BAD_RESPONSE",
          `The JSON-RPC node at ${this.rpc.origin} keeps answering logs that do not match its block hashes (blocks ${next}-${to}).`,
          {
            hint: "A load-balanced endpoint may mix nodes at different heads; use one node or a --safe-depth.",
            details: { upstream: RPC_UPSTREAM, from_block: next, to_block: to },
          },
        );
      }
      await sleep(
        100 * this.inconsistent,
        undefined,
        this.options.signal ? { signal: this.options.signal } : undefined,
      );
      return;
    }
    this.inconsistent = 0;
    const { records, answers } = await this.decode(live, headers);
    const blocks: Checkpoint[] = [...headers].map(([number, header]) => ({ number, hash: header.hash.toLowerCase() }));
    this.written += await this.store.commitRange({ records, blocks, answers, lastBlock: to });
    this.range = Math.min(this.maxRange, Math.ceil(this.range * 1.5));
  }

  /** `eth_getLogs` over `[from, to]`, shrinking `to` while the provider refuses the range. */
  private async getLogs(from: number, to: number): Promise<{ logs: RawLog[]; to: number }> {
    const topics = [...NFT_TOPICS, ...this.venues.topics];
    if (this.feed) topics.push(TOPIC.answerUpdated);
    const address = this.contracts
      ? [...this.contracts, ...this.venues.exchanges, ...(this.feed ? [this.feed] : [])]
      : undefined;
    const filter = { fromBlock: toHex(from), toBlock: toHex(to), topics: [topics], ...(address ? { address } : {}) };
    try {
      return { logs: await this.rpc.call<RawLog[]>("eth_getLogs", [filter]), to };
    } catch (err) {
      if (!(err instanceof RpcError) || !isRangeRefusal(err)) throw err;
      const size = to - from + 1;
      if (size <= 1) throw err;
      const suggested = suggestedRange(err.rpcMessage, from);
      this.range = Math.max(1, Math.min(size - 1, suggested ?? Math.floor(size / 2)));
      return { logs: [], to: from + this.range - 1 };
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

  private async decode(logs: RawLog[], headers: Map<number, Header>) {
    const sorted = [...logs].sort(
      (a, b) =>
        hexToNumber(a.blockNumber) - hexToNumber(b.blockNumber) || hexToNumber(a.logIndex) - hexToNumber(b.logIndex),
    );
    const byTx = new Map<string, RawLog[]>();
    for (const log of sorted) {
      const hash = log.transactionHash.toLowerCase();
      const group = byTx.get(hash);
      if (group) group.push(log);
      else byTx.set(hash, [log]);
    }
    await this.loadTransactions(sorted);
    const records: ActivityRow[] = [];
    const answers: PriceAnswer[] = [];
    let answer =
      this.feed && sorted[0]
        ? await this.store.answerAt(hexToNumber(sorted[0].blockNumber) - 1, 2 ** 31 - 1)
        : undefined;
    const countSkipped = () => this.unknownLogs++;
    for (const log of sorted) {
      const address = log.address.toLowerCase();
      const topic = topic0(log) ?? "";
      const timestamp = hexToNumber(headers.get(hexToNumber(log.blockNumber))!.timestamp);
      if (this.feed && address === this.feed && topic === TOPIC.answerUpdated) {
        const value = decodeAnswer(log);
        if (value !== undefined) {
          answer = value;
          answers.push({ block: hexToNumber(log.blockNumber), log: hexToNumber(log.logIndex), answer: value });
        }
        continue;
      }
      const venue = this.venues.byTopic.get(topic);
      if (venue) {
        const known = this.venues.exchanges.has(address);
        if (venue.addresses !== "any" && !venue.addresses.includes(address)) continue; // same topic, other contract
        const hash = log.transactionHash.toLowerCase();
        const decoded = venue.decode(log, {
          logs: byTx.get(hash)!,
          transaction: this.transactions.get(hash) ?? undefined,
        });
        if (!decoded) {
          if (known) this.unknownLogs++;
          continue;
        }
        for (const activity of decoded) {
          if (this.contracts && !this.contracts.has(activity.contract)) continue;
          records.push(activity.sale ? await this.saleRow(activity, timestamp, answer) : row(activity, timestamp));
        }
        continue;
      }
      if (this.contracts && !this.contracts.has(address)) continue;
      for (const activity of decodeTransfer(log, countSkipped)) records.push(row(activity, timestamp));
    }
    return { records, answers };
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

  private async saleRow(sale: Activity, timestamp: number, answer: bigint | undefined): Promise<ActivityRow> {
    const { currency, amount } = sale.sale!;
    const decimals = currency ? await this.decimalsOf(currency, 18) : 18;
    const pricedAsEth = currency === null || this.ethTokens.has(currency);
    // A price the chain does not state stays NULL (the record then carries no `price`): never a guess.
    const usd =
      this.feed && pricedAsEth && answer !== undefined && amount !== null
        ? formatUnits(amount * answer, decimals + this.feedDecimals)
        : null;
    return {
      ...row(sale, timestamp),
      marketplace: sale.sale!.marketplace,
      currency,
      price: amount === null ? null : formatUnits(amount, decimals),
      price_usd: usd,
    };
  }

  /** `decimals()` of a token or feed, cached in the store; `fallback` when the contract has none. */
  private async decimalsOf(address: string, fallback: number): Promise<number> {
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

function row(a: Activity, timestamp: number): ActivityRow {
  return {
    block_number: a.blockNumber,
    log_index: a.logIndex,
    batch_index: a.batchIndex,
    kind: a.kind,
    contract: a.contract,
    token_id: a.tokenId,
    from_addr: a.from,
    to_addr: a.to,
    quantity: a.quantity,
    tx_hash: a.txHash,
    block_hash: a.blockHash,
    timestamp,
    contract_type: a.contractType ?? "", // "" = none (CryptoPunks); the column predates it and is NOT NULL
    marketplace: null,
    currency: null,
    price: null,
    price_usd: null,
  };
}

/** Provider answers meaning "this log range is too large" (Alchemy, Infura, QuickNode, Ankr, Cloudflare…). */
export function isRangeRefusal(err: RpcError): boolean {
  if (err.code === -32005 || err.status === 413) return true;
  return /range|too many|too large|limit|exceed|more than|results|response size|max/i.test(err.rpcMessage);
}

/** The range size a provider's message suggests, if any: `[0x1, 0x2]` ranges or "max 800 blocks"-style caps. */
export function suggestedRange(message: string, from: number): number | undefined {
  const pair = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(message);
  if (pair) {
    const end = hexToNumber(pair[2]!);
    if (end >= from) return end - from + 1;
  }
  const cap = /(\d[\d,]*)\s*blocks?\b|blocks?\D{0,20}?(\d[\d,]*)/i.exec(message);
  const value = cap ? Number((cap[1] ?? cap[2])!.replace(/,/g, "")) : Number.NaN;
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

function toIndexError(err: unknown, origin: string): unknown {
  if (err instanceof RpcError) {
    const said = `${err.method}: ${err.rpcMessage} (JSON-RPC code ${err.code})`;
    return new ChainmailError("UPSTREAM_REJECTED", `The JSON-RPC node at ${origin} refused ${said}.`, {
      hint: "Check --rpc and that the node serves eth_getLogs for the requested blocks.",
      details: { upstream: RPC_UPSTREAM, rpc_code: err.code, method: err.method },
    });
  }
  return err;
}
