/**
 * The mail lifecycle store on a chainmail database (SQLite file or PostgreSQL, src/db; migrations/mail/): what was
 * sent (recorded at send time by every transport), what Mailjet's events said about it, and the suppression list.
 *
 * Every write is order-free and idempotent: a message's state only climbs in rank (lifecycle.ts), an event is
 * stored once under its key (a repeat changes nothing), and a suppression only gives way to a stronger reason (or,
 * between equals, to the cause with the smaller key), so the same events in any order leave the same rows.
 */
import { parseJson } from "../core/json.js";
import { type Database, openDatabase, type Sql } from "../db/database.js";
import type { MailEvent } from "./events.js";
import {
  ANY_SENDER,
  FACT_RANK,
  type Fact,
  lifecycleOf,
  type MailState,
  reasonRank,
  type SuppressionReason,
  suppressionOf,
} from "./lifecycle.js";
import { suppressionKey } from "./suppression-key.js";

/** Events kept per message; later ones still move its state and the suppression list. */
export const MAX_EVENTS_PER_MESSAGE = 100;
export { ANY_SENDER } from "./lifecycle.js";

/** A message as a transport handed it over, one per recipient. */
export interface SendRecord {
  messageId: string;
  messageUuid?: string | undefined;
  customId?: string | undefined;
  email: string;
  sender: string;
  transport: string;
  payload?: string | undefined;
  fact: "queued" | "sent";
}

export interface EventView {
  event: string;
  time: string;
  /** The EventPayload given at send time (or carried by the event). */
  Payload?: string;
  [detail: string]: unknown;
}

export interface MessageView {
  /** Exact: a bigint beyond 2^53. */
  MessageID: number | bigint;
  MessageUUID: string | null;
  CustomID: string | null;
  Email: string;
  From: string | null;
  Transport: string | null;
  State: MailState;
  Bounce?: "hard" | "soft";
  EventPayload: string | null;
  Events: EventView[];
  /** More events came than are kept (MAX_EVENTS_PER_MESSAGE); the state counts them all. */
  EventsTruncated: boolean;
}

export interface Suppression {
  sender: string;
  email: string;
  reason: SuppressionReason;
  since: string;
  message_id: string | null;
  event: string | null;
}

export interface FeedOptions {
  kinds?: readonly string[] | undefined;
  /** At most this many events. */
  limit: number;
}

/** One stored event as the feed hands it out, with what is known of its message. */
export interface FeedEvent {
  /** Pass it back as `after` to go on after this event. */
  cursor: string;
  event: string;
  time: string;
  /** Exact: a bigint beyond 2^53. */
  MessageID: number | bigint;
  MessageUUID: string | null;
  CustomID: string | null;
  email: string;
  /** The sender, once a send record named it. */
  From: string | null;
  /** The message's state now (all its events so far, not only this one). */
  State: MailState;
  Payload?: string;
  [detail: string]: unknown;
}

export interface EventFeedPage {
  events: FeedEvent[];
  /** The last event's cursor (the one given when there is none). */
  cursor: string;
  /** Whether more events follow (ask again at once). */
  more: boolean;
}

export interface MailStoreOptions {
  /** Soft bounces of one recipient (from one sender) that suppress it. */
  softBounceLimit?: number;
}

export interface ApplyResult {
  /** Events stored now. */
  stored: number;
  /** Events that were stored already (repeats, replays). */
  repeated: number;
}

export interface MailStore {
  readonly where: string;
  recordSends(records: readonly SendRecord[]): Promise<void>;
  applyEvents(events: readonly MailEvent[]): Promise<ApplyResult>;
  /**
   * Stored events numbered above `after`, oldest first (the feed of `GET /events`): each once to a reader that
   * passes back the `cursor` it got. `kinds` keeps only those Mailjet kinds.
   */
  eventsAfter(after: number, options: FeedOptions): Promise<EventFeedPage>;
  /** Messages whose MessageID, MessageUUID or CustomID is `id`, with their events. */
  messages(id: string): Promise<MessageView[]>;
  /** Of `emails`, those suppressed for `sender`, by lower-case address. */
  suppressed(sender: string, emails: readonly string[]): Promise<Map<string, Suppression>>;
  suppressions(filter?: { sender?: string | undefined; email?: string | undefined }): Promise<Suppression[]>;
  /** Adds a suppression by hand (or from an unsubscribe link); resolves to whether the list changed. */
  suppress(entry: {
    sender: string;
    email: string;
    reason: SuppressionReason;
    since?: number;
    /** What caused it, e.g. `unsubscribe-link:<campaign>`. */
    cause?: string;
  }): Promise<boolean>;
  /** Removes one; resolves to how many rows went. */
  unsuppress(sender: string, email: string): Promise<number>;
  close(): Promise<void>;
}

