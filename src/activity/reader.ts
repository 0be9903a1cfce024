/**
 * The one reader of new records, for `chainmail watch` and the workflow packages' triggers alike: what a read
 * covers (the window rule) and the read itself, through a retriever node.
 *
 * The window rule: a read starts at its horizon, the newest record already read less `reorgDepth` blocks (and,
 * for rows without a block, such as bids and listings, that many 12-second slots), never below the floor, the
 * point at or before which nothing is ever new (a rule's or a trigger's start block less one). Records in the
 * window are read again on every poll, so a reorg that replaced blocks there is seen (records gone, records new)
 * and the caller's record keys keep what was already taken from being taken twice. A bound without a block (a
 * floor that is a listing) is compared by date.
 *
 * By contract and by token the retrievers answer newest first, so "new" is at the top: a read pages down from the
 * newest record, by continuation, until it passes the horizon, then hands the records on oldest first. The whole
 * chain answers oldest first: a read starts at the horizon block (`from_block`) and pages up to the end. Either
 * way a read covers whole blocks and costs what is new plus the window, and a long read reaches its caller in
 * bounded batches, oldest first.
 */
import { ChainmailError } from "../core/errors.js";
import { stringifyJson } from "../core/json.js";
import { type AnyNode, type RunContext, runNodeWith } from "../core/node.js";
import { PageError, pagesWith } from "../core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../nodes/index.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { type Position, positionOf } from "./records.js";

/** What a read asks its retriever: a contract's records, a token's, or the whole chain's. */
export interface ReadTarget {
  kind: "by-contract" | "by-token" | "on-chain";
  contract_address?: string | undefined;
  token_id?: string | undefined;
  type?: readonly string[] | undefined;
}

export interface ReaderContext {
  run: RunContext;
  /** Records per page asked of the retriever. */
  pageSize: number;
  /** Spaces the calls (a source's per-second limit); absent: no pause. */
  pacer?: { wait(signal?: AbortSignal): Promise<void> } | undefined;
}

const SECONDS_PER_BLOCK = 12;

/** Nothing is before it: every record is new. */
export const NO_FLOOR: Position = { block: undefined, date: "" };

/** The floor of a start block: records before it are never new (rows without a block: those dated after `date`). */
export const floorOfStart = (startBlock: number, date = ""): Position => ({ block: startBlock - 1, date });

/** The oldest point a read covers; `block` undefined: only a date is known, records are compared by date. */
export interface Horizon {
  block: number | undefined;
  date: string;
}

/** The window rule: the newest record read less the reorg window, never below the floor. */
export function horizonOf(floor: Position, read: Position | undefined, reorgDepth: number): Horizon {
  const blocks: number[] = [];
  if (floor.block !== undefined) blocks.push(floor.block + 1);
  if (read?.block !== undefined) blocks.push(read.block - reorgDepth);
  let date = floor.date;
  if (read) {
    const back = new Date(Date.parse(`${read.date}Z`) - reorgDepth * SECONDS_PER_BLOCK * 1000);
    const readFloor = Number.isNaN(back.getTime()) ? "" : back.toISOString().slice(0, 19);
    if (readFloor > date) date = readFloor;
  }
  // No block known: a date bounds by date; nothing known at all: from the chain's first block.
  const block = blocks.length ? Math.max(0, ...blocks) : date ? undefined : 0;
  return { block, date };
}

/** Whether a record lies before a bound: by block when both have one, by date otherwise. */
function compare(record: TransactionRecord, bound: { block: number | undefined; date: string }): number {
  const { block, date } = positionOf(record);
  if (block !== undefined && bound.block !== undefined) return block - bound.block;
  return date < bound.date ? -1 : date > bound.date ? 1 : 0;
}

export const isBefore = (record: TransactionRecord, horizon: Horizon): boolean => compare(record, horizon) < 0;

/** Records after the floor: with a block, a later block; without one (or a floor without one), a later date. */
export const isAfter = (record: TransactionRecord, floor: Position): boolean => compare(record, floor) > 0;

/** The block a read of the whole chain starts at. */
const firstBlockOf = (horizon: Horizon) => horizon.block ?? 0;

function nodeOf(target: ReadTarget): AnyNode {
  return target.kind === "by-token"
    ? nftTransactionsByToken
    : target.kind === "by-contract"
      ? nftTransactionsByContract
      : nftTransactionsOnChain;
}

function queryOf(target: ReadTarget, ctx: ReaderContext): Record<string, unknown> {
  return {
    ...(target.contract_address !== undefined ? { contract_address: target.contract_address } : {}),
    ...(target.token_id !== undefined ? { token_id: target.token_id } : {}),
    ...(target.type !== undefined ? { type: target.type } : {}),
    page_size: ctx.pageSize,
  };
}

