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
 *
 * The planner alone owns the sizer (range-sizer.ts): it learns from what each read reports (range-facts.ts: the
 * density seen, a refusal and the provider's words, a cap shown by a cut answer, a dense end) as the read ends, and
 * decides how a range is read again. A range planned before a size or density now known (a piece's rest, a range
 * waiting in line) is cut to the size planned now before it is read.
 */
import type { ReadFact } from "./range-facts.js";
import { LOGS_PER_RANGE, type RangeSizer } from "./range-sizer.js";

/** Logs expected in ranges read but not yet committed, beyond which no further range starts. */
const LOGS_IN_FLIGHT = 2 * LOGS_PER_RANGE;

/** A range in line, and its read once started. */
export interface Slot {
  from: number;
  to: number;
  read?: Promise<ReadFact>;
}

/** Starts reading a range; `sparse`: few logs are expected there (range-reader.ts: a dense end is then a fact). */
export type StartRead = (from: number, to: number, sparse: boolean) => Promise<ReadFact>;

/** What a read came to that puts its range back in line, in pieces the planner decides. */
export type ReadAgain = Extract<ReadFact, { kind: "refused" | "cut" | "dense end" }>;

export class RangePlanner {
  /** Contiguous, in block order: ranges read or being read (waiting for their commit), pieces to read again first. */
  private readonly line: Slot[] = [];
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
    private readonly start: StartRead,
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
    const expected = (slot: Slot) => this.expected(slot);
    // While the size is a guess (range-sizer.ts), one range at a time (the first in line always starts).
    const concurrency = this.sizer.probing ? 1 : this.concurrency;
    for (let i = 0; i < this.line.length; i++) {
      if (!this.line[i]!.read) {
        if (this.outgrown(this.line[i]!)) this.line.splice(i, 1, ...this.pieces(this.line[i]!));
        const first = i === 0;
        if (!first && (this.reading >= concurrency || expected(this.line[i]!) > room)) return;
        this.begin(this.line[i]!);
      }
      room -= expected(this.line[i]!);
    }
    while (this.reading < concurrency && this.line.length < 2 * this.concurrency && this.planned <= this.target) {
      const slot: Slot = { from: this.planned, to: Math.min(this.target, this.planned + this.sizer.size - 1) };
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

  /** Logs the sizer's density expects in a range. */
  private expected(slot: Slot): number {
    return (slot.to - slot.from + 1) * this.sizer.density;
  }

  /**
   * Whether a range not read yet was planned larger than what is known now allows: past a size refused or stated
   * since (ranges read at once were planned before the first of them was refused), or so dense the node would
   * build an answer far larger than wanted, only to have it cut off.
   */
  private outgrown(slot: Slot): boolean {
    if (!this.sizer.allows(slot.to - slot.from + 1)) return true;
    if (slot.from === slot.to || this.expected(slot) <= 2 * this.sizer.target) return false;
    this.sizer.replan();
    return true;
  }

  private begin(slot: Slot): void {
    const read = this.start(slot.from, slot.to, this.expected(slot) < LOGS_PER_RANGE / 2);
    slot.read = read;
    this.reading++;
    const ended = (fact?: ReadFact) => {
      this.reading--;
      if (fact) this.learn(fact);
      // A range already taken is the caller's to act on (read again, commit) before it fills the line itself.
      if (this.line.includes(slot)) this.fill();
    };
    // A failure is seen when its turn comes, or dropped with the rest.
    read.then(ended, () => ended());
  }

  /** What a read showed, for the sizes of the ranges planned after it (as soon as it ends, before its commit). */
  private learn(fact: ReadFact): void {
    if ("seen" in fact && fact.seen) this.sizer.read(fact.seen.blocks, fact.seen.logs);
    if (fact.kind === "refused") this.sizer.refused(fact.blocks, fact.error, fact.refusal);
    else if (fact.kind === "cut" && fact.capAt !== undefined) this.sizer.cutAt(fact.capAt);
    else if (fact.kind === "dense end") this.sizer.denseAhead();
  }

  /** The first range in line, taken out of it (`fill` has started its read); undefined when all are done. */
  take(): (Slot & { read: Promise<ReadFact> }) | undefined {
    return this.line.shift() as (Slot & { read: Promise<ReadFact> }) | undefined;
  }

  /**
   * Puts a taken range back first in line as its read says: refused, as the piece the provider suggested and the
   * rest, or in pieces of the size now planned; cut off, as two apart where it was cut; its end dense, as the
   * blocks before its last one, then that block.
   */
  again(slot: Slot, fact: ReadAgain): void {
    if (fact.kind === "cut") this.apartAt(slot, fact.at);
    else if (fact.kind === "dense end") this.apartAt(slot, slot.to);
    else if (fact.refusal.suggested && fact.refusal.blocks !== undefined)
      this.apartAt(slot, slot.from + fact.refusal.blocks);
    else this.inPieces(slot);
  }

  /**
   * Puts a range back first in line as ranges of the size the sizer plans now (the provider refused it, or it was
   * planned before a density now known): as many as are read at once, then the rest as one range, planned again at
   * its turn with what those reads showed (a dense stretch is often short: the rest is not cut to its size).
   */
  inPieces(slot: Slot): void {
    this.line.unshift(...this.pieces(slot));
  }

  /** A range as ranges of the size planned now: as many as are read at once, then the rest as one. */
  private pieces(slot: Slot): Slot[] {
    const pieces: Slot[] = [];
    const size = this.sizer.size;
    let from = slot.from;
    for (; from <= slot.to && pieces.length < this.concurrency; from += size) {
      pieces.push({ from, to: Math.min(slot.to, from + size - 1) });
    }
    if (from <= slot.to) pieces.push({ from, to: slot.to });
    return pieces;
  }

  /** Puts a range back first in line as two, apart at block `at` (`at` alone first when it is the range's first). */
  apartAt(slot: Slot, at: number): void {
    this.line.unshift(...(at > slot.from ? [{ from: slot.from, to: at - 1 }] : []), { from: at, to: slot.to });
  }

  /** The reads started and still in line (to be waited for before the store closes). */
  reads(): Promise<ReadFact>[] {
    return this.line.flatMap((slot) => (slot.read ? [slot.read] : []));
  }
}
