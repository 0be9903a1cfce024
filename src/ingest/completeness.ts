/**
 * Whether an `eth_getLogs` answer shows every watched log of its blocks, judged against the blocks' headers.
 *
 * Hosted providers answer from load-balanced backends that lag and from proxies that cap: a block `eth_blockNumber`
 * already announced may get `[]` or `null`, and a long answer may stop after its first N logs without an error. So:
 * - near the head, every block whose `logsBloom` may hold a watched log but which got none is a suspect;
 * - an answer of many logs that ends before its range does, while a later block's bloom may hold a watched log,
 *   was cut off, and so may be an answer whose count sits at a known cap;
 * - a suspect block is read again by its hash (EIP-234: a backend that lacks it answers "unknown block" rather
 *   than `[]`), all its logs, and their bloom is computed: equal to the header's, the answer is the block's whole
 *   log list (a bloom false positive is then known as such); anything else means "not complete yet";
 * - a single block whose answer sits at a cap is read from its receipts, which carry every log of their
 *   transactions whatever an `eth_getLogs` answer is capped at (a bloom cannot tell: a cut answer of thousands of
 *   logs fills it as the whole one does).
 * Ponder (issue 1852, PR 1856) rejects an empty answer for a block whose bloom is not empty, in its realtime sync
 * only, and reads whole blocks there; this checks ranges as well, catches partial answers, and tells a bloom's
 * false positive from a lagging backend instead of waiting on it.
 */

import { setTimeout as sleep } from "node:timers/promises";
import type { ResultSlices } from "../chain/index.js";
import {
  type BloomBits,
  BloomBuilder,
  bloomBits,
  bloomHas,
  type Header,
  hexToNumber,
  isBloom,
  isInvalidArgument,
  isMethodMissing,
  isUnknownBlock,
  RPC_UPSTREAM,
  type RpcClient,
  RpcError,
  seconds,
  toHex,
} from "../chain/index.js";
import { ChainmailError } from "../core/errors.js";
import type { RawLog } from "./decode.js";
import type { Cut, NotYet } from "./range-facts.js";

/**
 * Counts at which a provider may have cut an answer off without saying so: the caps hosted providers and node
 * software document for `eth_getLogs` answers (1,000 for some load balancers' defaults, 10,000 at Alchemy and
 * Infura, 20,000 in erigon, reth and Nethermind's defaults).
 */
export const KNOWN_CAPS: readonly number[] = [1_000, 10_000, 20_000];
/** Answers of fewer logs are not taken for cut off by their length alone: no provider caps that low. */
const CUT_FLOOR = 500;
/**
 * Blocks this close to the head are checked one by one against their headers: where lagging backends bite (and
 * where `--verify-head` and `--verify-rpc` check them further, verify.ts).
 */
export const HEAD_CHECK_DEPTH = 64;

/** A block header as `eth_getBlockByNumber(n, false)` answers it (rpc.ts). */
export type { Header };

/** What the index asks `eth_getLogs` for, as bloom bits and as a log test. */
export class Watch {
  private readonly topicBits: BloomBits[];
  private readonly addressBits: BloomBits[] | undefined;
  private readonly topicSet: Set<string>;
  private readonly addressSet: Set<string> | undefined;

  constructor(topics: readonly string[], addresses: readonly string[] | undefined) {
    this.topicSet = new Set(topics.map((t) => t.toLowerCase()));
    this.addressSet = addresses ? new Set(addresses.map((a) => a.toLowerCase())) : undefined;
    this.topicBits = [...this.topicSet].map(bloomBits);
    this.addressBits = this.addressSet ? [...this.addressSet].map(bloomBits) : undefined;
  }

  /**
   * Whether a block may hold a watched log. False when its header carries no usable bloom (some nodes leave it
   * out): such a block cannot be checked, and reading every block near the head whole instead would double the
   * calls of every provider that omits blooms.
   */
  mayHold(header: Header): boolean {
    const bloom = header.logsBloom;
    if (!isBloom(bloom)) return false;
    if (!this.topicBits.some((bits) => bloomHas(bloom, bits))) return false;
    return !this.addressBits || this.addressBits.some((bits) => bloomHas(bloom, bits));
  }

  /** Whether `eth_getLogs` with the index's filter would answer this log. */
  matches(log: RawLog): boolean {
    const topic: unknown = Array.isArray(log.topics) ? log.topics[0] : undefined;
    if (typeof topic !== "string" || !this.topicSet.has(topic.toLowerCase())) return false;
    return !this.addressSet || (typeof log.address === "string" && this.addressSet.has(log.address.toLowerCase()));
  }
}

