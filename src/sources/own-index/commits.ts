/**
 * Telling readers of an index that its writer committed, so that `chainmail watch` reads new records at once
 * rather than at its next poll. In the writer's own process: an in-process signal. From another process, through
 * the database: PostgreSQL's LISTEN/NOTIFY (each commit notifies, with its schema, when it commits); SQLite's
 * `PRAGMA data_version` (it changes when another connection commits), checked every CHECK_MS, and then the cursor
 * (`last_block`), so that only the index moving wakes a reader, not other writes to the same file (the journal).
 * A reader that misses a signal loses nothing: it still reads at its poll interval.
 */
import { EventEmitter } from "node:events";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Database, displayTarget, isPostgresUrl, openDatabase } from "../../db/database.js";

/** How often a reader of an SQLite index in another process looks at `data_version` while it waits. */
const CHECK_MS = 50;
/** How often a reader tries again to reach an index it could not open or listen to. */
const RECONNECT_MS = 1000;
/** The PostgreSQL channel every index's commits are notified on, with the index's schema as the payload. */
export const COMMITS_CHANNEL = "chainmail_index_commits";

const local = new EventEmitter().setMaxListeners(0);

/** The same index, however its writer and its readers name it. */
const keyOf = (target: string) => (isPostgresUrl(target) ? displayTarget(target) : resolve(target));

/** The writer of `target` committed its cursor `lastBlock` (called by the store after each commit). */
export function announceCommit(target: string, lastBlock: number): void {
  local.emit(keyOf(target), String(lastBlock));
}

/** What the writer of one index tells its readers. */
export class IndexCommits {
  private moved = false;
  private readonly woken = new EventEmitter().setMaxListeners(0);
  private readonly key: string;
  private readonly onLocal = (cursor: string) => this.mark(cursor);
  /** The index's cursor as last heard of: one commit heard twice (in this process and through the database) wakes once. */
  private cursor: string | undefined;
  private sqlite: { db: Database; version: unknown } | undefined;
  private postgres: { close(): Promise<void> } | undefined;
  private closed = false;
  /** No new connection before this time (ms since the epoch) after one failed. */
  private connectAt = 0;

  private constructor(private readonly target: string) {
    this.key = keyOf(target);
    local.on(this.key, this.onLocal);
  }

  /** Starts listening to the index at `target` (an SQLite file that may not exist yet, or a `postgres://` URL). */
  static async open(target: string): Promise<IndexCommits> {
    const commits = new IndexCommits(target);
    await commits.connect();
    return commits;
  }

  /**
   * Resolves true at the first commit since the last call returned (at once when one came in between), false after
   * `ms` or when `signal` aborts.
   */
  async wait(ms: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!signal?.aborted && !this.closed) {
      if (!this.moved) await this.check();
      if (this.moved) {
        this.moved = false;
        return true;
      }
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await this.nap(this.sqlite || !this.postgres ? Math.min(CHECK_MS, left) : left, signal);
    }
    return false;
  }

  async close(): Promise<void> {
    this.closed = true;
    local.off(this.key, this.onLocal);
    this.woken.emit("wake");
    await Promise.allSettled([this.sqlite?.db.close(), this.postgres?.close()]);
  }

  private mark(cursor: string): void {
    if (cursor === this.cursor) return;
    this.cursor = cursor;
    this.moved = true;
    this.woken.emit("wake");
  }

  /** Sleeps `ms` or until a commit is signalled (in this process, or notified by PostgreSQL). */
  private async nap(ms: number, signal: AbortSignal | undefined): Promise<void> {
    const stop = new AbortController();
    const wake = () => stop.abort();
    this.woken.once("wake", wake);
    signal?.addEventListener("abort", wake, { once: true });
    try {
      await sleep(ms, undefined, { signal: stop.signal });
    } catch {
      // woken early
    } finally {
      this.woken.off("wake", wake);
      signal?.removeEventListener("abort", wake);
    }
  }

  private async connect(): Promise<void> {
    if (Date.now() < this.connectAt) return;
    this.connectAt = Date.now() + RECONNECT_MS;
    try {
      if (isPostgresUrl(this.target)) {
        const { listenPostgres } = await import("../../db/postgres.js");
        this.postgres = await listenPostgres(this.target, COMMITS_CHANNEL, {
          onNotify: (cursor) => this.mark(cursor),
          // A lost connection: the reader polls until the next wait connects again.
          onLost: () => {
            this.postgres = undefined;
          },
        });
      } else {
        const db = await openDatabase(this.target, { create: false });
        this.sqlite = { db, version: undefined };
        const moved = this.moved;
        await this.check();
        this.moved = moved;
      }
    } catch {
      // No index yet, or the database cannot be reached: the reader polls as before, and tries again later.
      this.sqlite = undefined;
      this.postgres = undefined;
    }
  }

  /** An SQLite index in another process: its cursor moved since the last look. Connects when it could not yet. */
  private async check(): Promise<void> {
    if (!this.sqlite && !this.postgres) return this.connect();
    const sqlite = this.sqlite;
    if (!sqlite) return;
    try {
      const [[version]] = (await sqlite.db.queryValues("PRAGMA data_version")) as [[unknown]];
      if (version === sqlite.version) return;
      sqlite.version = version;
      const [row] = await sqlite.db.queryValues("SELECT value FROM meta WHERE key = 'last_block'");
      if (row?.[0] !== undefined) this.mark(String(row[0]));
    } catch {
      // A file being replaced or not an index (yet): the poll interval still applies.
    }
  }
}
