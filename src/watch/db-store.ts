/**
 * The watch store on the index's database (SQLite file or PostgreSQL, src/db): the `watch` module's migrations
 * (migrations/watch/), statements written once for both engines.
 */

import { parseJson, stringifyJson } from "../core/json.js";
import { type Database, openDatabase, type Sql } from "../db/database.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { Mail, MailKind, MailState, RecordState, StoredRecord, WatchStore } from "./store.js";

interface RecordRow {
  key: string;
  block_number: number | null;
  transaction_date: string;
  record: string;
  state: RecordState;
  custom_id: string | null;
  reorged: number;
  held_hour: number | null;
  retraction: string | null;
}

interface MailRow {
  custom_id: string;
  rule: string;
  state: MailState;
  message: string;
  attempts: number;
  result: string | null;
  kind: MailKind;
}

interface RuleRow {
  fingerprint: string;
  floor_block: number | null;
  floor_date: string;
  read_block: number | null;
  read_date: string | null;
  last_mailed: string | null;
  digest_since: number | null;
}

const toStored = (row: RecordRow): StoredRecord => ({
  key: row.key,
  position: { block: row.block_number ?? undefined, date: row.transaction_date },
  record: parseJson(row.record) as TransactionRecord,
  state: row.state,
  customId: row.custom_id ?? undefined,
  reorged: Number(row.reorged) === 1,
  retracted: row.retraction !== null && row.retraction !== undefined,
  heldHour: row.held_hour === null || row.held_hour === undefined ? undefined : Number(row.held_hour),
});

const toMail = (row: MailRow): Mail => ({
  customId: row.custom_id,
  rule: row.rule,
  state: row.state,
  message: parseJson(row.message) as Mail["message"],
  attempts: Number(row.attempts),
  result: row.result ? (parseJson(row.result) as Mail["result"]) : undefined,
  kind: row.kind,
});

/** `$n, $n+1, …` for a list of `count` values starting at parameter `first`. */
const list = (first: number, count: number) => Array.from({ length: count }, (_, i) => `$${first + i}`).join(", ");

export async function openWatchStore(target: string): Promise<WatchStore> {
  const db: Database = await openDatabase(target);
  try {
    await db.migrate("watch");
  } catch (err) {
    await db.close();
    throw err;
  }
  return {
    where: db.target,
    lockWriter: (options) => db.lockWriter("watch", options),
    ...rules(db),
    ...taking(db),
    ...reorgs(db),
    ...queue(db),
    ...journalling(db),
    ...settling(db),
    close: () => db.close(),
  };
}

/** Each rule's start, fingerprint and read position (watch_rules). */
function rules(db: Database): Pick<WatchStore, "ruleState" | "startRule"> {
  return {
    async ruleState(rule) {
      const [row] = await db.query<RuleRow>("SELECT * FROM watch_rules WHERE rule = $1", [rule]);
      if (!row) return undefined;
      return {
        rule,
        fingerprint: row.fingerprint,
        floor: { block: row.floor_block ?? undefined, date: row.floor_date },
        read: row.read_date === null ? undefined : { block: row.read_block ?? undefined, date: row.read_date },
        lastMailed: row.last_mailed ?? undefined,
        digestSince: row.digest_since === null ? undefined : Number(row.digest_since),
      };
    },
    async startRule(rule, fingerprint, floor) {
      await db.run("INSERT INTO watch_rules (rule, fingerprint, floor_block, floor_date) VALUES ($1, $2, $3, $4)", [
        rule,
        fingerprint,
        floor.block ?? null,
        floor.date,
      ]);
    },
  };
}