interface MessageRow {
  message_id: string;
  message_uuid: string | null;
  custom_id: string | null;
  email: string;
  sender: string | null;
  transport: string | null;
  payload: string | null;
  state: MailState;
  bounce: "hard" | "soft" | null;
  events: number;
}

interface EventRow {
  message_id: string;
  kind: string;
  time: number | string;
  detail: string;
}

interface SuppressionRow {
  sender: string;
  email: string;
  reason: SuppressionReason;
  message_id: string | null;
  event_key: string | null;
  since: number | string;
}

const exactInteger = (digits: string): number | bigint => {
  const value = BigInt(digits);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
};
const now = () => Math.floor(Date.now() / 1000);
const iso = (seconds: number | string) => new Date(Number(seconds) * 1000).toISOString();
const list = (first: number, count: number) => Array.from({ length: count }, (_, i) => `$${first + i}`).join(", ");

/** Opens (and migrates) the store on `target`: an SQLite file or a `postgres://` URL. */
export async function openMailStore(target: string, options: MailStoreOptions = {}): Promise<MailStore> {
  const db = await openDatabase(target);
  try {
    await db.migrate("mail");
  } catch (err) {
    await db.close();
    throw err;
  }
  return mailStoreOn(db, options);
}

/** The store on an open database (which the caller migrated with `db.migrate("mail")`). */
export function mailStoreOn(db: Database, options: MailStoreOptions = {}): MailStore {
  const softBounceLimit = options.softBounceLimit ?? 3;
  return {
    where: db.target,
    recordSends: (records) => db.transaction(async (tx) => recordSends(tx, records)),
    applyEvents: groupCommit(db, softBounceLimit),
    eventsAfter: (after, options) => eventsAfter(db, after, options),
    messages: (id) => messagesOf(db, id),
    suppressed: (sender, emails) => suppressedAmong(db, sender, emails),
    suppressions: (filter = {}) => suppressionList(db, filter),
    suppress: (entry) =>
      upsertSuppression(db, {
        sender: suppressionKey(entry.sender),
        email: suppressionKey(entry.email),
        reason: entry.reason,
        messageId: null,
        eventKey: entry.cause ?? null,
        since: entry.since ?? now(),
      }),
    unsuppress: (sender, email) =>
      db.run("DELETE FROM mail_suppressions WHERE sender = $1 AND email = $2", [
        suppressionKey(sender),
        suppressionKey(email),
      ]),
    close: () => db.close(),
  };
}

/** Of `emails`, those suppressed for `sender` (or for every sender), each with its strongest entry. */
async function suppressedAmong(db: Database, sender: string, emails: readonly string[]) {
  const found = new Map<string, Suppression>();
  const wanted = [...new Set(emails.map(suppressionKey))];
  for (let i = 0; i < wanted.length; i += 500) {
    const slice = wanted.slice(i, i + 500);
    const rows = await db.query<SuppressionRow>(
      `SELECT * FROM mail_suppressions WHERE sender IN ($1, $2) AND email IN (${list(3, slice.length)})
       ORDER BY reason_rank DESC`,
      [suppressionKey(sender), ANY_SENDER, ...slice],
    );
    for (const row of rows) if (!found.has(row.email)) found.set(row.email, toSuppression(row));
  }
  return found;
}

