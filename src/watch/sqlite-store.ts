/**
 * The watch store in SQLite: tables beside the index's own in the index file (or any file), on a connection of
 * its own (WAL, so `chainmail index` keeps writing while the watch reads and writes).
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { ChainmailError } from "../core/errors.js";
import { parseJson, stringifyJson } from "../core/json.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { leaseRefusal } from "./lease.js";
import type { Position } from "./records.js";
import type {
  LeaseHolder,
  Mail,
  MailResult,
  MailState,
  RecordState,
  RuleState,
  StoredRecord,
  TakenRecord,
  WatchStore,
} from "./store.js";

export const WATCH_SCHEMA = `
CREATE TABLE IF NOT EXISTS watch_rules (
  rule TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  floor_block INTEGER,
  floor_date TEXT NOT NULL,
  read_block INTEGER,
  read_date TEXT,
  last_mailed TEXT,
  digest_since INTEGER
);
CREATE TABLE IF NOT EXISTS watch_records (
  rule TEXT NOT NULL,
  key TEXT NOT NULL,
  block_number INTEGER,
  transaction_date TEXT NOT NULL,
  record TEXT NOT NULL,
  state TEXT NOT NULL,
  custom_id TEXT,
  reorged INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (rule, key)
);
CREATE INDEX IF NOT EXISTS watch_records_by_block ON watch_records (rule, block_number);
CREATE INDEX IF NOT EXISTS watch_records_by_mail ON watch_records (custom_id);
CREATE TABLE IF NOT EXISTS watch_mail (
  custom_id TEXT PRIMARY KEY,
  rule TEXT NOT NULL,
  state TEXT NOT NULL,
  message TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  created_at INTEGER NOT NULL,
  settled_at INTEGER
);
CREATE INDEX IF NOT EXISTS watch_mail_by_state ON watch_mail (state);
CREATE TABLE IF NOT EXISTS watch_lease (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  holder TEXT NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`;

interface RecordRow {
  key: string;
  block_number: number | null;
  transaction_date: string;
  record: string;
  state: RecordState;
  custom_id: string | null;
  reorged: number;
}

interface MailRow {
  custom_id: string;
  rule: string;
  state: MailState;
  message: string;
  attempts: number;
  result: string | null;
}

const toStored = (row: RecordRow): StoredRecord => ({
  key: row.key,
  position: { block: row.block_number ?? undefined, date: row.transaction_date },
  record: parseJson(row.record) as TransactionRecord,
  state: row.state,
  customId: row.custom_id ?? undefined,
  reorged: row.reorged === 1,
});

const toMail = (row: MailRow): Mail => ({
  customId: row.custom_id,
  rule: row.rule,
  state: row.state,
  message: parseJson(row.message) as Mail["message"],
  attempts: row.attempts,
  result: row.result ? (parseJson(row.result) as Mail["result"]) : undefined,
});

export function openSqliteWatchStore(path: string): WatchStore {
  let db: Database.Database;
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    db = new Database(path);
  } catch (err) {
    throw storageError(path, err);
  }
  try {
    db.pragma("busy_timeout = 10000");
    db.pragma("journal_mode = WAL");
    // The journal is the promise "never twice": commit to disk before the send that follows it.
    db.pragma("synchronous = FULL");
    db.exec(WATCH_SCHEMA);
  } catch (err) {
    db.close();
    throw storageError(path, err);
  }
  const run = <T>(what: () => T): T => {
    try {
      return what();
    } catch (err) {
      if (err instanceof ChainmailError) throw err;
      throw storageError(path, err);
    }
  };
  const tx = <T>(what: () => T): T => run(() => db.transaction(what).immediate());
  const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

  return {
    where: path,
    async lease(holder: LeaseHolder, ttlMs: number) {
      tx(() => {
        const now = Date.now();
        const row = db.prepare("SELECT holder, pid, host, expires_at FROM watch_lease WHERE id = 1").get() as
          | { holder: string; pid: number; host: string; expires_at: number }
          | undefined;
        const refusal = row && row.holder !== holder.id ? leaseRefusal(row, now, path) : undefined;
        if (refusal) throw refusal;
        db.prepare(
          `INSERT INTO watch_lease (id, holder, pid, host, expires_at) VALUES (1, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET holder = excluded.holder, pid = excluded.pid, host = excluded.host,
             expires_at = excluded.expires_at`,
        ).run(holder.id, holder.pid, holder.host, now + ttlMs);
      });
    },
    async releaseLease(holder) {
      run(() => db.prepare("DELETE FROM watch_lease WHERE id = 1 AND holder = ?").run(holder.id));
    },
    async ruleState(rule) {
      const row = run(() => db.prepare("SELECT * FROM watch_rules WHERE rule = ?").get(rule)) as
        | {
            fingerprint: string;
            floor_block: number | null;
            floor_date: string;
            read_block: number | null;
            read_date: string | null;
            last_mailed: string | null;
            digest_since: number | null;
          }
        | undefined;
      if (!row) return undefined;
      const state: RuleState = {
        rule,
        fingerprint: row.fingerprint,
        floor: { block: row.floor_block ?? undefined, date: row.floor_date },
        read: row.read_date === null ? undefined : { block: row.read_block ?? undefined, date: row.read_date },
        lastMailed: row.last_mailed ?? undefined,
        digestSince: row.digest_since ?? undefined,
      };
      return state;
    },
    async startRule(rule, fingerprint, floor) {
      run(() =>
        db
          .prepare("INSERT INTO watch_rules (rule, fingerprint, floor_block, floor_date) VALUES (?, ?, ?, ?)")
          .run(rule, fingerprint, floor.block ?? null, floor.date),
      );
    },
    async knownKeys(rule, keys) {
      const known = new Set<string>();
      const select = db.prepare("SELECT 1 FROM watch_records WHERE rule = ? AND key = ?").pluck();
      run(() => {
        for (const key of keys) if (select.get(rule, key)) known.add(key);
      });
      return known;
    },
    async take(rule, records: readonly TakenRecord[], read: Position, digestSince?: number) {
      const insert = db.prepare(
        `INSERT OR IGNORE INTO watch_records (rule, key, block_number, transaction_date, record, state)
         VALUES (?, ?, ?, ?, ?, 'queued')`,
      );
      tx(() => {
        for (const r of records) {
          insert.run(rule, r.key, r.position.block ?? null, r.position.date, stringifyJson(r.record));
        }
        db.prepare(
          `UPDATE watch_rules SET read_block = ?, read_date = ?, digest_since = COALESCE(digest_since, ?)
           WHERE rule = ?`,
        ).run(read.block ?? null, read.date, digestSince ?? null, rule);
      });
    },
    async recordsFrom(rule, block) {
      const rows = run(() =>
        db
          .prepare("SELECT * FROM watch_records WHERE rule = ? AND block_number >= ? AND state != 'dropped'")
          .all(rule, block),
      ) as RecordRow[];
      return rows.map(toStored);
    },
    async markReorged(rule, keys, removed) {
      tx(() => {
        const flag = db.prepare("UPDATE watch_records SET reorged = ? WHERE rule = ? AND key = ?");
        const drop = db.prepare(`UPDATE watch_records SET state = ? WHERE rule = ? AND key = ? AND state = ?`);
        for (const key of keys) {
          flag.run(removed ? 1 : 0, rule, key);
          if (removed) drop.run("dropped", rule, key, "queued");
          else drop.run("queued", rule, key, "dropped");
        }
      });
    },
    async queued(rule) {
      const rows = run(() =>
        db
          .prepare(
            "SELECT * FROM watch_records WHERE rule = ? AND state = 'queued' ORDER BY block_number, transaction_date, rowid",
          )
          .all(rule),
      ) as RecordRow[];
      return rows.map(toStored);
    },
    async journal(rule, intents) {
      const insert = db.prepare(
        "INSERT INTO watch_mail (custom_id, rule, state, message, attempts, created_at) VALUES (?, ?, 'pending', ?, 1, ?)",
      );
      const claim = db.prepare(
        "UPDATE watch_records SET state = 'claimed', custom_id = ? WHERE rule = ? AND key = ? AND state = 'queued'",
      );
      tx(() => {
        const now = Date.now();
        for (const { mail, keys } of intents) {
          insert.run(mail.customId, rule, stringifyJson(mail.message), now);
          for (const key of keys) claim.run(mail.customId, rule, key);
        }
        db.prepare("UPDATE watch_rules SET digest_since = NULL WHERE rule = ?").run(rule);
      });
    },
    async mails(states) {
      const rows = run(() =>
        db
          .prepare(
            `SELECT * FROM watch_mail WHERE state IN (${placeholders(states.length)}) ORDER BY created_at, rowid`,
          )
          .all(...states),
      ) as MailRow[];
      return rows.map(toMail);
    },
    async markSending(customIds) {
      const update = db.prepare(
        "UPDATE watch_mail SET state = 'pending', attempts = attempts + 1 WHERE custom_id = ? AND state = 'retry'",
      );
      tx(() => {
        for (const id of customIds) update.run(id);
      });
    },
    async settle(results: readonly MailResult[]) {
      const mail = db.prepare("UPDATE watch_mail SET state = ?, result = ?, settled_at = ? WHERE custom_id = ?");
      const records = db.prepare("UPDATE watch_records SET state = ? WHERE custom_id = ?");
      const lastMailed = db.prepare(
        `UPDATE watch_rules SET last_mailed = (
           SELECT key FROM watch_records WHERE custom_id = ? ORDER BY block_number DESC, transaction_date DESC LIMIT 1)
         WHERE rule = (SELECT rule FROM watch_mail WHERE custom_id = ?)`,
      );
      tx(() => {
        const now = Date.now();
        for (const r of results) {
          mail.run(r.state, stringifyJson(r.result), r.state === "retry" ? null : now, r.customId);
          if (r.state !== "retry") records.run(r.state, r.customId);
          if (r.state === "sent") lastMailed.run(r.customId, r.customId);
        }
      });
    },
    async close() {
      db.close();
    },
  };
}

function storageError(path: string, err: unknown): ChainmailError {
  const reason = err instanceof Error ? err.message : String(err);
  return new ChainmailError("STORAGE_ERROR", `The watch store ${path} failed: ${reason}.`, {
    hint: "Check the watch's store (INDEX_DB or the config's store): the file and its directory must be writable.",
    cause: err,
    details: { store: path },
  });
}
