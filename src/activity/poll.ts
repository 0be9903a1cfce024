/**
 * New activity of a contract, a token or the whole chain, each record once: what the workflow packages' activity
 * trigger (Node-RED) and polling trigger (n8n) call on every poll, keeping the cursor it returns wherever their
 * host keeps state (a file, the workflow's static data). It reads through the one reader of new records
 * (reader.ts), the watch's too: its window rule and its paging.
 *
 * The cursor is plain JSON: where the newest record read sits, and the keys (records.ts) of the records within
 * `reorgDepth` blocks of it. Each poll reads back to that window again, so a record re-mined after a reorg or
 * arriving late in a block already read is seen, and the keys keep the ones already emitted from coming twice.
 *
 * Where a target starts: with a start block, everything from that block on is new and nothing before it ever is
 * (the re-read window included); the whole chain needs one. Without, the first poll of a contract or a token emits
 * nothing: it notes where the activity stands, so that only what appears afterwards is new.
 */
import { ChainmailError } from "../core/errors.js";
import type { RunContext } from "../core/node.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { filterPasses, type RecordFilter } from "./filter.js";
import {
  firstRecord,
  floorOfStart,
  horizonOf,
  isAfter,
  isBefore,
  NO_FLOOR,
  PagesMoved,
  type ReaderContext,
  type ReadTarget,
  readBatches,
} from "./reader.js";
import { later, type Position, positionOf, recordKeys } from "./records.js";

export type ActivityTarget =
  | { kind: "contract"; contract_address: string; type?: string[] | undefined; start_block?: number | undefined }
  | {
      kind: "token";
      contract_address: string;
      token_id: string;
      type?: string[] | undefined;
      start_block?: number | undefined;
    }
  | { kind: "chain"; type?: string[] | undefined; start_block?: number | undefined };

export const ACTIVITY_KINDS = ["contract", "token", "chain"] as const;

export interface ActivityCursor {
  /** What the cursor belongs to: a cursor of another target is not used. */
  target: string;
  /** The newest record read so far; absent until one was. */
  at?: Position | undefined;
  /** Keys of the records within the reorg window of `at`: taken already. */
  seen: string[];
}

export interface ActivityOptions {
  /** Blocks read again on every poll (and 12-second slots, for rows without a block). Default 12. */
  reorgDepth?: number | undefined;
  /** Only records that pass it are emitted (contracts: the whole chain kept to them); the read is the same. */
  filter?: RecordFilter | undefined;
  /** New records one poll emits at most (whole blocks); past it, the next poll goes on from there. */
  maxRecords?: number | undefined;
}

export interface ActivityPoll {
  /** New records, oldest first. */
  records: TransactionRecord[];
  cursor: ActivityCursor;
  /** More was new than `maxRecords`: the rest comes on the next poll. */
  truncated: boolean;
}

const PAGE_SIZE = 50;

/**
 * Seconds between a host's polls. A timer waits at most 2^31 - 1 ms: Node turns a longer wait into 1 ms, which
 * would poll without pause, so the longest interval is the longest wait a timer keeps (about 24.8 days).
 */
export const POLL_INTERVAL_SECONDS = { min: 1, max: Math.floor((2 ** 31 - 1) / 1000), default: 60 } as const;

/**
 * The wait between polls in milliseconds, from the seconds a host's user gave (a number or its text): within
 * POLL_INTERVAL_SECONDS, the default when not a number at all.
 */
export function pollInterval(seconds: unknown): number {
  const given = typeof seconds === "string" && seconds.trim() !== "" ? Number(seconds) : seconds;
  const { min, max } = POLL_INTERVAL_SECONDS;
  if (typeof given !== "number" || Number.isNaN(given)) return POLL_INTERVAL_SECONDS.default * 1000;
  return Math.round(Math.min(max, Math.max(min, given)) * 1000);
}

/** The cursor's `target`: kind, addresses in lower case, token, filter. */
export function targetKey(target: ActivityTarget): string {
  const address = target.kind === "chain" ? null : target.contract_address.toLowerCase();
  const token = target.kind === "token" ? target.token_id : null;
  return JSON.stringify([target.kind, address, token, [...(target.type ?? ["all"])].sort()]);
}

/** One poll: the records new since `cursor` (none on the first poll), and the cursor to keep for the next. */
export async function pollActivity(
  target: ActivityTarget,
  cursor: ActivityCursor | undefined,
  ctx: RunContext,
  options: ActivityOptions = {},
): Promise<ActivityPoll> {
  const reorgDepth = options.reorgDepth ?? 12;
  const maxRecords = options.maxRecords ?? 10_000;
  const key = targetKey(target);
  const current = cursor?.target === key ? cursor : undefined;
  const read: ReadTarget = readTargetOf(target);
  const reader: ReaderContext = { run: ctx, pageSize: PAGE_SIZE };
  const floor = target.start_block === undefined ? NO_FLOOR : floorOfStart(target.start_block);
  if (target.kind === "chain" && target.start_block === undefined) throw startBlockRequired();
  // Without a start block, the first poll only notes where the activity stands: the window of the newest record.
  const emits = current !== undefined || target.start_block !== undefined;
  let at = current?.at;
  if (!emits) {
    const newest = await firstRecord(read, reader);
    if (!newest) return { records: [], cursor: { target: key, seen: [] }, truncated: false };
    at = positionOf(newest);
  }
  const seen = new Set(current?.seen ?? []);
  const records: TransactionRecord[] = [];
  const taken: { key: string; record: TransactionRecord }[] = [];
  let truncated = false;
  try {
    for await (const batch of readBatches(read, horizonOf(floor, at, reorgDepth), reader)) {
      const keys = recordKeys(batch.records);
      batch.records.forEach((record, i) => {
        taken.push({ key: keys[i]!, record });
        at = later(at, positionOf(record));
        if (!emits || !isAfter(record, floor) || seen.has(keys[i]!)) return;
        if (!options.filter || filterPasses(options.filter, record)) records.push(record);
      });
      if (records.length >= maxRecords && batch.through !== undefined) {
        truncated = true;
        break;
      }
    }
  } catch (err) {
    // A long read whose pages moved: what was read so far stands, the next poll goes on from there.
    if (!(err instanceof PagesMoved)) throw err;
  }
  // What the next poll reads again, and so must know as taken: the window of the newest record read.
  const window = horizonOf(floor, at, reorgDepth);
  const kept = taken.filter((t) => !isBefore(t.record, window)).map((t) => t.key);
  return { records, cursor: { target: key, at, seen: kept }, truncated };
}

function readTargetOf(target: ActivityTarget): ReadTarget {
  const type = target.type;
  if (target.kind === "chain") return { kind: "on-chain", type };
  const { contract_address } = target;
  return target.kind === "token"
    ? { kind: "by-token", contract_address, token_id: target.token_id, type }
    : { kind: "by-contract", contract_address, type };
}

function startBlockRequired(): ChainmailError {
  return new ChainmailError("INVALID_INPUT", "Following the whole chain needs a start block.", {
    hint: "Set the start block: activity from that block on is new.",
    details: {
      violations: [
        {
          field: "start_block",
          rule: "required for the whole chain",
          message: "start_block is required to follow the whole chain",
        },
      ],
    },
  });
}