async function suppressionList(db: Database, filter: Parameters<MailStore["suppressions"]>[0] = {}) {
  const where: string[] = [];
  const params: string[] = [];
  if (filter.sender !== undefined) {
    params.push(suppressionKey(filter.sender));
    where.push(`sender = $${params.length}`);
  }
  if (filter.email !== undefined) {
    params.push(suppressionKey(filter.email));
    where.push(`email = $${params.length}`);
  }
  const rows = await db.query<SuppressionRow>(
    `SELECT * FROM mail_suppressions${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY email, sender`,
    params,
  );
  return rows.map(toSuppression);
}

/** Events one transaction applies at most: a group of concurrent POSTs is cut here. */
const MAX_EVENTS_PER_COMMIT = 20_000;
/** Rows per multi-row statement (well under both engines' limits on parameters). */
const ROWS_PER_STATEMENT = 250;
/** PostgreSQL's advisory lock that event writers take, so feed numbers are committed in the order they are drawn. */
const EVENT_WRITER_LOCK = 0x636d_6576;

interface Waiting {
  events: readonly MailEvent[];
  resolve: (result: ApplyResult) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the events of POSTs that arrive while a transaction runs wait for it, then go together in the next
 * one, and each caller's promise resolves only once the transaction holding its events has committed. A group that
 * fails is applied again one caller at a time, so one bad request fails alone.
 */
function groupCommit(db: Database, softBounceLimit: number): MailStore["applyEvents"] {
  const waiting: Waiting[] = [];
  let running = false;
  const commit = (group: readonly (readonly MailEvent[])[]) =>
    db.transaction((tx) => applyGroup(tx, group, softBounceLimit));
  const drain = async () => {
    running = true;
    try {
      while (waiting.length > 0) {
        // Requests whose bodies came in during the last commit reach `waiting` before this group is cut.
        await new Promise((resolve) => setImmediate(resolve));
        let count = 0;
        let take = 0;
        while (take < waiting.length && (take === 0 || count + waiting[take]!.events.length <= MAX_EVENTS_PER_COMMIT))
          count += waiting[take++]!.events.length;
        const group = waiting.splice(0, take);
        try {
          const results = await commit(group.map((w) => w.events));
          for (const [i, w] of group.entries()) w.resolve(results[i]!);
        } catch (error) {
          if (group.length === 1) group[0]!.reject(error);
          else
            for (const w of group) {
              await commit([w.events]).then(([result]) => w.resolve(result!), w.reject);
            }
        }
      }
    } finally {
      running = false;
    }
  };
  return (events) =>
    new Promise<ApplyResult>((resolve, reject) => {
      waiting.push({ events, resolve, reject });
      if (!running) void drain();
    });
}

interface MessageFacts {
  event: MailEvent;
  fact: Fact;
  rank: number;
  count: number;
}

/**
 * Applies the events of several callers in one transaction, with few statements: one read of the messages named,
 * multi-row inserts of the events (a repeat is not returned, so it changes nothing), one upsert per message with
 * its highest-ranked new fact, one per suppression. The same rows as applying each event alone, in any order.
 */
async function applyGroup(
  tx: Sql,
  group: readonly (readonly MailEvent[])[],
  softBounceLimit: number,
): Promise<ApplyResult[]> {
  const results = group.map(() => ({ stored: 0, repeated: 0 }));
  if (group.every((events) => events.length === 0)) return results;
  if (tx.engine === "postgres") await tx.query("SELECT pg_advisory_xact_lock($1)", [EVENT_WRITER_LOCK]);
  const firsts = distinctEvents(group, results);
  const known = await knownMessages(tx, [...new Set([...firsts.values()].map((f) => f.event.messageId))]);
  // Messages this group could take past the cap keep the one-event-at-a-time path (whose repeats past the cap
  // are told apart by count alone); every other event goes in the multi-row inserts.
  const perMessage = new Map<string, number>();
  for (const { event } of firsts.values()) perMessage.set(event.messageId, (perMessage.get(event.messageId) ?? 0) + 1);
  const bulk: { event: MailEvent; caller: number }[] = [];
  const single: { event: MailEvent; caller: number }[] = [];
  for (const first of firsts.values()) {
    const id = first.event.messageId;
    if ((known.get(id)?.events ?? 0) + perMessage.get(id)! <= MAX_EVENTS_PER_MESSAGE) bulk.push(first);
    else single.push(first);
  }
  const inserted = await insertEvents(
    tx,
    bulk.map((b) => b.event),
  );
  const stored: MailEvent[] = [];
  for (const { event, caller } of bulk) {
    if (inserted.has(`${event.messageId} ${event.key}`)) {
      results[caller]!.stored++;
      stored.push(event);
    } else results[caller]!.repeated++;
  }
  await applyFacts(tx, stored, known, softBounceLimit);
  for (const { event, caller } of single) {
    if (await applyEvent(tx, event, softBounceLimit)) results[caller]!.stored++;
    else results[caller]!.repeated++;
  }
  return results;
}

type Caller = { event: MailEvent; caller: number };

/** Every distinct event once, with the caller it counts for; a second copy is a repeat at once. */
function distinctEvents(group: readonly (readonly MailEvent[])[], results: ApplyResult[]): Map<string, Caller> {
  const firsts = new Map<string, Caller>();
  group.forEach((events, caller) => {
    for (const event of events) {
      const id = `${event.messageId} ${event.key}`;
      if (firsts.has(id)) results[caller]!.repeated++;
      else firsts.set(id, { event, caller });
    }
  });
  return firsts;
}

/** The messages already stored among `ids`: their event count and sender. */
async function knownMessages(tx: Sql, ids: readonly string[]) {
  const known = new Map<string, { events: number; sender: string | null }>();
  for (let i = 0; i < ids.length; i += ROWS_PER_STATEMENT) {
    const slice = ids.slice(i, i + ROWS_PER_STATEMENT);
    const rows = await tx.query<{ message_id: string; events: number; sender: string | null }>(
      `SELECT message_id, events, sender FROM mail_messages WHERE message_id IN (${list(1, slice.length)})`,
      slice,
    );
    for (const row of rows) known.set(row.message_id, { events: Number(row.events), sender: row.sender });
  }
  return known;
}

/** The events by multi-row inserts; the `messageId key` of those new (a repeat is not returned). */
async function insertEvents(tx: Sql, events: readonly MailEvent[]): Promise<Set<string>> {
  const t = now();
  const inserted = new Set<string>();
  for (let i = 0; i < events.length; i += ROWS_PER_STATEMENT) {
    const slice = events.slice(i, i + ROWS_PER_STATEMENT);
    const params: unknown[] = [];
    const values = slice.map((event) => {
      params.push(
        event.messageId,
        event.key,
        event.kind,
        event.fact,
        event.time,
        suppressionKey(event.email),
        JSON.stringify(event.detail),
        t,
      );
      return `(${list(params.length - 7, 8)})`;
    });
    const rows = await tx.queryValues(
      `INSERT INTO mail_events (message_id, key, kind, fact, time, email, detail, received_at)
       VALUES ${values.join(", ")} ON CONFLICT DO NOTHING RETURNING message_id, key`,
      params,
    );
    for (const [messageId, key] of rows) inserted.add(`${messageId} ${key}`);
  }
  return inserted;
}

/** What newly stored events do to their messages and to the suppression list, each message and list entry once. */
async function applyFacts(
  tx: Sql,
  events: readonly MailEvent[],
  known: ReadonlyMap<string, { sender: string | null }>,
  softBounceLimit: number,
): Promise<void> {
  if (events.length === 0) return;
  const { messages, suppressions, softBounces } = factsOf(events, known);
  await upsertMessages(tx, [...messages.values()]);
  for (const write of suppressions.values()) await upsertSuppression(tx, write);
  for (const id of softBounces) {
    const at = id.indexOf(" ");
    await softBounced(tx, id.slice(0, at), id.slice(at + 1), softBounceLimit);
  }
}

/** Per message its highest-ranked fact and count; per list entry its strongest suppression; the soft bounces. */
function factsOf(events: readonly MailEvent[], known: ReadonlyMap<string, { sender: string | null }>) {
  const messages = new Map<string, MessageFacts>();
  const suppressions = new Map<string, SuppressionWrite>();
  const softBounces = new Set<string>();
  for (const event of events) {
    const rank = FACT_RANK[event.fact];
    const seen = messages.get(event.messageId);
    if (!seen) messages.set(event.messageId, { event, fact: event.fact, rank, count: 1 });
    else {
      seen.count++;
      if (rank > seen.rank) Object.assign(seen, { fact: event.fact, rank });
      // What an earlier event did not carry, a later one may (COALESCE keeps the first known, as one by one).
      seen.event = {
        ...seen.event,
        messageUuid: seen.event.messageUuid ?? event.messageUuid,
        customId: seen.event.customId ?? event.customId,
        payload: seen.event.payload ?? event.payload,
      };
    }
    const sender = known.get(event.messageId)?.sender ?? ANY_SENDER;
    const email = suppressionKey(event.email);
    const reason = suppressionOf(event.fact);
    if (reason) {
      const write = { sender, email, reason, messageId: event.messageId, eventKey: event.key, since: event.time };
      const id = `${sender} ${email}`;
      const held = suppressions.get(id);
      if (!held || strongerSuppression(write, held)) suppressions.set(id, write);
    } else if (event.fact === "soft_bounce") softBounces.add(`${sender} ${email}`);
  }
  return { messages, suppressions, softBounces };
}

async function upsertMessages(tx: Sql, rows: readonly MessageFacts[]): Promise<void> {
  const t = now();
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT / 2) {
    const slice = rows.slice(i, i + ROWS_PER_STATEMENT / 2);
    const params: unknown[] = [];
    const values = slice.map(({ event, fact, count }) => {
      const life = lifecycleOf(fact);
      params.push(
        event.messageId,
        event.messageUuid ?? null,
        event.customId ?? null,
        event.email,
        event.payload ?? null,
        life.state,
        life.bounce ?? null,
        life.rank,
        count,
        t,
      );
      const p = params.length - 9;
      return `($${p}, $${p + 1}, $${p + 2}, $${p + 3}, NULL, NULL, $${p + 4}, $${p + 5}, $${p + 6}, $${p + 7}, $${p + 8}, $${p + 9}, $${p + 9})`;
    });
    await tx.run(`${MESSAGE_UPSERT_HEAD} VALUES ${values.join(", ")} ${MESSAGE_UPSERT_TAIL}`, params);
  }
}

