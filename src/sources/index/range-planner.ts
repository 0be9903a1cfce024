/**
 * Which block ranges are read, and when: while catching up, the blocks up to the target are cut into contiguous
 * ranges sized by range-sizer.ts, and up to `concurrency` of them are read at once, as many as the logs expected
 * in flight allow (LOGS_IN_FLIGHT: over blocks denser than LOGS_PER_RANGE, fewer ranges are read at once; the next
 * one in line always is). A read that ends makes room for the next one at once, even while the ranges before it are
 * still read: commits wait for block order, reads do not. Ranges are planned only as far as they are read, so a
 * size learnt from a refusal applies to the next ones and memory stays bounded. The caller commits them strictly
 * in line; a range that must be read again (refused, cut off, its end dense) is put back first in line, in pieces.
 * While the sizer's size is a guess (the provider's largest promise, before any read showed the density), one range
 * is read at a time.
 */
import { LOGS_PER_RANGE, type RangeSizer } from "./range-sizer.js";

/** Logs expected in ranges read but not yet committed, beyond which no further range starts. */
const LOGS_IN_FLIGHT = 2 * LOGS_PER_RANGE;

/** A range in line, and its read once started. */
export interface Slot<T> {
  from: number;
  to: number;
  read?: Promise<T>;
}

export class RangePlanner<T> {
  /** Contiguous, in block order: ranges read or being read (waiting for their commit), pieces to read again first. */
  private readonly line: Slot<T>[] = [];
  /** The first block not planned yet. */
  private planned: number;
  private closed = false;
  /** Reads started and not ended, whether their range is still in line or taken for its commit. */
  private reading = 0;

  constructor(
    next: number,
    private readonly target: number,
    private readonly concurrency: number,
    private readonly sizer: RangeSizer,
    /** Starts reading a range (its failure is seen when its turn comes). */
    private readonly start: (from: number, to: number) => Promise<T>,
  ) {
    this.planned = next;
  }

  /**
   * Starts reads while fewer than `concurrency` are in flight and the logs expected in line leave room: ranges
   * waiting in line first, then new ones planned at the size the sizer plans now. A range read but waiting for an
   * earlier one to commit is not in flight, so one slow or refused range does not hold the others' places (the line
   * holds at most twice `concurrency` ranges). Called again as each read ends, not only at each commit.
   */
  fill(): void {
    if (this.closed) return;
    let room = LOGS_IN_FLIGHT;
    const expected = (slot: Slot<T>) => (slot.to - slot.from + 1) * this.sizer.density;
    // While the size is a guess (range-sizer.ts), one range at a time (the first in line always starts).
    const concurrency = this.sizer.probing ? 1 : this.concurrency;
    for (const slot of this.line) {
      if (!slot.read) {
        const first = slot === this.line[0];
        if (!first && (this.reading >= concurrency || expected(slot) > room)) return;
        this.begin(slot);
      }
      room -= expected(slot);
    }
    while (this.reading < concurrency && this.line.length < 2 * this.concurrency && this.planned <= this.target) {
      const slot: Slot<T> = { from: this.planned, to: Math.min(this.target, this.planned + this.sizer.size - 1) };
      if (expected(slot) > room && this.line.length > 0) return;
      this.line.push(slot);
      this.planned = slot.to + 1;
      this.begin(slot);
      room -= expected(slot);
    }
  }

  /** Stops starting reads (the caller stops taking ranges: done, a reorg, a failure or an abort). */
  close(): void {
    this.closed = true;
  }

  private begin(slot: Slot<T>): void {
    const read = this.start(slot.from, slot.to);
    slot.read = read;
    this.reading++;
    const ended = () => {
      this.reading--;
      // A range already taken is the caller's to act on (read again, commit) before it fills the line itself.
      if (this.line.includes(slot)) this.fill();
    };
    // A failure is seen when its turn comes, or dropped with the rest.
    read.then(ended, ended);
  }

  /** The first range in line, taken out of it (`fill` has started its read); undefined when all are done. */
  take(): (Slot<T> & { read: Promise<T> }) | undefined {
    return this.line.shift() as (Slot<T> & { read: Promise<T> }) | undefined;
  }

  /**
   * Puts a range back first in line as ranges of the size the sizer plans now (the provider refused it, or it was
   * planned before a density now known): as many as are read at once, then the rest as one range, planned again at
   * its turn with what those reads showed (a dense stretch is often short: the rest is not cut to its size).
   */
  inPieces(slot: Slot<T>): void {
    const pieces: Slot<T>[] = [];
    const size = this.sizer.size;
    let from = slot.from;
    for (; from <= slot.to && pieces.length < this.concurrency; from += size) {
      pieces.push({ from, to: Math.min(slot.to, from + size - 1) });
    }
    if (from <= slot.to) pieces.push({ from, to: slot.to });
    this.line.unshift(...pieces);
  }

  /** Puts a range back first in line as two, apart at block `at` (`at` alone first when it is the range's first). */
  apartAt(slot: Slot<T>, at: number): void {
    this.line.unshift(...(at > slot.from ? [{ from: slot.from, to: at - 1 }] : []), { from: at, to: slot.to });
  }

  /** The reads started and still in line (to be waited for before the store closes). */
  reads(): Promise<T>[] {
    return this.line.flatMap((slot) => (slot.read ? [slot.read] : []));
  }
}
