/**
 * One block range read, ready to commit: the end block's header before the logs (to see the chain move under the
 * read), `eth_getLogs` decoded as it is parsed (log-decoder.ts), the headers of the blocks it needs after, the
 * answer checked complete against them (completeness.ts), and the records stamped with their blocks' times.
 * Anything else is an outcome for the caller to act on: a range to read in smaller pieces, a block the node does not
 * show complete yet, or a chain that moved.
 */
import {
  blocksToCheck,
  type Cut,
  type Header,
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
import { stampTimes } from "./record.js";
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
  headers: Map<number, Header>;
  records: ActivityRow[];
  answers: PriceAnswer[];
  unpriced: Unpriced[];
  /** Logs of known exchanges that gave no record (counted when the range is committed). */
  unknownLogs: number;
}

/**
 * What reading a range came to: read; REFUSED (read again in pieces the sizer now plans); DENSE_END; cut off
 * silently (`Cut`: read again as two); a block not complete yet (`NotYet`: read again after a pause); undefined when
 * the chain moved under the read.
 */
export type ReadOutcome = ReadRange | typeof REFUSED | typeof DENSE_END | Cut | NotYet | undefined;

export class RangeReader {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly decoder: LogDecoder,
    private readonly sizer: RangeSizer,
    private readonly watch: Watch,
    /** `--verify-head`, `--verify-rpc` (verify.ts): blocks near the head checked further, where asked. */
    private readonly verifier?: HeadVerifier | undefined,
  ) {}

  /** Reads `[from, to]` with the chain's head at `head` (blocks near it are checked one by one). */
  async read(from: number, to: number, head: number): Promise<ReadOutcome> {
    // Planned before the provider's cap was learnt from a range read at the same time: not asked, to be refused.
    if (!this.sizer.allows(to - from + 1)) return REFUSED;
    const before = await this.fetcher.header(to);
    // `null` is "not there yet" (a backend behind the head another one announced), never "nothing there".
    if (!before) return { block: to, said: "it answered null for the block's header" };
    // A range sized before the density now known would have the node build an answer far larger than wanted, only
    // to have it cut off: it is planned again first. Where the chain turns dense after sparse blocks, the end
    // block's bloom (in the header read anyway) warns of that before the logs are asked for.
    if (from < to) {
      if (!this.sizer.allows(to - from + 1)) return REFUSED;
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
    const answer = await this.fetcher.logs(from, to);
    if (answer === REFUSED) return REFUSED;
    if (answer === null) return { block: from, said: `it answered null for the logs of blocks ${from}-${to}` };
    let decoded = await this.decoder.decode((size) => answer.slices(size));
    this.sizer.read(to - from + 1, decoded.logs);
    const shape = { from, to, logs: decoded.logs, blocks: decoded.blocks };
    const needed = [...new Set([from, to, ...decoded.blocks.keys(), ...blocksToCheck(shape, head)])];
    const headers = await this.fetcher.headers(needed);
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
    const settled = await settle(this.fetcher.rpc, this.watch, verdict, headers, decoded.logs);
    if (settled && "cut" in settled) this.sizer.cutAt(decoded.logs);
    if (settled && !Array.isArray(settled)) return settled;
    if (settled) decoded = await this.decoder.decode(() => [settled]);
    const { blocks, perBlock } = decoded;
    const verified = await this.verifier?.check({ from, to, head, headers, blocks, perBlock });
    if (verified && !Array.isArray(verified)) return verified;
    if (verified) decoded = await this.decoder.decode(() => [verified]);
    // Records are decoded before the headers are read: their block's timestamp goes in now.
    stampTimes(decoded.records, headers);
    const { records, answers, unpriced, unknownLogs } = decoded;
    return { from, to, headers, records, answers, unpriced, unknownLogs };
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