/** Whether `a` replaces `b` on the list (the rule of upsertSuppression's WHERE). */
const strongerSuppression = (a: SuppressionWrite, b: SuppressionWrite) =>
  reasonRank(a.reason) > reasonRank(b.reason) ||
  (reasonRank(a.reason) === reasonRank(b.reason) && (a.eventKey ?? "") < (b.eventKey ?? ""));

const MESSAGE_UPSERT_HEAD = `INSERT INTO mail_messages
       (message_id, message_uuid, custom_id, email, sender, transport, payload, state, bounce, rank, events,
        created_at, updated_at)`;
const MESSAGE_UPSERT_TAIL = `ON CONFLICT (message_id) DO UPDATE SET
       message_uuid = COALESCE(mail_messages.message_uuid, excluded.message_uuid),
       custom_id = COALESCE(mail_messages.custom_id, excluded.custom_id),
       sender = COALESCE(mail_messages.sender, excluded.sender),
       transport = COALESCE(mail_messages.transport, excluded.transport),
       payload = COALESCE(mail_messages.payload, excluded.payload),
       state = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.state ELSE mail_messages.state END,
       bounce = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.bounce ELSE mail_messages.bounce END,
       rank = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.rank ELSE mail_messages.rank END,
       events = mail_messages.events + excluded.events,
       updated_at = excluded.updated_at`;