/** `pages` of the target's retriever, each page fetched only when the pacer allows. */
async function* pacedPages(target: ReadTarget, query: Record<string, unknown>, ctx: ReaderContext) {
  const iterator = pagesWith<TransactionRecord>(nodeOf(target), { query }, {}, ctx.run)[Symbol.asyncIterator]();
  try {
    for (;;) {
      await ctx.pacer?.wait(ctx.run.signal);
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.(undefined);
  }
}

/** One page of the target's retriever (at its turn with the pacer). */
async function onePage(
  target: ReadTarget,
  query: Record<string, unknown>,
  ctx: ReaderContext,
): Promise<TransactionRecord[]> {
  await ctx.pacer?.wait(ctx.run.signal);
  const out = (await runNodeWith(nodeOf(target), { query }, ctx.run)) as {
    data?: { transactions: TransactionRecord[] };
    error?: PageError["payload"];
    response?: unknown;
  };
  if (!out.data) throw new PageError(out.error!, out.response, undefined);
  return out.data.transactions;
}

/** The target's first record, from `from_block` on for the whole chain (newest first otherwise). */
export async function firstRecord(
  target: ReadTarget,
  ctx: ReaderContext,
  fromBlock?: number,
): Promise<TransactionRecord | undefined> {
  const query = {
    ...queryOf(target, ctx),
    page_size: 1,
    ...(fromBlock === undefined ? {} : { from_block: fromBlock }),
  };
  return (await onePage(target, query, ctx))[0];
}

/** Records a read holds at once: more than this (a far start block, a long outage) are taken in batches. */
export const READ_BATCH = 1000;

/** Records from the horizon on, oldest first, as a read hands them on. */
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
      { details: { pages_moved: true } },
    );
  }
}

/**
 * Every record from the horizon on, oldest first, in batches of at most `size` records (a single block with more
 * is a batch of its own), so a read of any length holds about a batch and a page in memory. Each batch is handed
 * on before the next is read: a caller that takes each batch before asking for the next only moves its read
 * position past records it took.
 */
export async function* readBatches(
  target: ReadTarget,
  horizon: Horizon,
  ctx: ReaderContext,
  size = READ_BATCH,
): AsyncGenerator<ReadBatch> {
  const chunks =
    target.kind === "on-chain" ? oldestFirst(target, horizon, ctx) : newestFirst(target, horizon, ctx, size);
  let held: TransactionRecord[] = [];
  let through = firstBlockOf(horizon) - 1;
  for await (const chunk of chunks) {
    held = held.concat(chunk);
    while (held.length > size) {
      // Cut before the block that goes past `size`; a block larger than a batch is a batch of its own, once whole.
      let cut = blockStart(held, size);
      if (cut === 0) cut = blockEnd(held, 0);
      if (cut === held.length) break;
      const records = held.slice(0, cut);
      held = held.slice(cut);
      for (const r of records) through = Math.max(through, positionOf(r).block ?? through);
      yield { records, through };
    }
  }
  yield { records: held, through: undefined };
}

/** The block a record is in (rows without a block: its date). */
function groupOf(record: TransactionRecord): number | string {
  const { block, date } = positionOf(record);
  return block ?? `@${date}`;
}

/** Index of the first record in the same block as `records[i]` (rows without a block: of the same date). */
function blockStart(records: readonly TransactionRecord[], i: number): number {
  const at = groupOf(records[i]!);
  while (i > 0 && groupOf(records[i - 1]!) === at) i--;
  return i;
}

/** Index just past the last record in the same block as `records[i]`. */
function blockEnd(records: readonly TransactionRecord[], i: number): number {
  const at = groupOf(records[i]!);
  while (i < records.length && groupOf(records[i]!) === at) i++;
  return i;
}

/** The whole chain answers oldest first: its pages from the horizon block on, as they come. */
async function* oldestFirst(target: ReadTarget, horizon: Horizon, ctx: ReaderContext) {
  const query = { ...queryOf(target, ctx), from_block: firstBlockOf(horizon) };
  for await (const page of pacedPages(target, query, ctx)) {
    // An upstream that answers a record before `from_block` does not get it through.
    yield page.transactions.filter((r) => !isBefore(r, horizon));
  }
}

/**
 * By contract and by token the pages come newest first: page down to the horizon, then hand the records on oldest
 * first. Up to `size` records are simply kept; beyond that only each page's continuation is kept, and the pages
 * are read again deepest first (the newest page from memory: it alone changes as records arrive). A page read
 * again must end with the record it ended with before, or PagesMoved ends the read.
 */
async function* newestFirst(target: ReadTarget, horizon: Horizon, ctx: ReaderContext, size: number) {
  const query = queryOf(target, ctx);
  const marks: { continuation: string; count: number; last: string }[] = [];
  let newestPage: TransactionRecord[] = [];
  let kept: TransactionRecord[] | undefined = [];
  let continuation: string | undefined;
  for await (const page of pacedPages(target, query, ctx)) {
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
    const again = (await onePage(target, { ...query, continuation: mark.continuation }, ctx)).slice(0, mark.count);
    if (again.length < mark.count || stringifyJson(again[again.length - 1]) !== mark.last) throw new PagesMoved();
    yield again.reverse();
  }
  yield newestPage.slice().reverse();
}
