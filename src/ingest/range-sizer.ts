/**
 * How many blocks the next `eth_getLogs` asks for: sized to the density of logs seen (about LOGS_PER_RANGE logs a
 * range), grown by doubling over sparse blocks, and shrunk by what the provider refuses.
 *
 * Where the provider's range rule is known (providers.ts), the first range is the largest it promises to serve
 * (Alchemy: any range while its answer holds at most 10K logs; Infura and QuickNode: 10,000 blocks), read alone
 * until a read shows the density, so that one collection's sparse history is one call or a few. A refusal that
 * suggests a working range for this request (Alchemy's "this block range should work: [0x…, 0x…]", Infura's
 * `data`) is read as that piece and then the rest (fetcher.ts), not as a cap on every range. One that states a cap
 * (QuickNode's "limited to a 10,000 range", Alchemy's free tier) is taken at its word and kept for the run. One
 * that says neither is halved, so that a working size is found in at most log2 steps, and growing back later
 * probes halfway between the size just read and the size refused, never straight back to what failed. An answer
 * cut off silently at a number of logs teaches that number: ranges are then planned to hold half of it.
 */

import type { LogRangeRule, RangeRefusal } from "../chain/index.js";
import { RangeTooSlow, RpcAnswerTooLarge, type RpcError } from "../chain/index.js";

/** Logs one `eth_getLogs` aims at (memory holds about `concurrency` × this many logs). */
export const LOGS_PER_RANGE = 5_000;
/** About the fewest bytes a log takes in an `eth_getLogs` answer (a 4-topic Transfer: ~560). */
const LOG_BYTES = 500;
/** Successful reads after which a size refused without a stated cap may be probed again. */
const PROBE_AFTER = 50;
/** Largest range where the provider states no rule: grown to by doubling from one block. */
export const DEFAULT_MAX_RANGE = 2_000;
/** "Any range" of a provider that caps only the logs of an answer (a safe integer however far it is added to). */
const ANY_RANGE = 2 ** 40;

/**
 * A sizer for a provider's range rule: the largest range it may ask for (`maxRange` when given, else the rule's)
 * and where it starts. Without a rule, one block doubling to DEFAULT_MAX_RANGE, as over a node of unknown limits.
 */
export function sizerFor(rule: LogRangeRule, maxRange?: number): RangeSizer {
  const largest = Math.max(
    1,
    maxRange ?? rule.maxBlocks ?? (rule.logs !== undefined ? ANY_RANGE : (rule.blocks ?? DEFAULT_MAX_RANGE)),
  );
  const promised = rule.maxBlocks ?? (rule.logs !== undefined ? ANY_RANGE : rule.blocks);
  if (promised === undefined) return new RangeSizer(largest, 1);
  return new RangeSizer(largest, Math.min(largest, promised), true);
}

/** What the sizer learnt of the provider's answers, read-only: what the range reader's checks go by. */
export interface AnswerCaps {
  /** The provider refused an answer for its count of logs: it refuses over its cap rather than cutting silently. */
  readonly refusesOverCap: boolean;
  /** The provider has shown that it cuts answers off silently. */
  readonly seenCut: boolean;
  /** Counts at which an answer may have been cut off silently: the known caps and any learned. */
  suspectCounts(known: readonly number[]): Set<number>;
}

/**
 * The range planner's (range-planner.ts), which alone changes it from the facts reads report (range-facts.ts);
 * others see it as `AnswerCaps`.
 */
export class RangeSizer implements AnswerCaps {
  /** Blocks of the next range. */
  size: number;
  private logsPerBlock = 0;
  /** The range never grows past this: a size refused recently, or the provider's stated cap. */
  private ceiling: number;
  /** The ceiling is the provider's stated cap. */
  private stated = false;
  /** The smallest size refused since the last probe: growth goes halfway towards it. */
  private refusedAt = Number.POSITIVE_INFINITY;
  private sinceRefusal = 0;
  /** Logs at which the provider was seen to cut an answer off silently. */
  private logCap = Number.POSITIVE_INFINITY;

  /** The size is a guess (see `probing`). */
  private guessing: boolean;
  private refusedOverCap = false;

  constructor(
    private readonly maxRange: number,
    first: number,
    /**
     * The provider's rule promises ranges up to `maxRange` (or states its refusals): `first` is read alone until
     * the density is known, and over sparse blocks the size leaps to what the density allows rather than doubling.
     */
    private readonly promised = false,
  ) {
    this.size = Math.min(maxRange, first);
    this.ceiling = maxRange;
    this.guessing = promised;
  }

  /** Logs per block in the last range read. */
  get density(): number {
    return this.logsPerBlock;
  }

  /**
   * The size is a guess, not learnt from a read: ranges are read one at a time (range-planner.ts) until a read
   * shows the density, so that a guess too large for a dense chain is refused once, not once per range in flight.
   */
  get probing(): boolean {
    return this.guessing;
  }