/** Records a rule took (watch_records): which keys it has, and new ones queued with the read position. */
function taking(db: Database): Pick<WatchStore, "knownKeys" | "take"> {
  return {
    async knownKeys(rule, keys) {
      const known = new Set<string>();
      // In slices: a statement's parameter count is bounded on both engines.
      for (let i = 0; i < keys.length; i += 500) {
        const slice = keys.slice(i, i + 500);
        const rows = await db.query<{ key: string }>(
          `SELECT key FROM watch_records WHERE rule = $1 AND key IN (${list(2, slice.length)})`,
          [rule, ...slice],
        );
        for (const row of rows) known.add(row.key);
      }
      return known;
    },
    async take(rule, records, read, digestSince) {
      await db.transaction(async (tx) => {
        const [last] = await tx.query<{ seq: number | null }>(
          "SELECT MAX(seq) AS seq FROM watch_records WHERE rule = $1",
          [rule],
        );
        const first = Number(last?.seq ?? 0) + 1;
        await tx.insertMany(
          "watch_records",
          ["rule", "key", "seq", "block_number", "transaction_date", "record", "state"],
          records.map((r, i) => ({
            rule,
            key: r.key,
            seq: first + i,
            block_number: r.position.block ?? null,
            transaction_date: r.position.date,
            record: stringifyJson(r.record),
            state: "queued",
          })),
          "ignore",
        );
        await tx.run(
          "UPDATE watch_rules SET read_block = $1, read_date = $2, digest_since = COALESCE(digest_since, $3) WHERE rule = $4",
          [read.block ?? null, read.date, digestSince ?? null, rule],
        );
      });
    },
  };
}

/** The reorg check's reads and marks. */
function reorgs(db: Database): Pick<WatchStore, "recordsFrom" | "markReorged" | "retractable"> {
  return {
    async recordsFrom(rule, from, through) {
      const upTo = through === undefined ? "" : " AND block_number <= $3";
      const rows = await db.query<RecordRow>(
        `SELECT * FROM watch_records WHERE rule = $1 AND block_number >= $2${upTo} ORDER BY seq`,
        through === undefined ? [rule, from] : [rule, from, through],
      );
      return rows.map(toStored);
    },
    async markReorged(rule, keys, removed) {
      await db.transaction(async (tx) => {
        for (const key of keys) {
          await tx.run("UPDATE watch_records SET reorged = $1 WHERE rule = $2 AND key = $3", [
            removed ? 1 : 0,
            rule,
            key,
          ]);
          // A queued record that a reorg removed is not mailed; one that came back is queued again.
          const [from, to] = removed ? ["queued", "dropped"] : ["dropped", "queued"];
          await tx.run("UPDATE watch_records SET state = $1 WHERE rule = $2 AND key = $3 AND state = $4", [
            to,
            rule,
            key,
            from,
          ]);
        }
      });
    },
    async retractable(rule, limit) {
      const rows = await db.query<RecordRow>(
        `SELECT * FROM watch_records WHERE rule = $1 AND reorged = 1 AND state = 'sent' AND retraction IS NULL
         ORDER BY seq LIMIT $2`,
        [rule, limit],
      );
      return rows.map(toStored);
    },
  };
}

/** The queue of records waiting for an email, and those held past a rule's max_per_hour. */
function queue(db: Database): Pick<WatchStore, "queued" | "hold" | "held" | "mailsSince"> {
  return {
    async queued(rule, limit) {
      const rows = await db.query<RecordRow>(
        "SELECT * FROM watch_records WHERE rule = $1 AND state = 'queued' AND held_hour IS NULL ORDER BY seq LIMIT $2",
        [rule, limit],
      );
      return rows.map(toStored);
    },
    async hold(rule, keys, hour) {
      await db.transaction(async (tx) => {
        for (let i = 0; i < keys.length; i += 500) {
          const slice = keys.slice(i, i + 500);
          await tx.run(
            `UPDATE watch_records SET held_hour = $1
             WHERE rule = $2 AND state = 'queued' AND held_hour IS NULL AND key IN (${list(3, slice.length)})`,
            [hour, rule, ...slice],
          );
        }
      });
    },
    async held(rule, beforeHour, limit) {
      const rows = await db.query<RecordRow>(
        "SELECT * FROM watch_records WHERE rule = $1 AND state = 'queued' AND held_hour < $2 ORDER BY seq LIMIT $3",
        [rule, beforeHour, limit],
      );
      return rows.map(toStored);
    },
    async mailsSince(rule, since) {
      const [row] = await db.query<{ n: number }>(
        "SELECT COUNT(*) AS n FROM watch_mail WHERE rule = $1 AND kind = 'record' AND created_at >= $2",
        [rule, since],
      );
      return Number(row?.n ?? 0);
    },
  };
}

