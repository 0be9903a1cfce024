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

const NONE: readonly unknown[] = [];

/** One address list of `owner` (own keys only); none when it is not an array. */
function listOf(owner: unknown, list: string): readonly unknown[] {
  const entries = isObject(owner) && Object.hasOwn(owner, list) ? owner[list] : undefined;
  return Array.isArray(entries) ? entries : NONE;
}

/**
 * Distinct recipients the upstream counts for one message (with the request's Globals applied). Written out list by
 * list, without loops over the list names: the node counts every message of a batch before anything is sent
 * (10,000 at once), mostly before V8 has optimised anything, where each iteration and call costs.
 */
export function recipientCount(message: unknown, globals?: unknown): number {
  const to = listOf(message, "To");
  const cc = listOf(message, "Cc");
  const bcc = listOf(message, "Bcc");
  const globalCc = globals === undefined ? NONE : listOf(globals, "Cc");
  const globalBcc = globals === undefined ? NONE : listOf(globals, "Bcc");
  const total = to.length + cc.length + bcc.length + globalCc.length + globalBcc.length;
  // Most messages have one recipient: nothing to tell apart.
  if (total < 2) return total;
  const distinct = new Set<string>();
  for (const entries of [to, cc, bcc, globalCc, globalBcc]) {
    // Lower case: the upstream counts an address once whatever its case; "" for an entry validation refuses.
    for (const entry of entries)
      distinct.add(isObject(entry) && typeof entry.Email === "string" ? entry.Email.toLowerCase() : "");
  }
  return distinct.size;
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
