/**
 * Several newest-first streams of records as one (NFT_SOURCE=index+opensea: the own index's on-chain records and
 * OpenSea's bids and listings), one page at a time, under one continuation bound to the query.
 *
 * A stream is a source's retriever call, paged by that source's own continuation. Where a stream stands is a
 * position: "`s` records into the records that follow continuation `c`", plus a short hash of the record just
 * before it; a source's records after a continuation do not depend on the page size asked, so a position stays
 * exact whatever pages it is read with. Each call reads `page_size` records (after the position) from every
 * stream and hands out `page_size` of them, each time the newest of the streams' next records by
 * `transaction_date` (on a tie the earlier stream's; a stream's own order is never changed), and never past the
 * last record read of a stream that has more: what that stream has not yet shown could come first. Each stream's
 * new position is right after its last record handed out.
 *
 * Nothing skipped, nothing twice: on resume the hash must name the record just before the position; when records
 * moved (new ones at the top of a stream read from its start) it is looked for among the records read, and reading
 * goes on right after it. A position whose record cannot be found is refused with `invalid_continuation`.
 */
import { createHash } from "node:crypto";
import { ChainmailError, type ErrorPayload } from "../core/errors.js";
import { stringifyJson } from "../core/json.js";
import type { RawResponse } from "../schemas/common.js";
import type { RetrieverResult, TransactionRecord } from "../schemas/transactions.js";
import type { RetrieverOutcome } from "./types.js";

/** One stream of a merge: a retriever call of one source, paged by that source's continuation. */
export interface Stream {
  /** Largest page the source serves. */
  maxPageSize: number;
  page(continuation: string | undefined, pageSize: number): Promise<RetrieverOutcome>;
}

/** Where a stream stands: `skip` records into the records after `continuation`; `end` once it has no more. */
interface Position {
  continuation?: string | undefined;
  skip: number;
  /** The hash of the record just before the position (the `skip`-th), when `skip` > 0. */
  hash?: string | undefined;
  end?: boolean;
}

export const DEFAULT_PAGE_SIZE = 50;
/** Source pages one stream may read in one call (each OpenSea one reads up to 10 of OpenSea's own). */
export const MAX_STREAM_PAGES = 4;
/** How far past its expected place the record before a position is looked for, when records moved. */
const SEARCH_SLACK = 1000;

const hashOf = (record: TransactionRecord): string =>
  createHash("sha256").update(stringifyJson(record)).digest("base64url").slice(0, 12);

interface Item {
  record: TransactionRecord;
  /** The position right after this record (without the hash of the record, added when the position is kept). */
  after: Position;
}

interface StreamRead {
  /** Records after the position, in the stream's order. */
  items: Item[];
  /** The position after everything read: where the stream stands once every item is taken. */
  frontier: Position;
  exhausted: boolean;
}

type ReadOutcome = { read: StreamRead; failed?: undefined } | { failed: RetrieverOutcome; read?: undefined };

/** Reads `need` records of a stream after a position (fewer when it ends or MAX_STREAM_PAGES were read). */
async function readStream(stream: Stream, from: Position, need: number): Promise<ReadOutcome> {
  if (from.end) return { read: { items: [], frontier: from, exhausted: true } };
  const buffer: Item[] = [];
  let start: number | undefined | null = from.skip === 0 ? 0 : undefined;
  let continuation = from.continuation;
  let frontier: Position = from;
  let exhausted = false;
  for (let pages = 0; pages < MAX_STREAM_PAGES; pages++) {
    const wanted = (start ?? from.skip) + need - buffer.length;
    const outcome = await stream.page(continuation, Math.min(stream.maxPageSize, Math.max(1, wanted)));
    if (!outcome.data) return { failed: outcome };
    const rows = outcome.data.transactions;
    const next = outcome.data.continuation || undefined;
    rows.forEach((record, k) => {
      const last = k === rows.length - 1;
      const after: Position =
        last && next !== undefined
          ? { continuation: next, skip: 0 }
          : last
            ? { skip: 0, end: true }
            : { continuation, skip: k + 1 };
      buffer.push({ record, after });
    });
    frontier = next === undefined ? { skip: 0, end: true } : { continuation: next, skip: 0 };
    exhausted = next === undefined;
    if (start === undefined) start = findStart(buffer, from, exhausted);
    if (start === null) return { failed: moved() };
    if (exhausted || (start !== undefined && buffer.length - start >= need)) break;
    continuation = next;
  }
  if (start === undefined || start === null) return { failed: moved() };
  return { read: { items: buffer.slice(start), frontier, exhausted } };
}

/**
 * Where reading starts in the buffer: right after the record the position's hash names, expected at `skip` - 1;
 * undefined while it may still come, null when it cannot be found.
 */
function findStart(buffer: readonly Item[], from: Position, exhausted: boolean): number | undefined | null {
  if (buffer.length >= from.skip && hashOf(buffer[from.skip - 1]!.record) === from.hash) return from.skip;
  const found = buffer.findIndex((item) => hashOf(item.record) === from.hash);
  if (found >= 0) return found + 1;
  return exhausted || buffer.length >= from.skip + SEARCH_SLACK ? null : undefined;
}

function moved(): RetrieverOutcome {
  return refuse(
    new ChainmailError(
      "INVALID_CONTINUATION",
      "query.continuation points into records that have changed since it was issued (the record before it is gone).",
      {
        hint: "Start again without query.continuation.",
        details: { field: "query.continuation" },
      },
    ).toPayload(),
  );
}

function refuse(payload: ErrorPayload): RetrieverOutcome {
  return { error: payload, response: raw(400, stringifyJson(payload)) };
}

