/**
 * Every page of a retriever node. Pages are fetched one at a time and handed on, so memory stays flat however
 * many pages there are. Paging stops on a missing, empty or repeated continuation, and never overshoots `limit`:
 * the last request asks only for the records still wanted, so the continuation it returns resumes exactly after
 * the last record handed out. An empty page that carries a continuation is not the end (a filtered node such as
 * by-contract with `type: ["bid"]` may find nothing in one call and more later), but after
 * MAX_EMPTY_PAGES of them in a row paging stops, handing out that continuation to resume from.
 */
import { ChainmailError, type ErrorPayload } from "./errors.js";
import { type AnyNode, type RunContext, runNode, runNodeWith, type WalkMemory } from "./node.js";

/** NFTPort's largest page; used when a limit needs a page size and the input gave none. */
export const MAX_PAGE_SIZE = 50;

/** Consecutive empty pages after which paging gives up, so an upstream looping with fresh continuations ends. */
export const MAX_EMPTY_PAGES = 100;

export interface PaginateOptions {
  /** Stop after exactly this many records. */
  limit?: number | undefined;
  /** Called after each page (progress). */
  onPage?: ((page: PageInfo) => void) | undefined;
}

export interface PageInfo {
  page: number;
  records: number;
  total: number;
  continuation: string;
}

export interface Page<R = unknown> {
  transactions: R[];
  /** Resumes right after the last record of this page; `""` when there is nothing more. */
  continuation: string;
  response: unknown;
}

/** Thrown by the iterators when a page fails; `payload` is the node's error output. */
export class PageError extends ChainmailError {
  constructor(
    readonly payload: ErrorPayload,
    readonly response: unknown,
    /** The continuation of the last page that succeeded: resume from here. */
    readonly resumeFrom: string | undefined,
  ) {
    super(payload.details.code, payload.error, { details: payload.details });
  }
}

type Input = { query?: Record<string, unknown>; [port: string]: unknown };

/** Yields each page of a retriever node's results. */
export function pages<R = unknown>(
  node: AnyNode,
  input: Input,
  options: PaginateOptions = {},
  ctx: Partial<RunContext> = {},
): AsyncGenerator<Page<R>> {
  return pagesOf((pageInput, walk) => runNode(node, pageInput, { ...ctx, walk }), input, options);
}

/** `pages` with the whole context given (a workflow host's config: see `runNodeWith`). */
export function pagesWith<R = unknown>(
  node: AnyNode,
  input: Input,
  options: PaginateOptions,
  ctx: RunContext,
): AsyncGenerator<Page<R>> {
  return pagesOf((pageInput, walk) => runNodeWith(node, pageInput, { ...ctx, walk }), input, options);
}

function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
    throw new ChainmailError("INVALID_INPUT", `limit = ${limit} is invalid: must be an integer >= 0.`, {
      details: { violations: [{ field: "limit", value: limit, rule: "an integer >= 0" }] },
    });
  }
}

/** The query of one page: the caller's, resuming at `continuation`, asking for no more than `wanted` records. */
function pageQuery(query: Record<string, unknown>, continuation: string | undefined, wanted: number | undefined) {
  const pageSize = typeof query.page_size === "number" ? query.page_size : undefined;
  const size = wanted === undefined ? pageSize : Math.min(pageSize ?? MAX_PAGE_SIZE, wanted);
  const out = { ...query, continuation, page_size: size };
  if (continuation === undefined) delete out.continuation;
  if (size === undefined) delete out.page_size;
  return out;
}

/** A page's records (no more than `wanted`) and next continuation; a node's error as a PageError. */
function pageOf<R>(output: unknown, continuation: string | undefined, wanted: number | undefined) {
  const { data, response, error } = output as {
    data?: { transactions: R[]; continuation: string };
    response?: unknown;
    error?: ErrorPayload;
  };
  if (!data) {
    const payload = error ?? new ChainmailError("INTERNAL", "The node returned neither data nor error.").toPayload();
    throw new PageError(payload, response, continuation);
  }
  // The upstream sent more than asked: hand out what was wanted. Its continuation would skip the rest.
  if (wanted !== undefined && data.transactions.length > wanted) {
    return { transactions: data.transactions.slice(0, wanted), next: "", response };
  }
  return { transactions: data.transactions, next: data.continuation, response };
}

async function* pagesOf<R>(
  run: (input: Input, walk: WalkMemory) => Promise<unknown>,
  input: Input,
  options: PaginateOptions,
): AsyncGenerator<Page<R>> {
  const { limit } = options;
  checkLimit(limit);
  const seen = new Set<string>();
  // One memory for every page of this walk: a source keeps there what spans its pages (the OpenSea source: every
  // cursor seen, so a cycle of any length is caught, and the records handed out, so a repeated event comes once).
  const walk: WalkMemory = new Map();
  // Own properties only, as runNode reads them: an inherited `query` is not the caller's query.
  const given = Object.hasOwn(input, "query") ? input.query : undefined;
  const query: Record<string, unknown> = { ...(typeof given === "object" && given !== null ? given : {}) };
  let continuation = typeof query.continuation === "string" ? query.continuation : undefined;
  let total = 0;
  let emptyInARow = 0;
  for (let page = 1; ; page++) {
    if (limit !== undefined && total >= limit) return;
    const wanted = limit === undefined ? undefined : limit - total;
    const output = await run({ ...input, query: pageQuery(query, continuation, wanted) }, walk);
    const { transactions, next, response } = pageOf<R>(output, continuation, wanted);
    total += transactions.length;
    const repeated = next !== "" && seen.has(next);
    if (next) seen.add(next);
    if (continuation) seen.add(continuation);
    emptyInARow = transactions.length === 0 ? emptyInARow + 1 : 0;
    const done = !next || repeated || next === continuation;
    // Giving up on empty pages is not the end of the history: the continuation stays, to resume from later.
    const givingUp = !done && emptyInARow >= MAX_EMPTY_PAGES;
    options.onPage?.({ page, records: transactions.length, total, continuation: done ? "" : next });
    yield { transactions, continuation: done ? "" : next, response };
    if (done || givingUp) return;
    continuation = next;
  }
}

/** Yields every record across pages, up to `limit`. */
export async function* records<R = unknown>(
  node: AnyNode,
  input: Input,
  options: PaginateOptions = {},
  ctx: Partial<RunContext> = {},
): AsyncGenerator<R> {
  for await (const page of pages<R>(node, input, options, ctx)) yield* page.transactions;
}
