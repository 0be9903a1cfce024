/**
 * The index's calls to the JSON-RPC node, and the provider rules they follow: `eth_getLogs` over a range, its
 * answer or what the provider said instead as a fact (range-facts.ts: refused for its size, its time or its
 * answer's length, with the provider's words; not there yet), block headers and transactions in batches, a token's
 * `decimals()`. It sizes nothing: the planner learns from the facts (range-planner.ts). Retries, throttling, batch refusals and cut-off bodies are
 * rpc.ts's and rpc-retry.ts's; what a provider's refusal says, provider-errors.ts's.
 *
 * Headers read for ranges are kept (`rangeHeaders`) until the caller forgets them, so that a range read again in
 * pieces (refused, cut off, split) reads none twice; reorg handling reads them fresh (`headers`). Those the ranges
 * to come will need (the head's window) may be read ahead (`readAhead`), paced after every call needed now, so
 * that they spend the budget while logs are decoded and stored rather than after; a range that needs one still on
 * its way waits for it instead of reading it again.
 */
import {
  type Header,
  hexToNumber,
  isBeyondHead,
  RangeTooSlow,
  RpcAnswerTooLarge,
  type RpcClient,
  RpcError,
  rangeRefusal,
  toHex,
} from "../chain/index.js";
import type { LogsFact } from "./range-facts.js";
import type { TransactionInfo } from "./venues/index.js";

/** Headers or transactions asked for in one batch. */
export const BATCH = 100;
/**
 * A log answer larger than this (about 14,000 logs) is cut off unread and its range read again in pieces sized
 * from the announced length: where a chain turns dense within one range. A single block is read whole.
 */
const MAX_LOG_ANSWER_BYTES = 8 * 2 ** 20;
/** Transactions remembered between ranges (a sweep's logs may straddle a range boundary only in theory). */
const TRANSACTION_CACHE = 10_000;

/** What `eth_getLogs` asks for: the watched topics (any of them as topic 0), and the addresses when filtered. */
export interface LogFilter {
  topics: string[];
  addresses: string[] | undefined;
}

/** The `eth_getLogs` filter object for `[from, to]`. */
export function logsFilter(filter: LogFilter, from: number, to: number): Record<string, unknown> {
  return {
    fromBlock: toHex(from),
    toBlock: toHex(to),
    topics: [filter.topics],
    ...(filter.addresses ? { address: filter.addresses } : {}),
  };
}

export class Fetcher {
  private readonly transactions = new Map<string, TransactionInfo | null>();
  /** Headers read for ranges not yet committed (`rangeHeaders`), by number. */
  private readonly kept = new Map<number, Header>();
  /** Headers read ahead and not answered yet (`readAhead`), by number: undefined when the node had none. */
  private readonly ahead = new Map<number, Promise<Header | undefined>>();
  /** Changes when every kept header is forgotten: a read ahead answered after that keeps nothing. */
  private era = 0;

  constructor(
    readonly rpc: RpcClient,
    private readonly filter: LogFilter,
  ) {}

  /** The chain head's number. */
  async head(): Promise<number> {
    return hexToNumber(await this.rpc.call<string>("eth_blockNumber", []));
  }

  /**
   * The head: its header (`latest`), kept for the ranges that read it, so that one call tells the head and serves
   * its header. Its number alone (`eth_blockNumber`) where a node answers no `latest` header.
   */
  async latest(): Promise<number> {
    const header = await this.rpc.call<Header | null>("eth_getBlockByNumber", ["latest", false]);
    if (!header || typeof header.number !== "string") return this.head();
    const number = hexToNumber(header.number);
    if (!Number.isSafeInteger(number)) return this.head();
    this.kept.set(number, header);
    return number;
  }

  /** A header kept from `latest` or a range's read, if any. */
  keptHeader(number: number): Header | undefined {
    return this.kept.get(number);
  }

  /**
   * Headers of these blocks for a range's read: those kept are not read again, the others are read and kept. A
   * block the node has no header for (yet) is left out, and not kept.
   */
  async rangeHeaders(numbers: Iterable<number>): Promise<Map<number, Header>> {
    const out = new Map<number, Header>();
    const wanted = new Set<number>();
    const coming: Promise<void>[] = [];
    for (const n of numbers) {
      const known = this.kept.get(n);
      const soon = known ? undefined : this.ahead.get(n);
      if (known) out.set(n, known);
      else if (soon) coming.push(soon.then((header) => void (header ? out.set(n, header) : wanted.add(n))));
      else wanted.add(n);
    }
    await Promise.all(coming);
    for (const [n, header] of await this.headers([...wanted])) {
      this.kept.set(n, header);
      out.set(n, header);
    }
    return out;
  }