interface FeedRow {
  seq: number | string;
  kind: string;
  time: number | string;
  message_id: string;
  email: string;
  detail: string;
  message_uuid: string | null;
  custom_id: string | null;
  sender: string | null;
  payload: string | null;
  state: MailState | null;
}

async function eventsAfter(db: Database, after: number, { kinds, limit }: FeedOptions): Promise<EventFeedPage> {
  const params: unknown[] = [after];
  let where = "e.seq > $1";
  if (kinds && kinds.length > 0) {
    where += ` AND e.kind IN (${list(2, kinds.length)})`;
    params.push(...kinds);
  }
  params.push(limit + 1);
  const rows = await db.query<FeedRow>(
    `SELECT e.seq, e.kind, e.time, e.message_id, e.email, e.detail,
            m.message_uuid, m.custom_id, m.sender, m.payload, m.state
     FROM mail_events e LEFT JOIN mail_messages m ON m.message_id = e.message_id
     WHERE ${where} ORDER BY e.seq LIMIT $${params.length}`,
    params,
  );
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const events = page.map(
    (row): FeedEvent => ({
      cursor: String(row.seq),
      event: row.kind,
      time: iso(row.time),
      MessageID: exactInteger(row.message_id),
      MessageUUID: row.message_uuid,
      CustomID: row.custom_id,
      email: row.email,
      From: row.sender,
      // An event always lands with its message (one transaction); "sent" only if a row were ever removed by hand.
      State: row.state ?? "sent",
      ...(parseJson(row.detail) as Record<string, unknown>),
      ...(row.payload !== null ? { Payload: row.payload } : {}),
    }),
  );
  return { events, cursor: events.at(-1)?.cursor ?? String(after), more };
}

