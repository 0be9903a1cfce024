/**
 * How many blocks the next `eth_getLogs` asks for: sized to the density of logs seen (about LOGS_PER_RANGE logs a
 * range), grown by doubling over sparse blocks, and shrunk by what the provider refuses.
 *
 * A refusal that states a size (Alchemy's "this block range should work: [0x…, 0x…]", QuickNode's "limited to a
 * 10,000 range", …) is taken at its word and never probed again. One that does not is halved, so that a working
 * size is found in at most log2 steps, and growing back later probes halfway between the size just read and the
 * size refused, never straight back to what failed. An answer cut off silently at a number of
 * logs teaches that number: ranges are then planned to hold half of it.
 */
import { RangeTooSlow, RpcAnswerTooLarge, type RpcError } from "./rpc.js";

/** Logs one `eth_getLogs` aims at (memory holds about `concurrency` × this many logs). */
export const LOGS_PER_RANGE = 5_000;
/** About the fewest bytes a log takes in an `eth_getLogs` answer (a 4-topic Transfer: ~560). */
const LOG_BYTES = 500;
/** Successful reads after which a size refused without a stated cap may be probed again. */
const PROBE_AFTER = 50;

export class RangeSizer {
  /** Blocks of the next range. */
  size: number;
  /** Logs per block in the last range read. */
  density = 0;
  /** The range never grows past this: a size refused recently, or the provider's stated cap. */
  private ceiling: number;
  /** The ceiling is the provider's stated cap. */
  private stated = false;
  /** The smallest size refused since the last probe: growth goes halfway towards it. */
  private refusedAt = Number.POSITIVE_INFINITY;
  private sinceRefusal = 0;
  /** Logs at which the provider was seen to cut an answer off silently. */
  private logCap = Number.POSITIVE_INFINITY;

  constructor(
    private readonly maxRange: number,
    first: number,
  ) {
    this.size = Math.min(maxRange, first);
    this.ceiling = maxRange;
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
    if (++this.sinceRefusal >= PROBE_AFTER && !this.stated) {
      this.ceiling = this.maxRange;
      this.refusedAt = Number.POSITIVE_INFINITY;
    }
    this.density = logs / blocks;
    const dense = logs > 0 ? Math.floor((blocks * this.target) / logs) : Number.POSITIVE_INFINITY;
    // Doubling the size just read, not the current size that concurrent reads may have doubled already; after a
    // refusal, halfway to the size refused. A range smaller than the size (a piece of one read again, the end of
    // the chain) does not shrink it: only the density and the ceiling do.
    const grown = this.refusedAt === Number.POSITIVE_INFINITY ? blocks * 2 : Math.floor((blocks + this.refusedAt) / 2);
    this.size = Math.max(1, Math.min(this.ceiling, Math.max(blocks, grown, this.size), dense));
  }

  /** The provider refused `blocks` blocks (`stated`: the size its words give, if any). */
  refused(blocks: number, err: RpcError, stated: number | undefined): void {
    if (err instanceof RpcAnswerTooLarge) {
      // Only says this stretch is dense: as dense as its size says at ~500 bytes a log.
      const suggested = Math.floor((blocks * err.limit) / ((err.bytes ?? err.limit * 2) * 2));
      this.size = Math.max(1, Math.min(blocks - 1, this.size, suggested));
      this.density = Math.max(this.density, (err.bytes ?? err.limit) / (LOG_BYTES * blocks));
      return;
    }
    this.sinceRefusal = 0;
    if (stated !== undefined && !(err instanceof RangeTooSlow)) {
      // Taken at its word, not probed again (each probe costs a refusal per range read at once).
      this.ceiling = Math.min(this.ceiling, stated);
      this.stated = true;
      this.size = Math.max(1, Math.min(blocks - 1, this.size, stated));
      return;
    }
    this.refusedAt = Math.min(this.refusedAt, blocks);
    this.ceiling = Math.min(this.ceiling, blocks - 1);
    this.size = Math.max(1, Math.min(this.size, Math.floor(blocks / 2)));
  }

  /** An answer of `logs` logs turned out cut off: plan ranges to hold half as many from now on. */
  cutAt(logs: number): void {
    this.logCap = Math.min(this.logCap, logs);
    this.size = Math.max(1, Math.min(this.size, Math.floor(this.target / Math.max(this.density, 1e-9))));
  }

  /** Counts at which an answer may have been cut off silently: the known caps and any learned here. */
  suspectCounts(known: readonly number[]): Set<number> {
    return new Set(Number.isFinite(this.logCap) ? [...known, this.logCap] : known);
  }

  /** Plans for a range that turned out denser than planned (its end block's bloom is full). */
  denseAhead(): void {
    this.density = Math.max(this.density, LOGS_PER_RANGE);
    this.size = 1;
  }

  /** Shrinks the next ranges to the density now known (a range planned before it was learnt is planned again). */
  replan(): void {
    this.size = Math.min(this.size, Math.max(1, Math.floor(this.target / this.density)));
  }
}
