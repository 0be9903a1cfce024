/**
 * Reading a rule's new records through its retriever node (`pages` over `runNode`), for either source.
 *
 * By contract and by token the retrievers answer newest first, so "new" is at the top: a read pages down from the
 * newest record, by continuation, until it passes the rule's horizon, then hands the records on oldest first. The
 * whole chain answers oldest first: a read starts at the horizon block (`from_block`) and pages up to the end.
 * Either way a read covers whole blocks and costs what is new plus the reorg window, never the whole history, and
 * a long read (a far `start_block`, a long outage) reaches the journal in bounded batches, oldest first.
 *
 * The horizon is the newest record already taken, less `reorg_depth` blocks (and, for rows without a block,
 * such as NFTPort's bids and listings, that many 12-second slots): records in that window are read again on every
 * poll, so a reorg that replaced blocks there is seen — records gone, records new — and the journal's keys keep
 * what was already taken from being taken twice.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Config } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import { retryAfterMs } from "../core/http.js";
import { stringifyJson } from "../core/json.js";
import { type AnyNode, runNode } from "../core/node.js";
import { PageError, pages } from "../core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../nodes/index.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { Rule, WatchSource } from "./config.js";
import { type Position, positionOf } from "./records.js";

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

const SECONDS_PER_BLOCK = 12;

function nodeOf(rule: Rule): AnyNode {
  return rule.kind === "by-token"
    ? nftTransactionsByToken
    : rule.kind === "by-contract"
      ? nftTransactionsByContract
      : nftTransactionsOnChain;
}

/** Records per page the rule asks for: the index pages up to 1000 records, NFTPort at most 50, OpenSea 200. */
const PAGE_SIZES: Record<WatchSource, number> = { index: 500, nftport: 50, opensea: 200, "index+opensea": 200 };

function queryOf(rule: Rule, ctx: FollowContext): Record<string, unknown> {
  const page_size = PAGE_SIZES[ctx.source];
  return {
    ...(rule.contract_address !== undefined ? { contract_address: rule.contract_address } : {}),
    ...(rule.token_id !== undefined ? { token_id: rule.token_id } : {}),
    type: rule.type,
    page_size,
  };
}

/** What the rule reads, for the store: a rule whose fingerprint changed must get a new id. */
export function fingerprintOf(rule: Rule, ctx: Pick<FollowContext, "source">): string {
  return JSON.stringify([ctx.source, rule.kind, rule.contract_address?.toLowerCase() ?? null, rule.token_id ?? null]);
}

