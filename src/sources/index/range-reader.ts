/**
 * One block range read, ready to commit: near the head, the headers of the blocks there before the logs (to see the
 * chain move under the read, and to check each block); `eth_getLogs` decoded as it is parsed (log-decoder.ts); the
 * headers the answer needs after (the tail of a long answer, where the provider may cut answers off silently), the
 * answer checked complete against them (completeness.ts); and the records stamped with their blocks' times, as the
 * logs carry them (`blockTimestamp`) or, for a block whose logs do not, from its header. Deep history with
 * timestamped logs, from a provider that refuses rather than cuts, reads no header at all. Anything else is an
 * outcome for the caller to act on: a range to read in smaller pieces, a block the node does not show complete yet,
 * or a chain that moved.
 */
import {
  blocksToCheck,
  type Cut,
  type Header,
  headWindow,
  judge,
  KNOWN_CAPS,
  type NotYet,
  settle,
  type Watch,
} from "./completeness.js";
import { type Fetcher, REFUSED } from "./fetcher.js";
import type { LogDecoder } from "./log-decoder.js";
import type { Unpriced } from "./pricing.js";
import { LOGS_PER_RANGE, type RangeSizer } from "./range-sizer.js";
import { stampTimes, timelessBlocks } from "./record.js";
import type { ActivityRow, PriceAnswer } from "./store.js";
import type { HeadVerifier } from "./verify.js";

/** A range planned as sparse whose last block looks dense: read again as the blocks before it, then that block. */
export const DENSE_END = Symbol("dense end");
/**
 * Bits set, of a block header's 2048-bit `logsBloom`, from which the block is taken as dense: at 3 bits per
 * address or topic, 2040 bits are about 3,500 distinct ones (a few hundred logs leave most of the bloom clear).
 */
const DENSE_BLOOM_BITS = 2040;

/** One range read (possibly ahead of the commit cursor), ready to commit. */
export interface ReadRange {
  from: number;
  to: number;
  /** The headers read for it (near the head, the tail checks, blocks whose logs carried no timestamp). */
  headers: Map<number, Header>;
  /** The hash of each block its logs came from, lower case. */
  blocks: ReadonlyMap<number, string>;
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  /** Logs of known exchanges that gave no record (counted when the range is committed). */
  unknownLogs: number;
}

/**
 * What reading a range came to: read; REFUSED (read again in pieces the sizer now plans); DENSE_END; a `Cut` (read
 * again as two: its answer was cut off silently, or the provider suggested the first part); a block not complete
 * yet (`NotYet`: read again after a pause); undefined when the chain moved under the read.
 */
export type ReadOutcome = ReadRange | typeof REFUSED | typeof DENSE_END | Cut | NotYet | undefined;

const noHeader = (block: number): NotYet => ({ block, said: "it answered null for the block's header" });

