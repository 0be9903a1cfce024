/**
 * The verdicts on an answer (completeness.ts), over headers whose blooms are built from known logs: a cut answer is
 * read again apart at the last block it reached (never as the same range), a single block at a cap is checked
 * whole, an empty block near the head whose bloom may hold a watched event is a suspect, and a far one is not.
 */
import { describe, expect, it } from "vitest";
import { BloomBuilder } from "../../src/chain/bloom.js";
import { type Header, judge, Watch } from "../../src/ingest/completeness.js";
import { TOPIC } from "../../src/ingest/decode.js";

const NFT = `0x${"72".repeat(20)}`;
const OTHER = `0x${"9a".repeat(32)}`;
const watch = new Watch([TOPIC.transfer], undefined);
const header = (n: number, topics: string[]): Header => {
  const bloom = new BloomBuilder();
  for (const t of topics) bloom.addLog({ address: NFT, topics: [t] });
  return { number: `0x${n.toString(16)}`, hash: `0x${n}`, parentHash: "0x", timestamp: "0x0", logsBloom: bloom.hex() };
};
const headers = (from: number, to: number, topics: (n: number) => string[]) =>
  new Map(Array.from({ length: to - from + 1 }, (_, i) => [from + i, header(from + i, topics(from + i))]));
const blocks = (...numbers: number[]) => new Map(numbers.map((n) => [n, `0x${n}`]));
const none = new Set<number>();

describe("judge", () => {
  const all = headers(100, 110, () => [TOPIC.transfer]);

  it("takes a long answer that ends before its range while later blooms hold watched events as cut", () => {
    const shape = { from: 100, to: 110, logs: 600, blocks: blocks(100, 101, 102) };
    expect(judge(shape, all, watch, 10_000, none)).toEqual({ kind: "cut", at: 102 });
    // All in the first block: read as that block, then the rest.
    expect(judge({ ...shape, blocks: blocks(100) }, all, watch, 10_000, none)).toEqual({ kind: "cut", at: 101 });
    // Later blocks without the event in their blooms: complete.
    const quiet = headers(100, 110, (n) => (n > 102 ? [OTHER] : [TOPIC.transfer]));
    expect(judge(shape, quiet, watch, 10_000, none)).toEqual({ kind: "complete" });
    // A short answer is not taken for cut by its length.
    expect(judge({ ...shape, logs: 12 }, all, watch, 10_000, none)).toEqual({ kind: "complete" });
  });

  it("takes an answer at a cap as cut, and checks a single block at a cap whole", () => {
    const caps = new Set([1_000]);
    expect(judge({ from: 100, to: 110, logs: 1_000, blocks: blocks(100, 101) }, all, watch, 10_000, caps)).toEqual({
      kind: "cut",
      at: 101,
    });
    expect(judge({ from: 105, to: 105, logs: 1_000, blocks: blocks(105) }, all, watch, 10_000, caps)).toEqual({
      kind: "at cap",
      block: 105,
    });
  });

  it("names empty blocks near the head whose blooms may hold a watched event, and only those", () => {
    const near = headers(100, 110, (n) => (n === 107 ? [OTHER] : [TOPIC.transfer]));
    const shape = { from: 100, to: 110, logs: 3, blocks: blocks(100, 101, 102) };
    // Head 110: the last 64 blocks are checked.
    expect(judge(shape, near, watch, 110, none)).toEqual({
      kind: "suspects",
      blocks: [103, 104, 105, 106, 108, 109, 110],
    });
    // Far from the head: no block is checked one by one.
    expect(judge(shape, near, watch, 10_000, none)).toEqual({ kind: "complete" });
  });
});
