/**
 * Reading a rule's new records: where a rule starts (its floor) and the rule's read through the one reader of new
 * records (activity/reader.ts, which the workflow packages' triggers use too: its window rule, its paging).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  firstRecord,
  floorOfStart,
  type Horizon,
  type ReadBatch,
  type ReaderContext,
  type ReadTarget,
  readBatches,
} from "../activity/reader.js";
import type { Config } from "../core/config.js";
import { retryAfterMs } from "../core/http.js";
import { PageError } from "../core/paginate.js";
import type { Rule, WatchSource } from "./config.js";
import { type Position, positionOf } from "./records.js";

export {
  type Horizon,
  horizonOf,
  isAfter,
  isBefore,
  PagesMoved,
  READ_BATCH,
  type ReadBatch,
} from "../activity/reader.js";

/** Spaces upstream calls (NFTPort's per-second limit) and holds them back after a 429. Shared by every rule. */
export class Pacer {
  private next = 0;
  private readonly intervalMs: number;

  constructor(perSecond: number) {
    this.intervalMs = 1000 / perSecond;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    const now = Date.now();
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    if (at > now) await sleep(at - now, undefined, signal ? { signal } : undefined);
  }

  /** No call before `time` (ms since the epoch). */
  pauseUntil(time: number): void {
    this.next = Math.max(this.next, time);
  }
}

export interface FollowContext {
  config: Config;
  source: WatchSource;
  reorgDepth: number;
  signal?: AbortSignal | undefined;
  pacer?: Pacer | undefined;
}

/** Records per page the rule asks for: the index pages up to 1000 records, NFTPort at most 50, OpenSea 200. */
const PAGE_SIZES: Record<WatchSource, number> = { index: 500, nftport: 50, opensea: 200, "index+opensea": 200 };

/** The rule's read: its retriever and query, its page size, the pacer. */
function readerOf(rule: Rule, ctx: FollowContext): [ReadTarget, ReaderContext] {
  const target: ReadTarget = {
    kind: rule.kind,
    contract_address: rule.contract_address,
    token_id: rule.token_id,
    type: rule.type,
  };
  return [
    target,
    { run: { config: ctx.config, signal: ctx.signal }, pageSize: PAGE_SIZES[ctx.source], pacer: ctx.pacer },
  ];
}

/** What the rule reads, for the store: a rule whose fingerprint changed must get a new id. */
export function fingerprintOf(rule: Rule, ctx: Pick<FollowContext, "source">): string {
  const read: unknown[] = [ctx.source, rule.kind, rule.contract_address?.toLowerCase() ?? null, rule.token_id ?? null];
  // Kept out when absent, so that the rules saved before `contracts` existed keep their fingerprint.
  if (rule.contracts) read.push([...new Set(rule.contracts.map((c) => c.toLowerCase()))].sort());
  return JSON.stringify(read);
}

/**
 * Where a rule starts: records at or before the returned position are never mailed. Undefined while it cannot be
 * known yet: an own index that no writer has built, filled or seen the chain with.
 *
 * - `start_block`: the block before it (rows without a block: those dated after now).
 * - The own index (alone, or with OpenSea's order book): the chain head its writer last saw (`head_block`), or its
 *   last indexed block if that is later, and now for records without a block. Not the newest record: an index still
 *   backfilling has not read the newest blocks yet, and the records it adds for them later are history, not news.
 * - NFTPort, OpenSea: the newest record it has now (none: everything to come is new); on the whole chain (NFTPort)
 *   that record is found by a galloping search on `from_block`, a few dozen one-record reads.
 */
export async function findFloor(rule: Rule, ctx: FollowContext): Promise<Position | undefined> {
  const now = new Date().toISOString().slice(0, 19);
  if (rule.start_block !== undefined) return floorOfStart(rule.start_block, now);
  if (ctx.source === "index" || ctx.source === "index+opensea") {
    const { indexStatus, isMissingIndex } = await import("../sources/own-index/index.js");
    // No index at all yet (its writer is starting) is the same as one that has not seen the chain.
    const status = await indexStatus(ctx.config).catch((err: unknown) => {
      if (isMissingIndex(err)) return undefined;
      throw err;
    });
    if (!status) return undefined;
    const { headBlock, lastBlock } = status;
    const known = [headBlock, lastBlock].filter((b): b is number => b !== null);
    return known.length ? { block: Math.max(...known), date: now } : undefined;
  }
  const [target, reader] = readerOf(rule, ctx);
  if (rule.kind !== "on-chain") {
    const newest = await firstRecord(target, reader);
    return newest ? positionOf(newest) : { block: undefined, date: "" };
  }
  const from = (block: number) => firstRecord(target, reader, block);
  if (!(await from(0))) return { block: undefined, date: "" };
  let low = 0;
  let high = 1;
  while (high <= Number.MAX_SAFE_INTEGER / 2 && (await from(high))) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (await from(mid)) low = mid;
    else high = mid;
  }
  return positionOf((await from(low))!);
}

/** Every record of the rule from the horizon on, oldest first, in batches (see readBatches). */
export function readRule(rule: Rule, horizon: Horizon, ctx: FollowContext): AsyncGenerator<ReadBatch> {
  const [target, reader] = readerOf(rule, ctx);
  return readBatches(target, horizon, reader);
}

/** How long to hold off after a failed read: a 429's Retry-After (or a minute without one); undefined otherwise. */
export function holdOffMs(err: unknown): number | undefined {
  if (!(err instanceof PageError) || err.payload.details.code !== "upstream_rate_limited") return undefined;
  const headers = (err.response as { headers?: Record<string, string | string[]> } | undefined)?.headers ?? {};
  return retryAfterMs(headers["retry-after"]) ?? 60_000;
}