  /** The provider refused an answer for its count of logs: it refuses over its cap rather than cutting silently. */
  get refusesOverCap(): boolean {
    return this.refusedOverCap;
  }

  /** Logs a range aims at: LOGS_PER_RANGE, or half a silent cap once one is known. */
  get target(): number {
    return Math.max(1, Math.min(LOGS_PER_RANGE, Math.floor(this.logCap / 2)));
  }

  /**
   * Whether a range of `blocks` blocks may still be asked for: not past a size refused or stated since it was
   * planned (ranges read at once were planned before the first of them was refused).
   */
  allows(blocks: number): boolean {
    return blocks <= Math.max(1, this.ceiling);
  }

  /** After `logs` logs came back for `blocks` blocks: grow (not past the ceiling, nor the target at this density). */
  read(blocks: number, logs: number): void {
    this.guessing = false;
    if (++this.sinceRefusal >= PROBE_AFTER && !this.stated) {
      this.ceiling = this.maxRange;
      this.refusedAt = Number.POSITIVE_INFINITY;
    }
    this.logsPerBlock = logs / blocks;
    const dense = logs > 0 ? Math.floor((blocks * this.target) / logs) : Number.POSITIVE_INFINITY;
    // Doubling the size just read, not the current size that concurrent reads may have doubled already; after a
    // refusal, halfway to the size refused. A range smaller than the size (a piece of one read again, the end of
    // the chain) does not shrink it: only the density and the ceiling do.
    const grown =
      this.refusedAt !== Number.POSITIVE_INFINITY
        ? Math.floor((blocks + this.refusedAt) / 2)
        : this.promised
          ? this.ceiling
          : blocks * 2;
    this.size = Math.max(1, Math.min(this.ceiling, Math.max(blocks, grown, this.size), dense));
  }

  /**
   * The provider refused `blocks` blocks; `refusal`: what its words say. A suggested working range is not a cap:
   * the fetcher reads it as a piece and the rest, and the sizer only stops guessing until that piece is read.
   */
  refused(blocks: number, err: RpcError, refusal: RangeRefusal = {}): void {
    if (refusal.overLogCap) this.refusedOverCap = true;
    if (refusal.suggested) {
      if (refusal.cap !== undefined) this.capped(blocks, refusal.cap);
      this.guessing = true;
      return;
    }
    const stated = refusal.blocks;
    if (err instanceof RpcAnswerTooLarge) {
      // Only says this stretch is dense: as dense as its size says at ~500 bytes a log.
      const suggested = Math.floor((blocks * err.limit) / ((err.bytes ?? err.limit * 2) * 2));
      this.size = Math.max(1, Math.min(blocks - 1, this.size, suggested));
      this.logsPerBlock = Math.max(this.logsPerBlock, (err.bytes ?? err.limit) / (LOG_BYTES * blocks));
      return;
    }
    this.sinceRefusal = 0;
    if (stated !== undefined && !(err instanceof RangeTooSlow)) {
      this.capped(blocks, stated);
      return;
    }
    this.refusedAt = Math.min(this.refusedAt, blocks);
    this.ceiling = Math.min(this.ceiling, blocks - 1);
    this.size = Math.max(1, Math.min(this.size, Math.floor(blocks / 2)));
  }

  /** A cap the provider stated: taken at its word, not probed again (each probe costs a refusal per range in flight). */
  private capped(blocks: number, cap: number): void {
    this.sinceRefusal = 0;
    this.ceiling = Math.min(this.ceiling, cap);
    this.stated = true;
    this.size = Math.max(1, Math.min(blocks - 1, this.size, cap));
  }

  /** Whether the provider has shown that it cuts answers off silently. */
  get seenCut(): boolean {
    return Number.isFinite(this.logCap);
  }

  /** An answer of `logs` logs turned out cut off: plan ranges to hold half as many from now on. */
  cutAt(logs: number): void {
    this.logCap = Math.min(this.logCap, logs);
    this.size = Math.max(1, Math.min(this.size, Math.floor(this.target / Math.max(this.logsPerBlock, 1e-9))));
  }

  /** Counts at which an answer may have been cut off silently: the known caps and any learned here. */
  suspectCounts(known: readonly number[]): Set<number> {
    return new Set(Number.isFinite(this.logCap) ? [...known, this.logCap] : known);
  }

  /** Plans for a range that turned out denser than planned (its end block's bloom is full). */
  denseAhead(): void {
    this.logsPerBlock = Math.max(this.logsPerBlock, LOGS_PER_RANGE);
    this.size = 1;
  }

  /** Shrinks the next ranges to the density now known (a range planned before it was learnt is planned again). */
  replan(): void {
    this.size = Math.min(this.size, Math.max(1, Math.floor(this.target / this.logsPerBlock)));
  }
}
