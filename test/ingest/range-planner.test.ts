/**
 * The range planner on its own (src/ingest/range-planner.ts): which ranges are read, how many at once, and
 * how a range to read again goes back in line. Reads are in-process promises the test settles, each a `read` fact
 * that teaches the sizer nothing (the tests set what it knows); the sizer is the real one.
 */
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/chain/rpc.js";
import type { ReadFact } from "../../src/ingest/range-facts.js";
import { RangePlanner } from "../../src/ingest/range-planner.js";
import { LOGS_PER_RANGE, RangeSizer } from "../../src/ingest/range-sizer.js";

/** A range read, with nothing seen for the sizer to learn. */
function readOf(from: number, to: number): Extract<ReadFact, { kind: "read" }> {
  const range = { from, to, headers: new Map(), blocks: new Map(), records: [], answers: [], unpriced: [] };
  return { kind: "read", range: { ...range, unknownLogs: 0 } };
}

/** "from-to" of a range read, else its fact's kind. */
const label = (fact: ReadFact): string => (fact.kind === "read" ? `${fact.range.from}-${fact.range.to}` : fact.kind);

/** A planner over `[next, target]` whose reads are recorded and resolve to the range they read. */
function planner(next: number, target: number, concurrency: number, sizer: RangeSizer) {
  const started: [number, number][] = [];
  const plan = new RangePlanner(next, target, concurrency, sizer, async (from, to) => {
    started.push([from, to]);
    return readOf(from, to);
  });
  return { plan, started };
}

/** Takes every range in line, committing each as the indexer does, and lists them. */
async function drain(plan: RangePlanner): Promise<string[]> {
  const done: string[] = [];
  for (plan.fill(); ; plan.fill()) {
    const slot = plan.take();
    if (!slot) return done;
    done.push(label(await slot.read));
  }
}

describe("the range planner", () => {
  it("cuts the blocks into contiguous ranges of the sizer's size, in block order, up to the target", async () => {
    const sizer = new RangeSizer(100, 10);
    const { plan } = planner(5, 42, 4, sizer);
    expect(await drain(plan)).toEqual(["5-14", "15-24", "25-34", "35-42"]);
  });

  it("starts up to `concurrency` reads at once, no more", async () => {
    const { plan, started } = planner(0, 1_000, 3, new RangeSizer(10, 10));
    plan.fill();
    expect(started).toEqual([
      [0, 9],
      [10, 19],
      [20, 29],
    ]);
    // The range taken for its commit is still read: no fourth read until it ends.
    const first = plan.take()!;
    plan.fill();
    expect(started).toHaveLength(3);
    await first.read;
    plan.fill();
    expect(started).toContainEqual([30, 39]);
  });

  it("starts fewer reads over dense blocks (logs in flight bounded), but always the first in line", () => {
    const sizer = new RangeSizer(10, 10);
    sizer.read(10, 10 * LOGS_PER_RANGE); // a block of LOGS_PER_RANGE logs: ranges of one block from now on
    expect(sizer.size).toBe(1);
    const { plan, started } = planner(0, 100, 4, sizer);
    plan.fill();
    // Each one-block range holds LOGS_PER_RANGE logs: two fit in flight, the third waits.
    expect(started).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(plan.reads()).toHaveLength(2);
  });

  it("puts a refused range back first in line: as many pieces of the size now planned as are read at once, then the rest", async () => {
    const sizer = new RangeSizer(100, 8);
    const { plan } = planner(0, 15, 1, sizer);
    plan.fill();
    const slot = plan.take()!;
    expect(label(await slot.read)).toBe("0-7");
    sizer.size = 3;
    plan.inPieces(slot);
    // The rest is planned again at its turn by the reader (this one reads what it is given).
    expect(await drain(plan)).toEqual(["0-2", "3-7", "8-10", "11-13", "14-15"]);
    const wide = new RangeSizer(100, 16);
    const two = planner(0, 15, 2, wide).plan;
    two.fill();
    const whole = two.take()!;
    await whole.read;
    wide.size = 3;
    two.inPieces(whole);
    expect(await drain(two)).toEqual(["0-2", "3-5", "6-15"]);
  });

  it("reads a range again as two apart at a block, or from its first block on when the cut is there", async () => {
    const { plan } = planner(0, 9, 1, new RangeSizer(10, 10));
    plan.fill();
    const slot = plan.take()!;
    plan.apartAt(slot, 6);
    expect(await drain(plan)).toEqual(["0-5", "6-9"]);
    const again = planner(0, 9, 1, new RangeSizer(10, 10)).plan;
    again.fill();
    again.apartAt(again.take()!, 0);
    expect(await drain(again)).toEqual(["0-9"]);
  });

  it("starts the next read as soon as one behind a slower first range ends, without waiting for the commit", async () => {
    const pending = new Map<string, () => void>();
    const started: string[] = [];
    const plan = new RangePlanner(0, 1_000, 2, new RangeSizer(10, 10), (from, to) => {
      started.push(`${from}-${to}`);
      return new Promise((resolve) => pending.set(`${from}-${to}`, () => resolve(readOf(from, to))));
    });
    plan.fill();
    expect(started).toEqual(["0-9", "10-19"]);
    pending.get("10-19")!();
    await new Promise((resolve) => setImmediate(resolve));
    // The first range is still read; the second waits for it to commit, no longer in flight: a third one starts.
    expect(started).toEqual(["0-9", "10-19", "20-29"]);
    pending.get("0-9")!();
    // Committed strictly in block order all the same.
    expect(label(await plan.take()!.read)).toBe("0-9");
    expect(label(await plan.take()!.read)).toBe("10-19");
    expect(plan.take()!.from).toBe(20);
  });

  it("holds at most twice `concurrency` ranges in line, and starts nothing once closed", async () => {
    const started: string[] = [];
    const plan = new RangePlanner(0, 1_000, 2, new RangeSizer(10, 10), async (from, to) => {
      started.push(`${from}-${to}`);
      return readOf(from, to);
    });
    plan.fill();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    // Every read ends at once and none is taken: the line stops at 4 ranges.
    expect(started).toEqual(["0-9", "10-19", "20-29", "30-39"]);
    plan.take();
    plan.close();
    plan.fill();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toHaveLength(4);
  });

  it("plans nothing past the target, and nothing at all when the next block is beyond it", async () => {
    const { plan, started } = planner(11, 10, 4, new RangeSizer(10, 10));
    expect(await drain(plan)).toEqual([]);
    expect(started).toEqual([]);
  });
});

