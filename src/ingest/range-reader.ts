/**
 * One block range read, ready to commit: near the head, the headers of the blocks there before the logs (to see the
 * chain move under the read, and to check each block); `eth_getLogs` decoded as it is parsed (log-decoder.ts); the
 * headers the answer needs after (the tail of a long answer, where the provider may cut answers off silently), the
 * answer checked complete against them (completeness.ts); and the records stamped with their blocks' times, as the
 * logs carry them (`blockTimestamp`) or, for a block whose logs do not, from its header. Deep history with
 * timestamped logs, from a provider that refuses rather than cuts, reads no header at all. What it came to is a
 * fact (range-facts.ts) for the planner and the indexer to act on: read; refused; cut; its end dense; a block the
 * node does not show complete yet; the chain moved. It sizes nothing itself.
 */

import { stampTimes, timelessBlocks } from "../sources/own-index/index.js";
import { blocksToCheck, type Header, headWindow, judge, KNOWN_CAPS, settle, type Watch } from "./completeness.js";
import type { Fetcher } from "./fetcher.js";
import type { Decoded, LogDecoder } from "./log-decoder.js";
import type { NotYet, ReadFact, Seen } from "./range-facts.js";
import type { AnswerCaps } from "./range-sizer.js";
import type { HeadVerifier } from "./verify.js";

export type { ReadRange } from "./range-facts.js";

/**
 * Bits set, of a block header's 2048-bit `logsBloom`, from which the block is taken as dense: at 3 bits per
 * address or topic, 2040 bits are about 3,500 distinct ones (a few hundred logs leave most of the bloom clear).
 */
const DENSE_BLOOM_BITS = 2040;

const noHeader = (block: number, seen?: Seen): NotYet => ({
  kind: "not yet",
  block,
  said: "it answered null for the block's header",
  seen,
});

export class RangeReader {
  constructor(
    private readonly fetcher: Fetcher,
    private readonly decoder: LogDecoder,
    private readonly watch: Watch,
    /** What the provider's answers have shown (the planner's sizer learns it; range-sizer.ts). */
    private readonly caps: AnswerCaps,
    /** Whether the provider may cut an answer off without an error (providers.ts), or has shown it does. */
    private readonly mayCut: () => boolean,
    /** `--verify-head`, `--verify-rpc` (verify.ts): blocks near the head checked further, where asked. */
    private readonly verifier?: HeadVerifier | undefined,
  ) {}

  /**
   * Reads `[from, to]` with the chain's head at `head` (blocks near it are checked one by one); `sparse`: the
   * planner expects few logs there (a full bloom at its end then says otherwise before the logs are asked for).
   *
   * Long on purpose: the steps of one read in the order the completeness rules need them (headers, logs, checks,
   * verification, timestamps), each a call; split, the order would be spread over several places.
   */
  async read(from: number, to: number, head: number, sparse = false): Promise<ReadFact> {
    // Near the head, each block's header is checked against the logs: logs of another block than it names were read
    // across a moving chain. `null` is "not there yet" (a backend behind the head another one announced), never
    // "nothing". Where the chain turns dense after sparse blocks near the head, the end block's bloom warns of that
    // before the logs are asked for: that header is read first. The others are read ahead, paced after the logs
    // call (fetcher.ts `readAhead`), so that the budget they cost is spent while the logs are decoded.
    const window = headWindow(from, to, head);
    if (from < to && sparse && window.includes(to)) {
      const end = await this.fetcher.rangeHeaders([to]);
      if (!end.has(to)) return noHeader(to);
      if (looksDense(end.get(to))) return { kind: "dense end" };
    }
    this.fetcher.readAhead(window);
    const answer = await this.fetcher.logs(from, to);
    if (answer.kind !== "logs") return answer;
    let decoded = await this.decoder.decode((size) => answer.slices.slices(size));
    const seen: Seen = { blocks: to - from + 1, logs: decoded.logs };
    const shape = { from, to, logs: decoded.logs, blocks: decoded.blocks };
    const mayCut = this.mayCut();
    const needed = [
      ...window,
      ...blocksToCheck(shape, head, mayCut),
      ...timelessBlocks(decoded.records, decoded.times),
    ];
    let headers = await this.fetcher.rangeHeaders(needed);
    const missing = needed.find((n) => !headers.has(n));
    if (missing !== undefined) return noHeader(missing, seen);
    // Logs of another block than the header names for their number: a reorg under the read, handled as one.
    if (!consistent(decoded, headers)) return { kind: "moved", seen };
    // A count at a known cap says "cut" only of a provider that may cut: one that refuses over its cap answered it
    // whole (Alchemy's and Infura's suggested ranges hold up to their 10,000 logs).
    const suspectCounts = mayCut ? this.caps.suspectCounts(KNOWN_CAPS) : new Set<number>();
    const verdict = judge(shape, headers, this.watch, head, suspectCounts, mayCut);
    if (verdict.kind === "at cap" && !headers.has(verdict.block)) {
      // Its receipts are checked against its header.
      headers = await this.fetcher.rangeHeaders([...headers.keys(), verdict.block]);
      if (!headers.has(verdict.block)) return noHeader(verdict.block, seen);
    }
    const settled = await settle(this.fetcher.rpc, this.watch, verdict, headers, decoded.logs);
    if (settled.kind === "cut") return { ...settled, capAt: decoded.logs, seen };
    if (settled.kind === "not yet") return { ...settled, seen };
    if (settled.kind === "replaced") decoded = await this.decoder.decode(() => [settled.logs]);
    const { blocks, perBlock } = decoded;
    const verified = (await this.verifier?.check({ from, to, head, headers, blocks, perBlock })) ?? { kind: "stands" };
    if (verified.kind === "cut" || verified.kind === "not yet") return { ...verified, seen };
    if (verified.kind === "replaced") decoded = await this.decoder.decode(() => [verified.logs]);
    if (settled.kind === "replaced" || verified.kind === "replaced") {
      // Logs a check put in may come from blocks whose logs carry no timestamp: their headers tell.
      const timed = await this.withTimelessHeaders(decoded, headers);
      if (typeof timed === "number") return noHeader(timed, seen);
      headers = timed;
    }
    // Records are decoded before any header is read: their block's timestamp goes in now.
    stampTimes(decoded.records, decoded.times, headers);
    const { records, answers, unpriced, unknownLogs } = decoded;
    return { kind: "read", range: { from, to, headers, blocks, records, answers, unpriced, unknownLogs }, seen };
  }

  /** `headers` and those of the blocks whose records have no timestamp; the number of one the node lacks. */
  private async withTimelessHeaders(
    decoded: Decoded,
    headers: Map<number, Header>,
  ): Promise<Map<number, Header> | number> {
    const timeless = timelessBlocks(decoded.records, decoded.times);
    if (timeless.size === 0) return headers;
    const all = await this.fetcher.rangeHeaders([...headers.keys(), ...timeless]);
    return [...timeless].find((n) => !all.has(n)) ?? all;
  }
}

/** Whether each block's logs came with the hash its header names (no chain moved under the read). */
function consistent(decoded: Decoded, headers: ReadonlyMap<number, Header>): boolean {
  if (decoded.mixed) return false;
  for (const [number, hash] of decoded.blocks) {
    const header = headers.get(number);
    if (header && header.hash.toLowerCase() !== hash) return false;
  }
  return true;
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