/** `pages` of the rule's retriever, each page fetched only when the pacer allows. */
async function* pacedPages(rule: Rule, query: Record<string, unknown>, ctx: FollowContext) {
  const iterator = pages<TransactionRecord>(nodeOf(rule), { query }, {}, { config: ctx.config, signal: ctx.signal })[
    Symbol.asyncIterator
  ]();
  try {
    for (;;) {
      await ctx.pacer?.wait(ctx.signal);
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.(undefined);
  }
}

/** One page of the rule's retriever (at its turn with the pacer). */
async function onePage(rule: Rule, query: Record<string, unknown>, ctx: FollowContext): Promise<TransactionRecord[]> {
  await ctx.pacer?.wait(ctx.signal);
  const out = (await runNode(nodeOf(rule), { query }, { config: ctx.config, signal: ctx.signal })) as {
    data?: { transactions: TransactionRecord[] };
    error?: PageError["payload"];
    response?: unknown;
  };
  if (!out.data) throw new PageError(out.error!, out.response, undefined);
  return out.data.transactions;
}

const firstRecord = async (rule: Rule, query: Record<string, unknown>, ctx: FollowContext) =>
  (await onePage(rule, { ...query, page_size: 1 }, ctx))[0];

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
  if (rule.start_block !== undefined) return { block: rule.start_block - 1, date: now };
  if (ctx.source === "index" || ctx.source === "index+opensea") {
    const [{ indexStatus }, { isMissingIndex }] = await Promise.all([
      import("../sources/index/source.js"),
      import("../sources/index/store.js"),
    ]);
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
  const query = queryOf(rule, ctx);
  if (rule.kind !== "on-chain") {
    const newest = await firstRecord(rule, query, ctx);
    return newest ? positionOf(newest) : { block: undefined, date: "" };
  }
  const from = (block: number) => firstRecord(rule, { ...query, from_block: block }, ctx);
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

export interface Horizon {
  block: number;
  date: string;
}

/** The oldest point a read must cover: the newest record taken less the reorg window, never below the floor. */
export function horizonOf(floor: Position, read: Position | undefined, reorgDepth: number): Horizon {
  const floorBlock = (floor.block ?? -1) + 1;
  const block = read?.block === undefined ? floorBlock : Math.max(floorBlock, read.block - reorgDepth);
  let date = floor.date;
  if (read) {
    const back = new Date(Date.parse(`${read.date}Z`) - reorgDepth * SECONDS_PER_BLOCK * 1000);
    const readFloor = Number.isNaN(back.getTime()) ? "" : back.toISOString().slice(0, 19);
    if (readFloor > date) date = readFloor;
  }
  return { block, date };
}

export const isBefore = (record: TransactionRecord, horizon: Horizon): boolean => {
  const { block, date } = positionOf(record);
  return block !== undefined ? block < horizon.block : date < horizon.date;
};

/** Records after the floor: with a block, a later block; without one, a later date. */
export const isAfter = (record: TransactionRecord, floor: Position): boolean => {
  const { block, date } = positionOf(record);
  return block !== undefined ? block > (floor.block ?? -1) : date > floor.date;
};

/** Records a read holds at once: more than this (a far `start_block`, a long outage) are taken in batches. */
export const READ_BATCH = 1000;

/** Records from the horizon on, oldest first, as a read hands them to the journal. */
export interface ReadBatch {
  /** Whole blocks (a block is never split between batches: record keys count within a block). */
  records: TransactionRecord[];
  /** The newest block this batch covers; undefined for the last batch, which covers everything after it. */
  through: number | undefined;
}

/**
 * The source's pages changed between the two passes of a long read (a reorg, or new records on an upstream whose
 * continuations count rows): what was taken so far stands, and the next poll reads on from there.
 */
export class PagesMoved extends ChainmailError {
  constructor() {
    super(
      "INVALID_CONTINUATION",
      "the records moved while a long read was taking them; the next poll reads on from there",
      {
        details: { pages_moved: true },
      },
    );
  }
}

/**
 * Every record from the horizon on, oldest first, in batches of at most `size` records (a single block with more
 * is a batch of its own), so a read of any length holds about a batch and a page in memory. Each batch is taken
 * before the next is read: the read position only moves past records already in the journal.
 */
export async function* readBatches(
  rule: Rule,
  horizon: Horizon,
  ctx: FollowContext,
  size = READ_BATCH,
): AsyncGenerator<ReadBatch> {
  const chunks = rule.kind === "on-chain" ? oldestFirst(rule, horizon, ctx) : newestFirst(rule, horizon, ctx, size);
  let held: TransactionRecord[] = [];
  let through = horizon.block - 1;
  for await (const chunk of chunks) {
    held = held.concat(chunk);
    while (held.length > size) {
      // Cut before the block that goes past `size`; a block larger than a batch is a batch of its own, once whole.
      let cut = blockStart(held, size);
      if (cut === 0) cut = blockStart(held, held.length - 1);
      if (cut === 0) break;
      const records = held.slice(0, cut);
      held = held.slice(cut);
      for (const r of records) through = Math.max(through, positionOf(r).block ?? through);
      yield { records, through };
    }
  }
  yield { records: held, through: undefined };
}

/** Index of the first record in the same block as `records[i]` (rows without a block: of the same date). */
function blockStart(records: readonly TransactionRecord[], i: number): number {
  const group = (r: TransactionRecord) => {
    const { block, date } = positionOf(r);
    return block ?? `@${date}`;
  };
  const at = group(records[i]!);
  while (i > 0 && group(records[i - 1]!) === at) i--;
  return i;
}

/** The whole chain answers oldest first: its pages from the horizon block on, as they come. */
async function* oldestFirst(rule: Rule, horizon: Horizon, ctx: FollowContext) {
  for await (const page of pacedPages(rule, { ...queryOf(rule, ctx), from_block: horizon.block }, ctx)) {
    yield page.transactions;
  }
}

/**
 * By contract and by token the pages come newest first: page down to the horizon, then hand the records on oldest
 * first. Up to `size` records are simply kept; beyond that only each page's continuation is kept, and the pages
 * are read again deepest first (the newest page from memory: it alone changes as records arrive). A page read
 * again must end with the record it ended with before, or PagesMoved ends the read.
 */
async function* newestFirst(rule: Rule, horizon: Horizon, ctx: FollowContext, size: number) {
  const query = queryOf(rule, ctx);
  const marks: { continuation: string; count: number; last: string }[] = [];
  let newestPage: TransactionRecord[] = [];
  let kept: TransactionRecord[] | undefined = [];
  let continuation: string | undefined;
  for await (const page of pacedPages(rule, query, ctx)) {
    const below = page.transactions.findIndex((r) => isBefore(r, horizon));
    const inWindow = below === -1 ? page.transactions : page.transactions.slice(0, below);
    if (continuation === undefined) newestPage = inWindow;
    else if (inWindow.length) {
      marks.push({ continuation, count: inWindow.length, last: stringifyJson(inWindow[inWindow.length - 1]) });
    }
    if (kept) kept = kept.length + inWindow.length > size ? undefined : kept.concat(inWindow);
    if (below !== -1) break;
    continuation = page.continuation;
  }
  if (kept) {
    yield kept.reverse();
    return;
  }
  for (const mark of marks.reverse()) {
    const again = (await onePage(rule, { ...query, continuation: mark.continuation }, ctx)).slice(0, mark.count);
    if (again.length < mark.count || stringifyJson(again[again.length - 1]) !== mark.last) throw new PagesMoved();
    yield again.reverse();
  }
  yield newestPage.slice().reverse();
}

/** How long to hold off after a failed read: a 429's Retry-After (or a minute without one); undefined otherwise. */
export function holdOffMs(err: unknown): number | undefined {
  if (!(err instanceof PageError) || err.payload.details.code !== "upstream_rate_limited") return undefined;
  const headers = (err.response as { headers?: Record<string, string | string[]> } | undefined)?.headers ?? {};
  return retryAfterMs(headers["retry-after"]) ?? 60_000;
}