  /**
   * Reads ahead the headers of blocks that ranges read soon will need, at the pace left over by the calls needed
   * now, and keeps them. A block the node has no header for is not kept (its range asks again); a failure is its
   * range's to meet when it asks.
   */
  readAhead(numbers: readonly number[]): void {
    const wanted = numbers.filter((n) => !this.kept.has(n) && !this.ahead.has(n));
    if (wanted.length === 0) return;
    const era = this.era;
    const read = this.headers(wanted, true).catch(() => new Map<number, Header>());
    for (const n of wanted) {
      const one = read.then((headers) => {
        const header = headers.get(n);
        if (this.era !== era) return undefined;
        if (header) this.kept.set(n, header);
        this.ahead.delete(n);
        return header;
      });
      this.ahead.set(n, one);
    }
  }

  /** Forgets the headers kept for blocks up to `upTo` (committed), or all of them (the chain may have moved). */
  forgetHeaders(upTo = Number.POSITIVE_INFINITY): void {
    if (upTo === Number.POSITIVE_INFINITY) {
      this.kept.clear();
      this.ahead.clear();
      this.era++;
    } else for (const n of this.kept.keys()) if (n <= upTo) this.kept.delete(n);
  }

  /** One block's header; null when the node has none for it (yet). */
  header(number: number): Promise<Header | null> {
    return this.rpc.call<Header | null>("eth_getBlockByNumber", [toHex(number), false]);
  }

  /** Headers of these blocks, those the node has; `spare`: read ahead of need (paced after what is needed now). */
  async headers(numbers: number[], spare = false): Promise<Map<number, Header>> {
    const out = new Map<number, Header>();
    for (let i = 0; i < numbers.length; i += BATCH) {
      const chunk = numbers.slice(i, i + BATCH);
      const results = await this.rpc.batch(
        chunk.map((n) => ({ method: "eth_getBlockByNumber", params: [toHex(n), false] })),
        undefined,
        spare,
      );
      results.forEach((header, j) => {
        if (header) out.set(chunk[j]!, header as Header);
      });
    }
    return out;
  }

  /**
   * `eth_getLogs` over `[from, to]`: its answer; `refused` when the provider refused the range's size (with what
   * its words say: a cap, a smaller range that works), timed out on it or answered HTTP 504; `not yet` when it
   * answered `null` or that the blocks are beyond its head.
   */
  async logs(from: number, to: number): Promise<LogsFact> {
    const filter = logsFilter(this.filter, from, to);
    const size = to - from + 1;
    const notYet = (said: string): LogsFact => ({ kind: "not yet", block: from, said });
    try {
      // One block cannot be split: it is read whole whatever its size or time.
      const slices = await this.rpc.callSlices("eth_getLogs", [filter], {
        maxAnswerBytes: size > 1 ? MAX_LOG_ANSWER_BYTES : undefined,
        splittable: size > 1,
      });
      return slices === null
        ? notYet(`it answered null for the logs of blocks ${from}-${to}`)
        : { kind: "logs", slices };
    } catch (err) {
      if (err instanceof RpcError && isBeyondHead(err.rpcMessage)) {
        return notYet(`it answered null for the logs of blocks ${from}-${to}`);
      }
      if (!(err instanceof RpcError) || size <= 1) throw err;
      const refusal =
        err instanceof RangeTooSlow || err instanceof RpcAnswerTooLarge ? {} : rangeRefusal(err, from, size);
      if (!refusal) throw err;
      return { kind: "refused", blocks: size, error: err, refusal };
    }
  }

  /** Loads these transactions (one batch per BATCH), unless remembered from an earlier range. */
  async loadTransactions(hashes: ReadonlySet<string>): Promise<void> {
    const wanted = [...hashes].filter((hash) => !this.transactions.has(hash));
    if (wanted.length === 0) return;
    if (this.transactions.size + wanted.length > TRANSACTION_CACHE) this.transactions.clear();
    for (let i = 0; i < wanted.length; i += BATCH) {
      const chunk = wanted.slice(i, i + BATCH);
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

  /** A transaction `loadTransactions` loaded; undefined when the node had none. */
  transaction(hash: string): TransactionInfo | undefined {
    return this.transactions.get(hash) ?? undefined;
  }

  /** A contract's `decimals()`; undefined when it has none (or refuses the call). */
  readDecimals = async (address: string): Promise<number | undefined> => {
    try {
      const result = await this.rpc.call<string>("eth_call", [{ to: address, data: "0x313ce567" }, "latest"]);
      return result && result !== "0x" ? hexToNumber(result) : undefined;
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      return undefined;
    }
  };
}
