/**
 * New activity of a contract, a token or the whole chain, each record once: what the workflow packages' activity
 * trigger (Node-RED) and polling trigger (n8n) call on every poll, keeping the cursor it returns wherever their
 * host keeps state (a file, the workflow's static data).
 *
 * The cursor is plain JSON: where the newest record read sits, and the keys (records.ts) of the records within
 * `reorgDepth` blocks of it. Each poll reads back to that window again, so a record re-mined after a reorg or
 * arriving late in a block already read is seen, and the keys keep the ones already emitted from coming twice.
 * By contract and by token the upstream answers newest first: a poll pages down to the window. The whole chain
 * answers oldest first: a poll starts at the window's first block and pages up to the end.
 *
 * The first poll of a contract or a token emits nothing: it notes where the activity stands, so that only what
 * appears afterwards is new. The whole chain starts at `start_block`: everything from there on is new.
 */
import { ChainmailError } from "../core/errors.js";
import type { RunContext } from "../core/node.js";
import { pagesWith } from "../core/paginate.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../nodes/index.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { type Position, positionOf, recordKeys } from "./records.js";

export type ActivityTarget =
  | { kind: "contract"; contract_address: string; type?: string[] | undefined }
  | { kind: "token"; contract_address: string; token_id: string; type?: string[] | undefined }
  | { kind: "chain"; type?: string[] | undefined; start_block?: number | undefined };

export const ACTIVITY_KINDS = ["contract", "token", "chain"] as const;

export interface ActivityCursor {
  /** What the cursor belongs to: a cursor of another target is not used. */
  target: string;
  /** The newest record read so far; absent until one was. */
  at?: Position | undefined;
  /** Keys of the records within the reorg window of `at`: taken already. */
  seen: string[];
  /** The whole chain before its first record: the block to read from. */
  from_block?: number | undefined;
}

export interface ActivityOptions {
  /** Blocks read again on every poll (and 12-second slots, for rows without a block). Default 12. */
  reorgDepth?: number | undefined;
  /** Records one poll reads at most; past it the whole chain goes on next poll, newest-first kinds skip ahead. */
  maxRecords?: number | undefined;
}

export interface ActivityPoll {
  /** New records, oldest first. */
  records: TransactionRecord[];
  cursor: ActivityCursor;
  /** More was new than `maxRecords`: by contract or token the oldest of it was skipped. */
  truncated: boolean;
}

const SECONDS_PER_BLOCK = 12;
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
  if (target.kind === "chain") return pollChain(target, current, ctx, key, reorgDepth, maxRecords);

  const node = target.kind === "token" ? nftTransactionsByToken : nftTransactionsByContract;
  const query = {
    contract_address: target.contract_address,
    ...(target.kind === "token" ? { token_id: target.token_id } : {}),
    ...(target.type ? { type: target.type } : {}),
    page_size: PAGE_SIZE,
  };
  // The first poll reads down to the window of the newest record: its keys are what the next poll must skip.
  let window = current?.at ? windowStart(current.at, reorgDepth) : undefined;
  const read: TransactionRecord[] = [];
  let truncated = false;
  for await (const page of pagesWith<TransactionRecord>(node, { query }, {}, ctx)) {
    if (!window && page.transactions.length) window = windowStart(positionOf(page.transactions[0]!), reorgDepth);
    const reached = window;
    const below = reached ? page.transactions.findIndex((r) => isBefore(r, reached)) : -1;
    read.push(...(below === -1 ? page.transactions : page.transactions.slice(0, below)));
    if (below !== -1) break;
    if (read.length >= maxRecords) {
      truncated = true;
      break;
    }
  }
  const oldestFirst = read.reverse();
  return settle(oldestFirst, current, key, reorgDepth, truncated);
}

async function pollChain(
  target: ActivityTarget & { kind: "chain" },
  current: ActivityCursor | undefined,
  ctx: RunContext,
  key: string,
  reorgDepth: number,
  maxRecords: number,
): Promise<ActivityPoll> {
  const resume = current?.at?.block !== undefined ? windowStart(current.at, reorgDepth).block : current?.from_block;
  // The start block bounds every read, the re-read window included: nothing before it is ever new.
  const start = target.start_block;
  const from = resume === undefined ? start : start === undefined ? resume : Math.max(resume, start);
  if (from === undefined) {
    throw new ChainmailError("INVALID_INPUT", "Following the whole chain needs a start block.", {
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
  const query = { ...(target.type ? { type: target.type } : {}), from_block: from, page_size: PAGE_SIZE };
  const read: TransactionRecord[] = [];
  let truncated = false;
  for await (const page of pagesWith<TransactionRecord>(nftTransactionsOnChain, { query }, {}, ctx)) {
    // An upstream that answers a record before `from_block` does not get it through.
    read.push(...page.transactions.filter((r) => !isBefore(r, { block: from, date: "" })));
    if (read.length >= maxRecords && page.continuation) {
      // Whole blocks only: the last block may go on in the next page; the next poll reads it again.
      const last = positionOf(read[read.length - 1]!).block;
      while (read.length > 1 && positionOf(read[read.length - 1]!).block === last) read.pop();
      truncated = true;
      break;
    }
  }
  if (!current) {
    // The first poll: everything from the start block on is new, up to the end.
    const cursor: ActivityCursor = { target: key, seen: [], from_block: from };
    return settle(read, cursor, key, reorgDepth, truncated);
  }
  return settle(read, current, key, reorgDepth, truncated);
}

/** New records (keys not seen) and the cursor after them. `read` is oldest first and covers the whole window. */
function settle(
  read: TransactionRecord[],
  current: ActivityCursor | undefined,
  key: string,
  reorgDepth: number,
  truncated: boolean,
): ActivityPoll {
  const keys = recordKeys(read);
  const newest = read.length ? positionOf(read[read.length - 1]!) : current?.at;
  const window = newest ? windowStart(newest, reorgDepth) : undefined;
  const seen = new Set(current?.seen ?? []);
  const records = current ? read.filter((_, i) => !seen.has(keys[i]!)) : [];
  const cursor: ActivityCursor = {
    target: key,
    at: newest,
    seen: keys.filter((_, i) => window !== undefined && !isBefore(read[i]!, window)),
  };
  if (!newest && current?.from_block !== undefined) cursor.from_block = current.from_block;
  return { records, cursor, truncated };
}

interface Window {
  block: number;
  date: string;
}

/** The oldest point a poll reads again: `reorgDepth` blocks (or that many slots) before `at`. */
function windowStart(at: Position, reorgDepth: number): Window {
  const back = new Date(Date.parse(`${at.date}Z`) - reorgDepth * SECONDS_PER_BLOCK * 1000);
  const date = Number.isNaN(back.getTime()) ? "" : back.toISOString().slice(0, 19);
  return { block: at.block === undefined ? Number.NEGATIVE_INFINITY : Math.max(0, at.block - reorgDepth), date };
}

function isBefore(record: TransactionRecord, window: Window): boolean {
  const { block, date } = positionOf(record);
  return block !== undefined && Number.isFinite(window.block) ? block < window.block : date < window.date;
}