function raw(status: number, body: string): RawResponse {
  return { status, headers: { "content-type": "application/json", "x-chainmail-source": "index+opensea" }, body };
}

// ---- continuation: base64url(JSON of positions).<mac>, mac = sha256(query fingerprint | JSON) ----

type Packed = [string | null, number, string | null, 0 | 1];

const macOf = (fingerprint: string, json: string) =>
  createHash("sha256").update(`${fingerprint}|${json}`).digest("base64url").slice(0, 16);

function encodeContinuation(positions: readonly Position[], fingerprint: string): string {
  const json = JSON.stringify(
    positions.map((p): Packed => [p.continuation ?? null, p.skip, p.hash ?? null, p.end ? 1 : 0]),
  );
  return `${Buffer.from(json, "utf8").toString("base64url")}.${macOf(fingerprint, json)}`;
}

function decodeContinuation(token: string, fingerprint: string, streams: number): Position[] | undefined {
  const match = /^([A-Za-z0-9_-]{1,1000})\.([A-Za-z0-9_-]{16})$/.exec(token);
  if (!match) return undefined;
  const json = Buffer.from(match[1]!, "base64url").toString("utf8");
  if (macOf(fingerprint, json) !== match[2]) return undefined;
  let packed: unknown;
  try {
    packed = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!Array.isArray(packed) || packed.length !== streams) return undefined;
  const positions: Position[] = [];
  for (const p of packed as unknown[]) {
    if (!Array.isArray(p) || p.length !== 4) return undefined;
    const [continuation, skip, hash, end] = p as unknown[];
    if (continuation !== null && typeof continuation !== "string") return undefined;
    if (!Number.isSafeInteger(skip) || (skip as number) < 0) return undefined;
    if (hash !== null && typeof hash !== "string") return undefined;
    positions.push({
      ...(continuation === null ? {} : { continuation }),
      skip: skip as number,
      ...(hash === null ? {} : { hash }),
      ...(end === 1 ? { end: true } : {}),
    });
  }
  return positions;
}

// ---- the merge ----

/** One page of the streams merged newest first. `fingerprint` binds the continuation to the query. */
export async function mergeNewestFirst(
  streams: readonly Stream[],
  paging: { continuation?: string | undefined; page_size?: number | undefined },
  fingerprint: string,
): Promise<RetrieverOutcome> {
  const pageSize = paging.page_size ?? DEFAULT_PAGE_SIZE;
  let positions: Position[] = streams.map(() => ({ skip: 0 }));
  if (paging.continuation) {
    const decoded = decodeContinuation(paging.continuation, fingerprint, streams.length);
    if (!decoded) {
      return refuse(
        new ChainmailError("INVALID_CONTINUATION", "query.continuation is not one this source issued for this query.", {
          hint: "Pass query.continuation exactly as the previous page of the same query returned it, or omit it to start over.",
          details: { field: "query.continuation", source: "index+opensea" },
        }).toPayload(),
      );
    }
    positions = decoded;
  }

  const reads: StreamRead[] = [];
  for (let i = 0; i < streams.length; i++) {
    const outcome = await readStream(streams[i]!, positions[i]!, pageSize);
    if (outcome.failed) return outcome.failed;
    reads.push(outcome.read);
  }

  const { taken, heads } = takeNewest(reads, pageSize);
  const next = reads.map((read, stream): Position => {
    const count = heads[stream]!;
    if (count === read.items.length) return read.frontier;
    if (count === 0) return positions[stream]!;
    // The record before a position inside a page is named by its hash, computed only for the one position kept.
    const { record, after } = read.items[count - 1]!;
    return after.skip > 0 ? { ...after, hash: hashOf(record) } : after;
  });
  const transactions = taken.map((t) => t.record);
  const continuation = next.every((p) => p.end) ? "" : encodeContinuation(next, fingerprint);
  const data: RetrieverResult = { response: "OK", transactions, continuation };
  const body = stringifyJson({ response: "OK", transactions, ...(continuation ? { continuation } : {}) });
  return { data, response: raw(200, body) };
}

/** A k-way merge: each stream keeps its own order, the newest head goes first (on a tie the earlier stream). */
function takeNewest(reads: StreamRead[], pageSize: number) {
  const heads = reads.map(() => 0);
  const taken: { stream: number; record: TransactionRecord }[] = [];
  while (taken.length < pageSize) {
    let best = -1;
    reads.forEach((read, stream) => {
      if (heads[stream]! >= read.items.length) return;
      if (best < 0 || date(read.items[heads[stream]!]!.record) > date(reads[best]!.items[heads[best]!]!.record)) {
        best = stream;
      }
    });
    if (best < 0 || !mayTake(reads, heads, best)) break;
    taken.push({ stream: best, record: reads[best]!.items[heads[best]!]!.record });
    heads[best]!++;
  }
  return { taken, heads };
}

const date = (record: TransactionRecord): string =>
  String((record as { transaction_date?: unknown }).transaction_date ?? "");

/**
 * Whether the head of stream `from` may be handed out now: not while a stream that has more than it showed has
 * shown all it read, unless that head comes before anything that stream can still show (newer than its last
 * record, or as new and from an earlier stream).
 */
function mayTake(reads: readonly StreamRead[], heads: readonly number[], from: number): boolean {
  const head = date(reads[from]!.items[heads[from]!]!.record);
  return reads.every((read, stream) => {
    if (stream === from || read.exhausted || heads[stream]! < read.items.length) return true;
    const last = read.items[read.items.length - 1];
    if (!last) return false;
    return head > date(last.record) || (head === date(last.record) && from < stream);
  });
}
