/**
 * The range sizer (src/ingest/range-sizer.ts) on its own: how many blocks the next `eth_getLogs` asks for, from the
 * density read, the provider's refusals and the answers found cut off. Property tests drive it against a node that
 * serves up to some number of blocks, over any sizes; the examples pin each kind of refusal. (The planner's use
 * of it is range-planner.test.ts's; each provider's starting rule, quota.props.test.ts's.)
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RangeTooSlow, RpcAnswerTooLarge, RpcError } from "../../src/chain/rpc.js";
import { DEFAULT_MAX_RANGE, LOGS_PER_RANGE, RangeSizer, sizerFor } from "../../src/ingest/range-sizer.js";

const runs = Number(process.env.PROPS_RUNS ?? 200);
const tooMany = () => new RpcError(-32005, "query returned more than 10000 results", "eth_getLogs");

/**
 * Reads `steps` ranges of the sizer's size from a node serving at most `served` blocks a range (over empty
 * blocks); a refusal says only that the range was too large, or states the cap when `stated`.
 */
function drive(sizer: RangeSizer, served: number, steps: number, stated = false) {
  const asked: { size: number; refused: boolean }[] = [];
  for (let i = 0; i < steps; i++) {
    const size = sizer.size;
    const refused = size > served;
    asked.push({ size, refused });
    if (refused) sizer.refused(size, tooMany(), stated ? { blocks: served } : {});
    else sizer.read(size, 0);
  }
  return asked;
}

describe("the size against a node that refuses ranges over some size", () => {
  it("finds a working size in at most log2 refusals, then grows back to the largest served", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 1_000_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (max, at) => {
        const served = Math.max(1, Math.floor(at * (max - 1)));
        const asked = drive(new RangeSizer(max, max), served, 500);
        const firstRead = asked.findIndex((a) => !a.refused);
        expect(firstRead).toBeLessThanOrEqual(Math.ceil(Math.log2(max / served)) + 1);
        expect(Math.max(...asked.filter((a) => !a.refused).map((a) => a.size))).toBe(served);
        expect(asked.filter(({ size }) => !Number.isInteger(size) || size < 1 || size > max)).toEqual([]);
      }),
      { numRuns: runs },
    );
  });

  it("never asks again a size refused within the last 50 reads (growth goes halfway towards it)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), (max, cap) => {
        const served = Math.min(cap, max - 1);
        const asked = drive(new RangeSizer(max, 1), served, 600);
        let smallestRefused = Number.POSITIVE_INFINITY;
        let readsSince = 0;
        const againTooSoon: number[] = [];
        for (const { size, refused } of asked) {
          if (readsSince < 50 && size >= smallestRefused) againTooSoon.push(size);
          if (refused) {
            smallestRefused = Math.min(readsSince >= 50 ? Number.POSITIVE_INFINITY : smallestRefused, size);
            readsSince = 0;
          } else readsSince++;
        }
        expect(againTooSoon).toEqual([]);
      }),
      { numRuns: runs },
    );
  });

  it("takes a stated cap at its word: refused once, never probed again", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), (max, cap) => {
        const served = Math.min(cap, max - 1);
        const sizer = new RangeSizer(max, max);
        const asked = drive(sizer, served, 300, true);
        expect(asked.filter((a) => a.refused)).toHaveLength(1);
        expect(asked.at(-1)!.size).toBe(served);
        expect(sizer.allows(served)).toBe(true);
        expect(sizer.allows(served + 1)).toBe(false);
      }),
      { numRuns: runs },
    );
  });
});

describe("the size from the density read", () => {
  it("plans no more blocks than hold the logs aimed at, and doubles over empty blocks", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (max, blocks, logs) => {
          const sizer = new RangeSizer(max, 1);
          sizer.read(blocks, logs);
          expect(sizer.density).toBe(logs / blocks);
          if (logs === 0) expect(sizer.size).toBe(Math.min(max, blocks * 2));
          else
            expect(sizer.size).toBe(
              Math.max(1, Math.min(max, blocks * 2, Math.floor((blocks * LOGS_PER_RANGE) / logs))),
            );
        },
      ),
      { numRuns: runs },
    );
  });

  it("leaps straight to the largest range where the rule promises one, and stops probing after a read", () => {
    const sizer = new RangeSizer(10_000, 10_000, true);
    expect(sizer.probing).toBe(true);
    sizer.read(10_000, 1);
    expect(sizer.probing).toBe(false);
    sizer.read(10, 0);
    expect(sizer.size).toBe(10_000);
  });

  it("starts over at one block for a bloom found full, and re-plans ranges to the density learnt", () => {
    const sizer = new RangeSizer(1_000, 1_000);
    sizer.denseAhead();
    expect(sizer.size).toBe(1);
    const sparse = new RangeSizer(1_000, 1_000);
    sparse.read(1_000, 0);
    expect(sparse.size).toBe(1_000);
    // 50 logs a block read since: 5,000 logs aimed at is 100 blocks.
    sparse.read(10, 500);
    sparse.replan();
    expect(sparse.size).toBe(100);
  });
});

