/**
 * Splitting a batch into Send API calls. Mailjet accepts at most 50 recipients per call, To + Cc + Bcc across
 * every message (a duplicate address within one message counts once), and at most 50 messages per call.
 * `Globals.Cc` / `Globals.Bcc` are added to every message by the upstream, so they count for each one.
 */
import { isObject } from "../message-rules.js";

export const MAX_RECIPIENTS_PER_CALL = 50;
const MAX_MESSAGES_PER_CALL = 50;

/** One call: messages `first`..`last` (inclusive, input indexes). */
export interface Chunk {
  index: number;
  first: number;
  last: number;
}

const LISTS = ["To", "Cc", "Bcc"] as const;
const GLOBAL_LISTS = ["Cc", "Bcc"] as const;

/** Adds the addresses of `owner`'s lists (own keys only), lower case; "" for an entry validation refuses. */
function addAddresses(owner: unknown, lists: readonly string[], into: string[]): void {
  if (!isObject(owner)) return;
  for (const list of lists) {
    const entries = Object.hasOwn(owner, list) ? owner[list] : undefined;
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      into.push(isObject(entry) && typeof entry.Email === "string" ? entry.Email.toLowerCase() : "");
    }
  }
}

/** Distinct recipients the upstream counts for one message (with the request's Globals applied). */
export function recipientCount(message: unknown, globals?: unknown): number {
  const all: string[] = [];
  addAddresses(message, LISTS, all);
  addAddresses(globals, GLOBAL_LISTS, all);
  // Most messages have one recipient: no set needed to count it.
  return all.length < 2 ? all.length : new Set(all).size;
}

/**
 * Greedy split in input order: each chunk takes messages until the next one would pass a limit. Counting per
 * message over-counts an address shared by two messages, which only makes a chunk smaller, never too large.
 * A single message above the limit gets a chunk of its own (the node rejects such input before this point).
 */
export function splitIntoChunks(messages: readonly unknown[], globals?: unknown): Chunk[] {
  const chunks: Chunk[] = [];
  let first = 0;
  let recipients = 0;
  for (let i = 0; i < messages.length; i++) {
    const count = recipientCount(messages[i], globals);
    const full = i - first >= MAX_MESSAGES_PER_CALL || recipients + count > MAX_RECIPIENTS_PER_CALL;
    if (i > first && full) {
      chunks.push({ index: chunks.length, first, last: i - 1 });
      first = i;
      recipients = 0;
    }
    recipients += count;
  }
  if (messages.length > first) chunks.push({ index: chunks.length, first, last: messages.length - 1 });
  return chunks;
}