/** Inserts a message, or fills in what an earlier event did not know and lifts its state by rank. */
async function upsertMessage(
  tx: Sql,
  m: Omit<SendRecord, "sender" | "transport" | "fact"> & { sender: string | null; transport: string | null },
  fact: Fact,
  /** Events this write adds to the message's count. */
  events = 0,
): Promise<void> {
  const life = lifecycleOf(fact);
  const t = now();
  await tx.run(
    `INSERT INTO mail_messages
       (message_id, message_uuid, custom_id, email, sender, transport, payload, state, bounce, rank, events,
        created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $12, $11, $11)
     ON CONFLICT (message_id) DO UPDATE SET
       message_uuid = COALESCE(mail_messages.message_uuid, excluded.message_uuid),
       custom_id = COALESCE(mail_messages.custom_id, excluded.custom_id),
       sender = COALESCE(mail_messages.sender, excluded.sender),
       transport = COALESCE(mail_messages.transport, excluded.transport),
       payload = COALESCE(mail_messages.payload, excluded.payload),
       state = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.state ELSE mail_messages.state END,
       bounce = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.bounce ELSE mail_messages.bounce END,
       rank = CASE WHEN excluded.rank > mail_messages.rank THEN excluded.rank ELSE mail_messages.rank END,
       events = mail_messages.events + excluded.events,
       updated_at = excluded.updated_at`,
    [
      m.messageId,
      m.messageUuid ?? null,
      m.customId ?? null,
      m.email,
      m.sender,
      m.transport,
      m.payload ?? null,
      life.state,
      life.bounce ?? null,
      life.rank,
      t,
      events,
    ],
  );
}

async function recordSends(tx: Sql, records: readonly SendRecord[]): Promise<void> {
  for (const r of records) {
    const sender = suppressionKey(r.sender);
    await upsertMessage(tx, { ...r, sender }, r.fact);
    // Events that came before this record suppressed for every sender: now the sender is known.
    const early = await tx.query<SuppressionRow>(
      "SELECT * FROM mail_suppressions WHERE sender = $1 AND message_id = $2",
      [ANY_SENDER, r.messageId],
    );
    for (const row of early) {
      await tx.run("DELETE FROM mail_suppressions WHERE sender = $1 AND email = $2", [ANY_SENDER, row.email]);
      await upsertSuppression(tx, {
        sender,
        email: row.email,
        reason: row.reason,
        messageId: row.message_id,
        eventKey: row.event_key,
        since: Number(row.since),
      });
    }
  }
}

