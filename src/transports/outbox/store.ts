/**
 * The outbox on disk: each accepted message as `<id>.eml` (exactly the MIME the smtp transport would send) and
 * one line per message in `index.jsonl`. A message is written whole under a partial name first
 * (`<id>.eml.<host>-<pid>.partial`, never overwritten), then its index line is appended in one write (the commit:
 * concurrent senders never interleave lines), then the file takes its name. A sender killed at any moment leaves
 * at most a partial file: without its line it was never stored and is removed once its writer is gone; with its
 * line it was, and takes its name. `recoverOutbox` does both, so each stored message has exactly one `.eml`.
 */
import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
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

/** Outboxes already recovered by this process: leftovers are only ever made by a process that died. */
const recovered = new Map<string, Promise<void>>();

/** Creates the outbox directory if needed and recovers what a killed sender left (once per process). */
export async function openOutbox(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await recoverOnce(dir);
}

/** Recovers an outbox once per process (before this process writes to it); later calls wait for that. */
export function recoverOnce(dir: string): Promise<void> {
  const key = resolve(dir);
  let done = recovered.get(key);
  if (!done) {
    done = recoverOutbox(dir).then(() => undefined);
    recovered.set(key, done);
    done.catch(() => recovered.delete(key));
  }
  return done;
}

/** This host, as it appears in partial names (a partial's writer can only be judged alive on its own host). */
const HOST = hostname().replace(/[^A-Za-z0-9_-]/g, "_") || "host";
const PARTIAL = /^(.+\.eml)\.([A-Za-z0-9_-]+)-(\d+)\.partial$/;

const partialName = (file: string) => `${file}.${HOST}-${process.pid}.partial`;
/** Partial files this process is writing right now. */
const writing = new Set<string>();

/** Gives a stored message its name, unless another process (its writer, or a recovery) just did. */
async function renameIfThere(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/** Whether the process `pid` of this host still runs (a live writer's partial file is not a leftover). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Finishes or removes what senders killed midway left: a partial file whose index line was written takes its name
 * (it was stored); one without a line, whose writer no longer runs on this host, is removed (it never was). Files
 * of writers on other hosts, or still running, are left alone. Resolves to what it did.
 */
export async function recoverOutbox(dir: string): Promise<{ finished: string[]; removed: string[] }> {
  const out = { finished: [] as string[], removed: [] as string[] };
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return out;
    throw err;
  }
  const partials = names.flatMap((name) => {
    const match = PARTIAL.exec(name);
    return match ? [{ name, file: match[1]!, host: match[2]!, pid: Number(match[3]) }] : [];
  });
  if (!partials.length) return out;
  const indexed = new Set((await listOutbox(dir)).map((entry) => entry.file));
  for (const partial of partials) {
    if (indexed.has(partial.file)) {
      await renameIfThere(join(dir, partial.name), join(dir, partial.file));
      out.finished.push(partial.file);
    } else if (
      partial.host === HOST &&
      !writing.has(partial.name) &&
      // This process's own id: a previous process that had it (a container's first process is always 1).
      (partial.pid === process.pid || !running(partial.pid))
    ) {
      await rm(join(dir, partial.name), { force: true });
      out.removed.push(partial.name);
    }
  }
  return out;
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
  const name = partialName(file);
  const partial = join(dir, name);
  writing.add(name);
  try {
    await writeFile(partial, message.raw, { flag: "wx" });
    try {
      await appendFile(join(dir, INDEX_FILE), `${stringifyJson(entry)}\n`);
    } catch (err) {
      await rm(partial, { force: true }).catch(() => undefined);
      throw err;
    }
    // Stored: the line is written. A crash before the rename leaves it to `recoverOutbox` (which may also have
    // done it already, from another process).
    await renameIfThere(partial, join(dir, file));
  } finally {
    writing.delete(name);
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
  const path = join(dir, entry.file);
  try {
    return { entry, eml: await readFile(path) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    // Stored by a sender killed before its file took its name: give it its name now.
    await recoverOutbox(dir);
    return { entry, eml: await readFile(path) };
  }
}