/** An answer as decoded: its range, its logs, and the blocks they came from. */
export interface AnswerShape {
  from: number;
  to: number;
  /** Logs in the answer. */
  logs: number;
  /** Blocks with logs in the answer. */
  blocks: ReadonlyMap<number, string>;
}

export type Verdict =
  | { kind: "complete" }
  /** Cut off: read again as the blocks before `at` and those from `at` on (`at` is never the range's first). */
  | { kind: "cut"; at: number }
  /** One block whose answer sits at a cap: only its receipts tell. */
  | { kind: "at cap"; block: number }
  /** Blocks whose blooms may hold watched logs but which got none: each is read whole to tell. */
  | { kind: "suspects"; blocks: number[] };

/**
 * The blocks of `[from, to]` within HEAD_CHECK_DEPTH of the head: where lagging backends bite and reorgs happen,
 * their headers are read before the logs. None for a range deeper than that.
 */
export function headWindow(from: number, to: number, head: number): number[] {
  const out: number[] = [];
  for (let n = Math.max(from, head - HEAD_CHECK_DEPTH + 1); n <= to; n++) out.push(n);
  return out;
}

/**
 * The blocks whose headers `judge` needs besides the answer's own: near the head, and after a long answer's end
 * where the provider may cut answers off silently (`mayCut`: one that refuses answers over its cap never does).
 */
export function blocksToCheck(shape: AnswerShape, head: number, mayCut = true): number[] {
  const out: number[] = [];
  const last = lastBlock(shape);
  const tailFrom = mayCut && shape.logs >= CUT_FLOOR && last < shape.to ? last + 1 : Number.POSITIVE_INFINITY;
  const nearFrom = Math.max(shape.from, head - HEAD_CHECK_DEPTH + 1);
  for (let n = Math.min(tailFrom, nearFrom); n <= shape.to; n++) if (!shape.blocks.has(n)) out.push(n);
  return out;
}

/** Judges an answer against the headers of its range (those `blocksToCheck` named, at least). */
export function judge(
  shape: AnswerShape,
  headers: ReadonlyMap<number, Header>,
  watch: Watch,
  head: number,
  suspectCounts: ReadonlySet<number>,
  mayCut = true,
): Verdict {
  const last = lastBlock(shape);
  // Read again from the last block it reached, or, when that is the first, as the first block apart from the rest.
  const cut = { kind: "cut", at: Math.max(last, shape.from + 1) } as const;
  if (mayCut && shape.logs >= CUT_FLOOR && last < shape.to) {
    for (let n = last + 1; n <= shape.to; n++) {
      const header = headers.get(n);
      if (header && watch.mayHold(header)) return cut;
    }
  }
  if (suspectCounts.has(shape.logs)) return shape.to > shape.from ? cut : { kind: "at cap", block: last };
  const suspects: number[] = [];
  for (let n = Math.max(shape.from, head - HEAD_CHECK_DEPTH + 1); n <= shape.to; n++) {
    const header = headers.get(n);
    if (!shape.blocks.has(n) && header && watch.mayHold(header)) suspects.push(n);
  }
  return suspects.length > 0 ? { kind: "suspects", blocks: suspects } : { kind: "complete" };
}

function lastBlock(shape: AnswerShape): number {
  let last = shape.from - 1;
  for (const n of shape.blocks.keys()) last = Math.max(last, n);
  return last;
}

/** A block read whole: its logs, or why the node's answer is not all of them (yet). */
export type WholeBlock = { logs: RawLog[] } | { incomplete: string };

/** Reads every log of a block by its hash and checks their bloom against the header's. */
async function readWholeBlock(rpc: RpcClient, header: Header): Promise<WholeBlock> {
  let answer: ResultSlices | null;
  try {
    answer = await rpc.callSlices("eth_getLogs", [{ blockHash: header.hash }]);
  } catch (err) {
    if (err instanceof RpcError && isUnknownBlock(err.rpcMessage)) {
      return { incomplete: `it answered "${err.rpcMessage}" when asked by block hash` };
    }
    throw err;
  }
  if (answer === null) return { incomplete: "it answered null when asked by block hash" };
  const logs: RawLog[] = [];
  for (const slice of answer.slices(1_000)) logs.push(...(slice as RawLog[]));
  if (!isBloom(header.logsBloom)) return { logs };
  const bloom = new BloomBuilder();
  const hash = header.hash.toLowerCase();
  for (const log of logs) {
    if (typeof log.blockHash !== "string" || log.blockHash.toLowerCase() !== hash) {
      return { incomplete: `asked by block hash, it answered a log of block ${log.blockHash}` };
    }
    bloom.addLog(log);
  }
  if (bloom.hex() !== header.logsBloom.toLowerCase()) {
    return {
      incomplete: `its ${logs.length} logs of the block, asked by block hash, do not make the block's logsBloom`,
    };
  }
  return { logs };
}