describe("the planner, owner of the sizer", () => {
  it("learns from what a read reports as it ends, before its commit, and plans the next ranges by it", async () => {
    const sizer = new RangeSizer(100, 10);
    const facts = new Map<string, ReadFact>([
      ["0-9", { ...readOf(0, 9), seen: { blocks: 10, logs: 10 * LOGS_PER_RANGE } }],
    ]);
    const started: string[] = [];
    const plan = new RangePlanner(0, 100, 1, sizer, async (from, to) => {
      started.push(`${from}-${to}`);
      return facts.get(`${from}-${to}`) ?? readOf(from, to);
    });
    plan.fill();
    const first = plan.take()!;
    await first.read;
    expect(sizer.size).toBe(1);
    plan.fill();
    expect(started).toEqual(["0-9", "10-10"]);
  });

  it("reads a refused range again in pieces of the size its refusal taught, and cuts ranges in line planned larger", async () => {
    const sizer = new RangeSizer(100, 16);
    const refused: ReadFact = {
      kind: "refused",
      blocks: 16,
      error: new RpcError(-32602, "block range too large", "eth_getLogs"),
      refusal: { blocks: 3 },
    };
    const plan = new RangePlanner(0, 15, 2, sizer, async (from, to) =>
      to === 15 && from === 0 ? refused : readOf(from, to),
    );
    plan.fill();
    const slot = plan.take()!;
    const fact = await slot.read;
    if (fact.kind !== "refused") throw new Error(fact.kind);
    expect(sizer.allows(16)).toBe(false);
    plan.again(slot, fact);
    // In pieces of 3, two read at once, then the rest as one, cut to the cap again before it is read.
    expect(await drain(plan)).toEqual(["0-2", "3-5", "6-8", "9-11", "12-14", "15-15"]);
  });

  it("reads a cut range again as two apart where it was cut, and keeps the count it was cut at", async () => {
    const sizer = new RangeSizer(100, 10);
    const cut: ReadFact = { kind: "cut", at: 4, capAt: 1_000, seen: { blocks: 10, logs: 1_000 } };
    const plan = new RangePlanner(0, 9, 1, sizer, async (from, to) =>
      from === 0 && to === 9 ? cut : readOf(from, to),
    );
    plan.fill();
    const slot = plan.take()!;
    plan.again(slot, (await slot.read) as typeof cut);
    expect(sizer.target).toBe(500);
    expect(sizer.suspectCounts([]).has(1_000)).toBe(true);
    expect(await drain(plan)).toEqual(["0-3", "4-9"]);
  });
});

describe("the range sizer", () => {
  it("keeps its size when a range smaller than it is read (a piece read again), shrinking only to the density", () => {
    const sizer = new RangeSizer(100, 1);
    sizer.read(1, 0);
    sizer.read(2, 0);
    sizer.read(4, 0);
    expect(sizer.size).toBe(8);
    sizer.read(1, 0); // a one-block piece of a range read again
    expect(sizer.size).toBe(8);
    sizer.read(1, LOGS_PER_RANGE); // but a dense block still shrinks it
    expect(sizer.size).toBe(1);
  });

  it("no longer allows a range past the provider's stated cap, even one planned before it was learnt", () => {
    const sizer = new RangeSizer(100, 16);
    expect(sizer.allows(16)).toBe(true);
    sizer.refused(16, new RpcError(-32602, "block range too large", "eth_getLogs"), { blocks: 10 });
    expect(sizer.allows(16)).toBe(false);
    expect(sizer.allows(10)).toBe(true);
    expect(sizer.allows(1)).toBe(true);
  });
});