/** The intents as pending mails and their records claimed (or marked retracted), in the caller's transaction. */
async function journalIn(
  tx: Sql,
  rule: string,
  intents: Parameters<WatchStore["journal"]>[1],
  now: number,
): Promise<void> {
  await tx.insertMany(
    "watch_mail",
    ["custom_id", "rule", "state", "message", "attempts", "created_at", "kind"],
    intents.map(({ mail }) => ({
      custom_id: mail.customId,
      rule,
      state: "pending",
      message: stringifyJson(mail.message),
      attempts: 1,
      created_at: now,
      kind: mail.kind ?? "record",
    })),
  );
  for (const { mail, keys } of intents) {
    // A retraction leaves its records as they are (sent) and marks them: no second retraction.
    const update =
      mail.kind === "retraction"
        ? "UPDATE watch_records SET retraction = $1 WHERE rule = $2 AND retraction IS NULL"
        : "UPDATE watch_records SET state = 'claimed', custom_id = $1 WHERE rule = $2 AND state = 'queued'";
    for (let i = 0; i < keys.length; i += 500) {
      const slice = keys.slice(i, i + 500);
      await tx.run(`${update} AND key IN (${list(3, slice.length)})`, [mail.customId, rule, ...slice]);
    }
  }
  if (intents.some(({ mail }) => (mail.kind ?? "record") === "record")) {
    await tx.run("UPDATE watch_rules SET digest_since = NULL WHERE rule = $1", [rule]);
  }
}

/** Email intents journalled before their send (watch_mail), read back by state, and reopened for a retry. */
function journalling(db: Database): Pick<WatchStore, "journal" | "mails" | "markSending"> {
  return {
    async journal(rule, intents, at) {
      await db.transaction((tx) => journalIn(tx, rule, intents, at ?? Date.now()));
    },
    async mails(states, limit) {
      const rows = await db.query<MailRow>(
        `SELECT * FROM watch_mail WHERE state IN (${list(1, states.length)}) ORDER BY created_at, custom_id${limit === undefined ? "" : ` LIMIT $${states.length + 1}`}`,
        limit === undefined ? states : [...states, limit],
      );
      return rows.map(toMail);
    },
    async markSending(customIds) {
      await db.transaction(async (tx) => {
        for (const id of customIds) {
          await tx.run(
            "UPDATE watch_mail SET state = 'pending', attempts = attempts + 1 WHERE custom_id = $1 AND state = 'retry'",
            [id],
          );
        }
      });
    },
  };
}

/** Each send's outcome written back, and the explicit decision to send again. */
function settling(db: Database): Pick<WatchStore, "settle" | "resend"> {
  return {
    async settle(results) {
      await db.transaction(async (tx) => {
        const now = Date.now();
        for (const r of results) {
          await tx.run("UPDATE watch_mail SET state = $1, result = $2, settled_at = $3 WHERE custom_id = $4", [
            r.state,
            stringifyJson(r.result),
            r.state === "retry" ? null : now,
            r.customId,
          ]);
          if (r.state === "retry") continue;
          await tx.run("UPDATE watch_records SET state = $1 WHERE custom_id = $2", [r.state, r.customId]);
          if (r.state !== "sent") continue;
          // The rule's cursor: the newest record whose email went out (a retraction carries none of its own).
          await tx.run(
            `UPDATE watch_rules SET last_mailed = (
             SELECT key FROM watch_records WHERE custom_id = $1 ORDER BY seq DESC LIMIT 1)
           WHERE rule = (SELECT rule FROM watch_mail WHERE custom_id = $1)
             AND EXISTS (SELECT 1 FROM watch_records WHERE custom_id = $1)`,
            [r.customId],
          );
        }
      });
    },
    async resend(customIds) {
      return db.transaction(async (tx) => {
        const was = new Map<string, MailState | undefined>();
        for (const id of customIds) {
          const [row] = await tx.query<{ state: MailState }>("SELECT state FROM watch_mail WHERE custom_id = $1", [id]);
          was.set(id, row?.state);
          if (row?.state !== "unknown" && row?.state !== "failed") continue;
          await tx.run("UPDATE watch_mail SET state = 'retry', settled_at = NULL WHERE custom_id = $1", [id]);
          await tx.run("UPDATE watch_records SET state = 'claimed' WHERE custom_id = $1", [id]);
        }
        return was;
      });
    },
  };
}