describe("each kind of refusal", () => {
  it("halves a range refused without words, and does not allow it again", () => {
    const sizer = new RangeSizer(1_000, 1_000);
    sizer.refused(1_000, tooMany());
    expect(sizer.size).toBe(500);
    expect(sizer.allows(1_000)).toBe(false);
    expect(sizer.allows(999)).toBe(true);
  });

  it("reads a suggested range as a piece, not a cap: still allows the range, guessing again until a read", () => {
    const sizer = new RangeSizer(100_000, 50_000, true);
    sizer.read(50_000, 0);
    sizer.refused(50_000, tooMany(), { blocks: 1_200, suggested: true, overLogCap: true });
    expect(sizer.allows(50_000)).toBe(true);
    expect(sizer.probing).toBe(true);
    expect(sizer.refusesOverCap).toBe(true);
    // A suggestion that also states a cap keeps the cap.
    sizer.refused(50_000, tooMany(), { blocks: 1_200, suggested: true, cap: 2_000 });
    expect(sizer.allows(2_001)).toBe(false);
  });

  it("treats a slow range as too large, not as a stated cap, even when words give a size", () => {
    const sizer = new RangeSizer(1_000, 1_000);
    sizer.refused(1_000, new RangeTooSlow("eth_getLogs", "no answer within 30 s", 0), { blocks: 10 });
    expect(sizer.size).toBe(500);
    expect(sizer.allows(999)).toBe(true);
  });

  it("shrinks below a range whose answer was too large by what its size says, without capping ranges", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100_000 }),
        fc.integer({ min: 1_000, max: 10_000_000 }),
        fc.option(fc.integer({ min: 1, max: 100_000_000 }), { nil: undefined }),
        (blocks, limit, announced) => {
          const sizer = new RangeSizer(100_000, 100_000);
          const bytes = announced === undefined ? undefined : limit + announced;
          sizer.refused(blocks, new RpcAnswerTooLarge("eth_getLogs", limit, bytes));
          expect(sizer.size).toBeLessThan(blocks);
          expect(sizer.size).toBeGreaterThanOrEqual(1);
          expect(sizer.allows(100_000)).toBe(true);
        },
      ),
      { numRuns: runs },
    );
  });

  it("learns an answer cut off silently: ranges aim at half of it, and that count becomes suspect", () => {
    const sizer = new RangeSizer(10_000, 10_000);
    sizer.read(1_000, 1_000);
    expect(sizer.seenCut).toBe(false);
    expect([...sizer.suspectCounts([10_000])]).toEqual([10_000]);
    sizer.cutAt(1_000);
    expect(sizer.seenCut).toBe(true);
    expect(sizer.target).toBe(500);
    expect(sizer.size).toBe(500);
    expect([...sizer.suspectCounts([10_000])].sort()).toEqual([1_000, 10_000]);
  });
});

describe("sizerFor", () => {
  it("starts one block doubling to the default largest range where the provider states no rule", () => {
    const sizer = sizerFor({});
    expect(sizer.size).toBe(1);
    const asked = drive(sizer, Number.POSITIVE_INFINITY, 20).map((a) => a.size);
    expect(asked.slice(0, 12)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, DEFAULT_MAX_RANGE]);
    expect(asked.at(-1)).toBe(DEFAULT_MAX_RANGE);
  });

  it("holds a largest range given to it whatever the rule, and never less than one block", () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 1_000_000 }), (maxRange) => {
        const sizer = sizerFor({ maxBlocks: 10_000 }, maxRange);
        const largest = Math.max(1, maxRange);
        expect(sizer.size).toBe(Math.min(largest, 10_000));
        expect(sizer.allows(largest)).toBe(true);
        expect(sizer.allows(largest + 1)).toBe(false);
      }),
      { numRuns: runs },
    );
  });
});
