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
 *   log list (a bloom false positive is then known as such); anything else means "not complete yet".
 * Ponder (issue 1852, PR 1856) rejects an empty answer for a block whose bloom is not empty, in its realtime sync
 * only, and reads whole blocks there; this checks ranges as well, catches partial answers, and tells a bloom's
 * false positive from a lagging backend instead of waiting on it.
 */

import { type BloomBits, BloomBuilder, bloomBits, bloomHas, isBloom } from "./bloom.js";
import type { RawLog } from "./decode.js";
import { isUnknownBlock } from "./provider-errors.js";
import type { ResultSlices } from "./result-slices.js";
import { hexToNumber, type RpcClient, RpcError } from "./rpc.js";

/**
 * Counts at which a provider may have cut an answer off without saying so: the caps hosted providers and node
 * software document for `eth_getLogs` answers (1,000 for some load balancers' defaults, 10,000 at Alchemy and
 * Infura, 20,000 in erigon, reth and Nethermind's defaults).
 */
export const KNOWN_CAPS: readonly number[] = [1_000, 10_000, 20_000];
/** Answers of fewer logs are not taken for cut off by their length alone: no provider caps that low. */
export const CUT_FLOOR = 500;
/** Blocks this close to the head are checked one by one against their headers: where lagging backends bite. */
export const HEAD_CHECK_DEPTH = 64;

export interface Header {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  logsBloom?: string;
}

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

  /** Whether a block may hold a watched log; true when its header carries no usable bloom. */
  mayHold(header: Header): boolean {
    const bloom = header.logsBloom;
    if (!isBloom(bloom)) return true;
    if (!this.topicBits.some((bits) => bloomHas(bloom, bits))) return false;
    return !this.addressBits || this.addressBits.some((bits) => bloomHas(bloom, bits));
  }

  /** Whether `eth_getLogs` with the index's filter would answer this log. */
  matches(log: RawLog): boolean {
    const topic = log.topics[0]?.toLowerCase();
    if (topic === undefined || !this.topicSet.has(topic)) return false;
    return !this.addressSet || this.addressSet.has(log.address.toLowerCase());
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
  /** Cut off: read again from `at` (the last block it reached) on, apart from the blocks before it. */
  | { kind: "cut"; at: number }
  /** One block whose answer sits at a cap: only reading it whole tells. */
  | { kind: "at cap"; block: number }
  /** Blocks whose blooms may hold watched logs but which got none: each is read whole to tell. */
  | { kind: "suspects"; blocks: number[] };

/** The blocks whose headers `judge` needs besides the answer's own: near the head, and after a long answer's end. */
export function blocksToCheck(shape: AnswerShape, head: number): number[] {
  const out: number[] = [];
  const last = lastBlock(shape);
  const tailFrom = shape.logs >= CUT_FLOOR && last < shape.to ? last + 1 : Number.POSITIVE_INFINITY;
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
): Verdict {
  const last = lastBlock(shape);
  if (shape.logs >= CUT_FLOOR && last < shape.to) {
    for (let n = last + 1; n <= shape.to; n++) {
      const header = headers.get(n);
      if (header && watch.mayHold(header)) return { kind: "cut", at: last };
    }
  }
  if (suspectCounts.has(shape.logs)) {
    if (last > shape.from) return { kind: "cut", at: last };
    return { kind: "at cap", block: last };
  }
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

/**
 * Whether the logs a node answered for one block are all its logs: their bloom is the header's. (Cheaper than
 * `readWholeBlock` where every log of the block is watched; false where the block holds other logs too.)
 */
export function makesBloom(header: Header, slices: Iterable<unknown[]>): boolean {
  if (!isBloom(header.logsBloom)) return false;
  const bloom = new BloomBuilder();
  for (const slice of slices) for (const log of slice as RawLog[]) bloom.addLog(log);
  return bloom.hex() === header.logsBloom.toLowerCase();
}

/** A block read whole: its logs, or why the node's answer is not all of them (yet). */
export type WholeBlock = { logs: RawLog[] } | { incomplete: string };

/** Reads every log of a block by its hash and checks their bloom against the header's. */
export async function readWholeBlock(rpc: RpcClient, header: Header): Promise<WholeBlock> {
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
    if (log.blockHash?.toLowerCase() !== hash) {
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

/** Block number of a header. */
export const numberOf = (header: Header): number => hexToNumber(header.number);
