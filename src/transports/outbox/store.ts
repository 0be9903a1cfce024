/**
 * The outbox on disk: each accepted message as `<id>.eml` (exactly the MIME the smtp transport would send) and
 * one line per message in `index.jsonl`. The .eml is written first and never overwritten, then the index line
 * is appended in one write: an interrupted send leaves at most an unindexed file, never a line without its
 * message, and concurrent senders never interleave lines.
 */
import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type ExactInteger, parseJson, stringifyJson } from "../../core/json.js";
import type { RenderedMessage } from "../mime/render.js";

export const INDEX_FILE = "index.jsonl";

export interface OutboxRecipient {
  Email: string;
  MessageUUID: string;
  MessageID: ExactInteger;
}

/** One line of the index. */
export interface OutboxEntry {
  id: string;
  /** When it was stored (ISO 8601, UTC). */
  date: string;
  from: string;
  to: string[];
  cc: string[];
  /** Bcc recipients live only here: the .eml, like the message on the wire, has no Bcc header. */
  bcc: string[];
  subject: string;
  custom_id: string;
  /** The Message-ID header. */
  message_id: string;
  file: string;
  size: number;
  recipients: OutboxRecipient[];
}

/** A new id that sorts by time: `20261121T060512123Z-a1b2c3`. */
export function newOutboxId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:.]/g, "");
  return `${stamp}-${randomBytes(3).toString("hex")}`;
}

export function fileUrl(dir: string, file: string): string {
  return pathToFileURL(resolve(dir, file)).href;
}

/** Creates the outbox directory if needed (once per send, not per message). */
export async function openOutbox(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
}

/** Stores one message in an opened outbox; `recipients` are the ids its result reports. */
export async function storeMessage(
  dir: string,
  id: string,
  message: RenderedMessage,
  recipients: OutboxRecipient[],
): Promise<OutboxEntry> {
  const file = `${id}.eml`;
  const entry: OutboxEntry = {
    id,
    date: new Date().toISOString(),
    from: message.from,
    to: message.recipients.To,
    cc: message.recipients.Cc,
    bcc: message.recipients.Bcc,
    subject: message.subject,
    custom_id: message.customId,
    message_id: message.messageId,
    file,
    size: message.raw.length,
    recipients,
  };
  await writeFile(join(dir, file), message.raw, { flag: "wx" });
  try {
    await appendFile(join(dir, INDEX_FILE), `${stringifyJson(entry)}\n`);
  } catch (err) {
    await rm(join(dir, file), { force: true }).catch(() => undefined);
    throw err;
  }
  return entry;
}

/** Every indexed message, oldest first. A missing outbox is an empty one. */
export async function listOutbox(dir: string): Promise<OutboxEntry[]> {
  let text: string;
  try {
    text = await readFile(join(dir, INDEX_FILE), "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  const entries: OutboxEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(parseJson(line) as OutboxEntry);
    } catch {
      // A line that cannot be read (cut short by a crash mid-append) is skipped, not fatal to the rest.
    }
  }
  return entries;
}

/** The entry whose id, Message-ID, or any recipient's MessageUUID or MessageID is `key`, with its .eml. */
export async function findInOutbox(dir: string, key: string): Promise<{ entry: OutboxEntry; eml: Buffer } | undefined> {
  const bare = key.replace(/^<|>$/g, "");
  const entry = (await listOutbox(dir)).find(
    (e) =>
      e.id === key ||
      e.message_id === `<${bare}>` ||
      e.recipients.some((r) => r.MessageUUID === key || String(r.MessageID) === key),
  );
  if (!entry) return undefined;
  return { entry, eml: await readFile(join(dir, entry.file)) };
}