/** Receipts asked for in one batch, where a node lacks `eth_getBlockReceipts`. */
const RECEIPTS_BATCH = 100;

/**
 * How an endpoint is asked for a block's receipts: `eth_getBlockReceipts` by hash, by number, or each transaction's
 * receipt. Learnt from its first read (the reads meanwhile wait for it) and kept: each later block then costs one
 * call, not a refused one first.
 */
type ReceiptsBy = "hash" | "number" | "transaction";
const receiptsBy = new WeakMap<RpcClient, ReceiptsBy>();
/** An endpoint's first receipts read, while it learns how they are asked: the reads at the same time wait for it. */
const firstRead = new WeakMap<RpcClient, Promise<unknown>>();

/**
 * The watched logs of a block, from its receipts. Receipts hold every log of their transaction, so they show a block
 * complete where its `eth_getLogs` answer stopped at a cap or left logs out; they must all be of this block, one per
 * transaction. Asked by the block's hash (`eth_getBlockReceipts`); by its number where the node takes only a number
 * there (-32602 to a hash): a receipt of another block than the header's then means the chain moved under the read,
 * and the block is read again; each transaction's receipt where the node lacks the method or takes neither. Any
 * other refusal stops the run, naming the block.
 */
export async function readReceipts(rpc: RpcClient, header: Header, watch: Watch): Promise<WholeBlock> {
  const first = firstRead.get(rpc);
  if (first) await first;
  else {
    const read = receiptsOf(rpc, header, watch);
    firstRead.set(
      rpc,
      read.then(
        () => undefined,
        () => undefined,
      ),
    );
    return read;
  }
  return receiptsOf(rpc, header, watch);
}

async function receiptsOf(rpc: RpcClient, header: Header, watch: Watch): Promise<WholeBlock> {
  const block = hexToNumber(header.number);
  let by = receiptsBy.get(rpc) ?? "hash";
  let receipts: unknown;
  for (;;) {
    if (by === "transaction" && !Array.isArray(header.transactions)) {
      return { incomplete: "its header lists no transactions to read the receipts of" };
    }
    try {
      receipts =
        by === "transaction"
          ? await transactionReceipts(rpc, header.transactions ?? [])
          : await rpc.call("eth_getBlockReceipts", [by === "hash" ? header.hash : toHex(block)]);
      receiptsBy.set(rpc, by);
      break;
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      if (isUnknownBlock(err.rpcMessage)) {
        return { incomplete: `it answered "${err.rpcMessage}" for the block's receipts` };
      }
      const refused = isInvalidArgument(err.code, err.rpcMessage);
      const perTransaction =
        by !== "transaction" &&
        (refused || isMethodMissing(err.code, err.rpcMessage)) &&
        Array.isArray(header.transactions);
      const next = by === "hash" && refused ? "number" : perTransaction ? "transaction" : undefined;
      if (next === undefined) throw receiptsRefused(rpc.origin, block, err);
      by = next;
    }
  }
  if (!Array.isArray(receipts)) {
    return { incomplete: `it answered ${receipts === null ? "null" : typeof receipts} for the block's receipts` };
  }
  const hash = header.hash.toLowerCase();
  const expected = Array.isArray(header.transactions) ? header.transactions.length : receipts.length;
  if (receipts.length !== expected) {
    return { incomplete: `it answered ${receipts.length} receipts for the block's ${expected} transactions` };
  }
  const logs: RawLog[] = [];
  for (const receipt of receipts as { blockHash?: unknown; logs?: unknown }[]) {
    const blockHash = receipt?.blockHash;
    if (typeof blockHash !== "string" || blockHash.toLowerCase() !== hash) {
      const which = typeof blockHash === "string" ? blockHash.slice(0, 66) : typeof blockHash;
      return {
        incomplete:
          by === "number"
            ? `asked by number, it answered receipts of block ${which}, not of the header's ${hash}: the chain moved under the read`
            : `asked for the block's receipts, it answered a receipt of block ${which}`,
      };
    }
    if (!Array.isArray(receipt.logs)) return { incomplete: "it answered a receipt without logs" };
    for (const log of receipt.logs as RawLog[]) if (watch.matches(log)) logs.push(log);
  }
  return { logs };
}

/** Each transaction's receipt, a batch at a time; null where the node has none. */
async function transactionReceipts(rpc: RpcClient, hashes: unknown[]): Promise<unknown[] | null> {
  const out: unknown[] = [];
  for (let i = 0; i < hashes.length; i += RECEIPTS_BATCH) {
    const chunk = hashes.slice(i, i + RECEIPTS_BATCH);
    const results = await rpc.batch(chunk.map((hash) => ({ method: "eth_getTransactionReceipt", params: [hash] })));
    if (results.some((receipt) => receipt === null)) return null;
    out.push(...results);
  }
  return out;
}

