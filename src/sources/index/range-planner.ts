/**
 * Which block ranges are read, and when: while catching up, the blocks up to the target are cut into contiguous
 * ranges sized by range-sizer.ts, and up to `concurrency` of them are read at once, as many as the logs expected
 * in flight allow (LOGS_IN_FLIGHT: over blocks denser than LOGS_PER_RANGE, fewer ranges are read at once; the next
 * one in line always is). Ranges are planned only as far as they are read, so a size learnt from a refusal applies
 * to the next ones and memory stays bounded. The caller commits them strictly in line; a range that must be read
 * again (refused, cut off, its end dense) is put back first in line, in pieces.
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
  /** Contiguous, in block order; the first `concurrency` are being read. */
  private readonly line: Slot<T>[] = [];
  /** The first block not planned yet. */
  private planned: number;

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

  /** Plans ranges up to `concurrency` in line and starts the reads the logs in flight leave room for. */
  fill(): void {
    while (this.line.length < this.concurrency && this.planned <= this.target) {
      const to = Math.min(this.target, this.planned + this.sizer.size - 1);
      this.line.push({ from: this.planned, to });
      this.planned = to + 1;
    }
    let room = LOGS_IN_FLIGHT;
    for (const slot of this.line.slice(0, this.concurrency)) {
      const expected = (slot.to - slot.from + 1) * this.sizer.density;
      if (!slot.read) {
        if (expected > room && slot !== this.line[0]) break;
        slot.read = this.start(slot.from, slot.to);
        slot.read.catch(() => {}); // seen when its turn comes, or dropped with the rest
      }
      room -= expected;
    }
  }

  /** The first range in line, taken out of it (`fill` has started its read); undefined when all are done. */
  take(): (Slot<T> & { read: Promise<T> }) | undefined {
    return this.line.shift() as (Slot<T> & { read: Promise<T> }) | undefined;
  }

  /** Puts a range back first in line as ranges of the size the sizer plans now (the provider refused it). */
  inPieces(slot: Slot<T>): void {
    const pieces: Slot<T>[] = [];
    for (let from = slot.from; from <= slot.to; from += this.sizer.size) {
      pieces.push({ from, to: Math.min(slot.to, from + this.sizer.size - 1) });
    }
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