export class RangeReader {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly decoder: LogDecoder,
    private readonly sizer: RangeSizer,
    private readonly watch: Watch,
    /** Whether the provider may cut an answer off without an error (providers.ts), or has shown it does. */
    private readonly mayCut: () => boolean,
    /** `--verify-head`, `--verify-rpc` (verify.ts): blocks near the head checked further, where asked. */
    private readonly verifier?: HeadVerifier | undefined,
  ) {}

  /** Reads `[from, to]` with the chain's head at `head` (blocks near it are checked one by one). */
  async read(from: number, to: number, head: number): Promise<ReadOutcome> {
    // Planned before the provider's cap was learnt from a range read at the same time: not asked, to be refused.
    if (!this.sizer.allows(to - from + 1)) return REFUSED;
    // Near the head, the blocks' headers come first: logs of another block than these name were read across a
    // moving chain. `null` is "not there yet" (a backend behind the head another one announced), never "nothing".
    const window = headWindow(from, to, head);
    let headers = await this.fetcher.rangeHeaders(window);
    const absent = window.find((n) => !headers.has(n));
    if (absent !== undefined) return noHeader(absent);
    // A range sized before the density now known would have the node build an answer far larger than wanted, only
    // to have it cut off: it is planned again first. Where the chain turns dense after sparse blocks near the head,
    // the end block's bloom (read anyway) warns of that before the logs are asked for.
    if (from < to) {
      const expected = (to - from + 1) * this.sizer.density;
      if (expected > 2 * this.sizer.target) {
        this.sizer.replan();
        return REFUSED;
      }
      if (expected < LOGS_PER_RANGE / 2 && looksDense(headers.get(to))) {
        this.sizer.denseAhead();
        return DENSE_END;
      }
    }
    const answer = await this.fetcher.logs(from, to);
    if (answer === REFUSED) return REFUSED;
    if (answer === null) return { block: from, said: `it answered null for the logs of blocks ${from}-${to}` };
    if ("cut" in answer) return answer;
    let decoded = await this.decoder.decode((size) => answer.slices(size));
    this.sizer.read(to - from + 1, decoded.logs);
    const shape = { from, to, logs: decoded.logs, blocks: decoded.blocks };
    const mayCut = this.mayCut();
    const needed = [
      ...window,
      ...blocksToCheck(shape, head, mayCut),
      ...timelessBlocks(decoded.records, decoded.times),
    ];
    headers = await this.fetcher.rangeHeaders(needed);
    const missing = needed.find((n) => !headers.has(n));
    if (missing !== undefined) return noHeader(missing);
    let consistent = !decoded.mixed;
    for (const [number, hash] of decoded.blocks) {
      if (!consistent) break;
      const header = headers.get(number);
      consistent = !header || header.hash.toLowerCase() === hash;
    }
    // Logs of another block than the header names for their number: a reorg under the read, handled as one.
    if (!consistent) return undefined;
    // A count at a known cap says "cut" only of a provider that may cut: one that refuses over its cap answered it
    // whole (Alchemy's and Infura's suggested ranges hold up to their 10,000 logs).
    const suspectCounts = mayCut ? this.sizer.suspectCounts(KNOWN_CAPS) : new Set<number>();
    const verdict = judge(shape, headers, this.watch, head, suspectCounts, mayCut);
    if (verdict.kind === "at cap" && !headers.has(verdict.block)) {
      // Its receipts are checked against its header.
      headers = await this.fetcher.rangeHeaders([...headers.keys(), verdict.block]);
      if (!headers.has(verdict.block)) return noHeader(verdict.block);
    }
    const settled = await settle(this.fetcher.rpc, this.watch, verdict, headers, decoded.logs);
    if (settled && "cut" in settled) this.sizer.cutAt(decoded.logs);
    if (settled && !Array.isArray(settled)) return settled;
    if (settled) decoded = await this.decoder.decode(() => [settled]);
    const { blocks, perBlock } = decoded;
    const verified = await this.verifier?.check({ from, to, head, headers, blocks, perBlock });
    if (verified && !Array.isArray(verified)) return verified;
    if (verified) decoded = await this.decoder.decode(() => [verified]);
    if (settled || verified) {
      // Logs a check put in may come from blocks whose logs carry no timestamp: their headers tell.
      const timeless = timelessBlocks(decoded.records, decoded.times);
      if (timeless.size > 0) headers = await this.fetcher.rangeHeaders([...headers.keys(), ...timeless]);
      const lacking = [...timeless].find((n) => !headers.has(n));
      if (lacking !== undefined) return noHeader(lacking);
    }
    // Records are decoded before any header is read: their block's timestamp goes in now.
    stampTimes(decoded.records, decoded.times, headers);
    const { records, answers, unpriced, unknownLogs } = decoded;
    return { from, to, headers, blocks: decoded.blocks, records, answers, unpriced, unknownLogs };
  }
}

/** Whether a header's `logsBloom` is (nearly) full; false when the node left it out. */
function looksDense(header: Header | undefined): boolean {
  const bloom = header?.logsBloom;
  if (typeof bloom !== "string" || bloom.length !== 2 + 512) return false;
  let bits = 0;
  for (let i = 2; i < bloom.length; i += 6) {
    let word = Number.parseInt(bloom.slice(i, i + 6), 16);
    for (; word; word &= word - 1) bits++;
  }
  return bits >= DENSE_BLOOM_BITS;
}