/** A node that refuses a block's receipts every way they can be asked: the run stops, naming the block. */
function receiptsRefused(origin: string, block: number, err: RpcError): ChainmailError {
  const said = `${err.method}: ${err.rpcMessage} (JSON-RPC code ${err.code}${err.status === 200 ? "" : `, HTTP ${err.status}`})`;
  return new ChainmailError(
    "UPSTREAM_REJECTED",
    `The JSON-RPC node at ${origin} refused the receipts of block ${block}: ${said}.`,
    {
      hint: "Receipts are read for a block whose logs answer sits at a provider's cap, and with --verify-head for blocks near the head: use an endpoint that serves eth_getBlockReceipts or eth_getTransactionReceipt.",
      details: { upstream: RPC_UPSTREAM, rpc_code: err.code, method: err.method, block },
    },
  );
}

/**
 * What a check of an answer came to: it stands as read; its range is to be read again (`Cut`, `NotYet`); or the
 * watched logs of a block read whole replace the answer's.
 */
export type Checked = { kind: "stands" } | { kind: "replaced"; logs: RawLog[] } | Cut | NotYet;

export const STANDS: Checked = { kind: "stands" };

/** Acts on an answer's verdict (`judge`). */
export async function settle(
  rpc: RpcClient,
  watch: Watch,
  verdict: Verdict,
  headers: ReadonlyMap<number, Header>,
  count: number,
): Promise<Checked> {
  if (verdict.kind === "complete") return STANDS;
  if (verdict.kind === "cut") return { kind: "cut", at: verdict.at };
  if (verdict.kind === "at cap") {
    const whole = await readReceipts(rpc, headers.get(verdict.block)!, watch);
    if ("incomplete" in whole) {
      return {
        kind: "not yet",
        block: verdict.block,
        said: `its answer stopped at ${count} logs, a known cap, and ${whole.incomplete}`,
      };
    }
    return whole.logs.length === count ? STANDS : { kind: "replaced", logs: whole.logs };
  }
  for (const number of verdict.blocks) {
    const whole = await readWholeBlock(rpc, headers.get(number)!);
    if ("incomplete" in whole) return { kind: "not yet", block: number, said: whole.incomplete };
    // A bloom's false positive holds no watched log; one that does was missed by the range's answer.
    const watched = whole.logs.filter((log) => watch.matches(log)).length;
    if (watched > 0)
      return { kind: "not yet", block: number, said: `the range's answer left out ${watched} logs the block holds` };
  }
  return STANDS;
}

/**
 * Waits on a block the node does not show complete yet (a lagging backend, a header not there yet): its range is
 * read again after a pause that grows (250 ms doubling to 10 s), until the budget is spent; then the run stops,
 * naming the block, what the node answered and the last block the index holds complete.
 */
export class LagWait {
  private lagging: { block: number; since: number; reads: number } | undefined;

  constructor(
    private readonly origin: string,
    private readonly budgetMs: number,
    private readonly notice: ((message: string) => void) | undefined,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async wait(block: number, said: string, lastComplete: () => Promise<number>): Promise<void> {
    const now = Date.now();
    if (this.lagging?.block !== block) this.lagging = { block, since: now, reads: 0 };
    const lagging = this.lagging;
    lagging.reads++;
    const waited = now - lagging.since;
    if (waited >= this.budgetMs) {
      const upTo = await lastComplete();
      throw new ChainmailError(
        "UPSTREAM_BAD_RESPONSE",
        `The JSON-RPC node at ${this.origin} has not shown the logs of block ${block} complete in ${seconds(waited)} (${lagging.reads} reads): ${said}. The index stops there, complete up to block ${upTo}.`,
        {
          hint: "A load-balanced endpoint may answer from a backend behind the head it announces: run again later, keep a few blocks behind the head (--safe-depth), use another endpoint, or allow a longer wait (INDEX_RPC_LAG_BUDGET_MS).",
          details: { upstream: RPC_UPSTREAM, block, last_block: upTo, provider_said: said, waited_ms: waited },
        },
      );
    }
    if (lagging.reads === 1 || lagging.reads % 10 === 0) {
      this.notice?.(`block ${block} is not complete at ${this.origin} yet (${said}): reading it again`);
    }
    const pause = Math.min(10_000, 250 * 2 ** Math.min(6, lagging.reads - 1), this.budgetMs - waited);
    await sleep(pause, undefined, this.signal ? { signal: this.signal } : undefined);
  }

  /** A range was committed: whatever lagged is complete now. */
  complete(): void {
    this.lagging = undefined;
  }
}