/** Stores one event; resolves to false when it was stored before (nothing changes then). */
async function applyEvent(tx: Sql, event: MailEvent, softBounceLimit: number): Promise<boolean> {
  const [known] = await tx.query<{ events: number; sender: string | null }>(
    "SELECT events, sender FROM mail_messages WHERE message_id = $1",
    [event.messageId],
  );
  // Under the cap, the event's own row is the proof of a repeat; past it the key is not kept (at most once more).
  if (Number(known?.events ?? 0) < MAX_EVENTS_PER_MESSAGE && (await insertEvents(tx, [event])).size === 0) {
    return false;
  }
  await upsertMessage(
    tx,
    {
      messageId: event.messageId,
      messageUuid: event.messageUuid,
      customId: event.customId,
      email: event.email,
      payload: event.payload,
      sender: null,
      transport: null,
    },
    event.fact,
    1,
  );
  const sender = known?.sender ?? ANY_SENDER;
  const reason = suppressionOf(event.fact);
  if (reason) {
    await upsertSuppression(tx, {
      sender,
      email: suppressionKey(event.email),
      reason,
      messageId: event.messageId,
      eventKey: event.key,
      since: event.time,
    });
  } else if (event.fact === "soft_bounce") {
    await softBounced(tx, sender, suppressionKey(event.email), softBounceLimit);
  }
  return true;
}

/** After `limit` soft bounces to one address (from one sender), it is suppressed; the cause is the earliest key. */
async function softBounced(tx: Sql, sender: string, email: string, limit: number): Promise<void> {
  const rows = await tx.query<{ message_id: string; key: string; time: number | string }>(
    `SELECT e.message_id, e.key, e.time FROM mail_events e JOIN mail_messages m ON m.message_id = e.message_id
     WHERE e.email = $1 AND e.fact = 'soft_bounce' AND COALESCE(m.sender, $2) = $3 ORDER BY e.key`,
    [email, ANY_SENDER, sender],
  );
  if (rows.length < limit) return;
  const first = rows[0]!;
  await upsertSuppression(tx, {
    sender,
    email,
    reason: "soft_bounce",
    messageId: first.message_id,
    eventKey: first.key,
    since: Number(first.time),
  });
}

interface SuppressionWrite {
  sender: string;
  email: string;
  reason: SuppressionReason;
  messageId: string | null;
  eventKey: string | null;
  since: number;
}

/** Adds a suppression, or replaces one of a weaker reason (between equals, the smaller cause key wins). */
async function upsertSuppression(tx: Sql, s: SuppressionWrite): Promise<boolean> {
  const changed = await tx.run(
    `INSERT INTO mail_suppressions (sender, email, reason, reason_rank, message_id, event_key, since)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (sender, email) DO UPDATE SET
       reason = excluded.reason, reason_rank = excluded.reason_rank, message_id = excluded.message_id,
       event_key = excluded.event_key, since = excluded.since
     WHERE excluded.reason_rank > mail_suppressions.reason_rank
        OR (excluded.reason_rank = mail_suppressions.reason_rank AND excluded.event_key < mail_suppressions.event_key)`,
    [s.sender, s.email, s.reason, reasonRank(s.reason), s.messageId, s.eventKey, s.since],
  );
  return changed > 0;
}

const toSuppression = (row: SuppressionRow): Suppression => ({
  sender: row.sender,
  email: row.email,
  reason: row.reason,
  since: iso(row.since),
  message_id: row.message_id,
  event: row.event_key,
});

async function messagesOf(db: Database, id: string): Promise<MessageView[]> {
  const rows = await db.query<MessageRow>(
    `SELECT * FROM mail_messages WHERE message_id = $1 OR message_uuid = $1 OR custom_id = $1
     ORDER BY message_id LIMIT 1000`,
    [id],
  );
  if (rows.length === 0) return [];
  const events = await db.query<EventRow>(
    `SELECT message_id, kind, time, detail FROM mail_events WHERE message_id IN (${list(1, rows.length)})
     ORDER BY time, key`,
    rows.map((r) => r.message_id),
  );
  return rows.map((row) => ({
    MessageID: exactInteger(row.message_id),
    MessageUUID: row.message_uuid,
    CustomID: row.custom_id,
    Email: row.email,
    From: row.sender,
    Transport: row.transport,
    State: row.state,
    ...(row.bounce ? { Bounce: row.bounce } : {}),
    EventPayload: row.payload,
    Events: events
      .filter((e) => e.message_id === row.message_id)
      .map((e) => ({
        event: e.kind,
        time: iso(e.time),
        ...(parseJson(e.detail) as Record<string, unknown>),
        ...(row.payload !== null ? { Payload: row.payload } : {}),
      })),
    EventsTruncated: Number(row.events) > MAX_EVENTS_PER_MESSAGE,
  }));
}
