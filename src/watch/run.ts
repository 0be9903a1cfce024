/**
 * One watch's run between polls: each `tick` polls every rule, takes its new records into the journal, claims
 * email intents and sends them. A dry run (`previewWatch`) is this same run over a store that keeps its writes in
 * memory (dry-store.ts) and a `deliver` that only collects the emails.
 */
import { createHash } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { hexToNumber, RpcClient } from "../chain/index.js";
import { ChainmailError } from "../core/errors.js";
import type { Logger } from "../core/node.js";
import type { Enricher, TokenDetails } from "../enrichment/enrich.js";
import { unsubscribeUrl } from "../mail/unsubscribe.js";
import type { EmailMessage, MessageResult } from "../schemas/email.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import type { Rule, WatchConfig } from "./config.js";
import {
  type FollowContext,
  findFloor,
  fingerprintOf,
  type Horizon,
  holdOffMs,
  horizonOf,
  isAfter,
  PagesMoved,
  type ReadBatch,
  readRule,
} from "./follow.js";
import { ETH_TOKENS, later, type Position, positionOf, recordKeys, ruleWants } from "./records.js";
import { digestMessage, eachMessage, overflowMessage, retractionMessage, transactionMessage } from "./render.js";
import { nextSlot, type Schedule } from "./schedule.js";
import { resolveMails, type SendContext, sendMails } from "./send.js";
import type { Mail, MailKind, MailResult, RuleState, StoredRecord, WatchStore } from "./store.js";

/** A digest carries at most this many records; more wait for the next one. */
const DIGEST_MAX_RECORDS = 500;

/** Emails journalled and sent per email-send run; a longer queue (a catch-up) goes out in several. */
export const SEND_BATCH = 100;

/**
 * `node:diagnostics_channel` channels around each send, for instrumentation in the watch's process (published only
 * when subscribed): `journalled` with `{ mails: [{ customId, rule }] }` once the intents are durable and before
 * `email-send` runs; `sent` with `{ results: [{ customId, state }] }` once it returned and before the results are
 * written. A crash between the two is what the journal resolves on restart.
 */
const WATCH_CHANNELS = {
  journalled: channel("chainmail:watch:journalled"),
  sent: channel("chainmail:watch:sent"),
} as const;

/** The CustomID of a rule's email: the rule and what it carries, so the same intent always has the same id. */
export function customIdOf(rule: string, keys: readonly string[]): string {
  if (keys.length === 1) return `cw.${rule}.${keys[0]}`;
  return `cw.${rule}.d${createHash("sha256").update(keys.join(",")).digest("hex").slice(0, 24)}`;
}

/**
 * The CustomID of a retraction (`r`) or of a clock hour's digest (`h`): by the records it carries, each of which one
 * such email ever carries, so the same intent always has the same id and no other email shares it.
 */
export function followUpIdOf(rule: string, kind: "r" | "h", keys: readonly string[]): string {
  return `cw.${rule}.${kind}${createHash("sha256").update(keys.join(",")).digest("hex").slice(0, 24)}`;
}

/** The CustomID of a scheduled digest: the rule and its slot (`cw.daily.s20261129T0700Z`). */
export function scheduledIdOf(rule: string, slot: number): string {
  return `cw.${rule}.s${new Date(slot).toISOString().slice(0, 16).replace(/[-:]/g, "")}Z`;
}

const HOUR_MS = 3_600_000;

/** A block's header with its transactions' hashes: a large mainnet block's is well under this. */
const FINALIZED_ANSWER_BYTES = 4_000_000;

/** What the watch says of a rule that cannot start yet (logged once; a dry run says it too). */
const WAITING_FOR_INDEX = "waiting to start the rule: the index has not seen the chain yet (run chainmail index)";

/**
 * Where a rule's last poll read: it could not start yet (`why`), or from `from` (`started`: it started at that
 * poll, after that position).
 */
export type RuleRead =
  | { waiting: true; why: string }
  | { waiting: false; from: Horizon; started: Position | undefined };

export interface WatchSummary {
  polls: number;
  /** Emails by final state over this run. */
  sent: number;
  failed: number;
  unknown: number;
  /** Emails surely not sent, waiting in the journal to be sent again by a later poll, when the run ended. */
  retrying: number;
}

export interface WatchContext {
  follow: FollowContext;
  send: SendContext;
  logger: Logger;
  /**
   * A dry run: `deliver` takes the emails instead of `email-send`, a failing rule fails the run instead of waiting
   * for the next poll, and a digest is shown whether or not it is due.
   */
  dryRun?: { deliver(mails: readonly Mail[]): MailResult[] };
  /** Token details for the templates (enrichment/enrich.ts), when they are on: one budget per poll's mails. */
  details?: Pick<Enricher, "session"> | undefined;
}

/** The details of records, in order (none when token details are off). */
type DetailsOf = (records: readonly TransactionRecord[]) => Promise<TokenDetails[]>;

/** One watch's state between polls: back-off after failures, counts. */
export class WatchRun {
  readonly summary: WatchSummary = { polls: 0, sent: 0, failed: 0, unknown: 0, retrying: 0 };
  private readonly holdOff = new Map<string, number>();
  /** Rules that cannot start yet (logged once). */
  private readonly waiting = new Set<string>();
  /** Rules started at this poll: where each starts (records after it are mailed). */
  private readonly started = new Map<string, Position>();
  /** Where each rule's last poll read, by rule id. */
  readonly reads = new Map<string, RuleRead>();
  private sendFailures = 0;
  /** The own index's head at this tick's sends, when a rule waits for confirmations. */
  private head: number | undefined;
  /** The node's finalized block at this tick's sends, when a rule waits for it (`confirmations: "finalized"`). */
  private finalized: number | undefined;
  private finalizedRpc: RpcClient | undefined;
  /** The node could not say its finalized block at the last try (warned once until it can again). */
  private finalizedFailing = false;
  private sendHoldOff = 0;

  constructor(
    private readonly watchConfig: WatchConfig,
    private readonly store: WatchStore,
    private readonly ctx: WatchContext,
  ) {}

  async tick(): Promise<void> {
    this.summary.polls++;
    // Intents left open (a crash, a failed bookkeeping write) are resolved before anything new is sent.
    await this.resolveOpen();
    for (const rule of this.watchConfig.rules) {
      if (this.ctx.follow.signal?.aborted) return;
      if ((this.holdOff.get(rule.id) ?? 0) > Date.now()) continue;
      try {
        await this.poll(rule);
      } catch (err) {
        this.failed(rule, err);
      }
    }
    await this.mailQueued();
  }

  private failed(rule: Rule, err: unknown): void {
    // A store that fails, or a rule whose query changed under its id, is not something the next poll mends.
    if (err instanceof ChainmailError && (err.code === "storage_error" || err.code === "invalid_input")) throw err;
    if (this.ctx.dryRun) throw err;
    const wait = holdOffMs(err);
    if (wait !== undefined) {
      this.ctx.follow.pacer?.pauseUntil(Date.now() + wait);
      this.holdOff.set(rule.id, Date.now() + wait);
    }
    const error = err instanceof Error ? err.message : String(err);
    this.ctx.logger.warn(
      { rule: rule.id, code: (err as { code?: string }).code, error, ...(wait ? { retry_in_ms: wait } : {}) },
      "reading the rule's records failed; it is tried again at the next poll",
    );
  }

  private async resolveOpen(): Promise<void> {
    const open = await this.store.mails(["pending"]);
    if (!open.length) return;
    let results: MailResult[];
    try {
      results = await resolveMails(open, this.ctx.send);
    } catch (err) {
      // They stay open (never resent); new intents are independent of them and go on.
      this.ctx.logger.warn(
        { error: err instanceof Error ? err.message : String(err), emails: open.length },
        "could not look up emails left open by an earlier run; trying again at the next poll",
      );
      return;
    }
    await this.store.settle(results);
    for (const r of results) this.count(r, "resolved");
  }

  /** The rule's saved state; a rule seen for the first time is started (undefined while it cannot start yet). */
  private async startedState(rule: Rule): Promise<RuleState | undefined> {
    const { follow, logger } = this.ctx;
    const fingerprint = fingerprintOf(rule, follow);
    const state = await this.store.ruleState(rule.id);
    if (state && state.fingerprint !== fingerprint) {
      throw new ChainmailError(
        "INVALID_INPUT",
        `Rule ${rule.id} now reads other records than when its state was saved (${state.fingerprint} → ${fingerprint}).`,
        { hint: "Give a rule with a new query a new id.", details: { field: "rules.id", rule: rule.id } },
      );
    }
    if (state) return state;
    const floor = await findFloor(rule, follow);
    if (!floor) {
      if (!this.waiting.has(rule.id)) {
        logger.warn({ rule: rule.id }, WAITING_FOR_INDEX);
      }
      this.waiting.add(rule.id);
      return undefined;
    }
    this.waiting.delete(rule.id);
    await this.store.startRule(rule.id, fingerprint, floor);
    this.started.set(rule.id, floor);
    logger.info({ rule: rule.id, after_block: floor.block ?? null, after_date: floor.date }, "rule started");
    return this.store.ruleState(rule.id);
  }

  /** Reads the rule's new records and takes them into the journal, batch by batch, oldest first. */
  private async poll(rule: Rule): Promise<void> {
    const state = await this.startedState(rule);
    if (!state) {
      this.reads.set(rule.id, { waiting: true, why: WAITING_FOR_INDEX });
      return;
    }
    const horizon = horizonOf(state.floor, state.read, this.ctx.follow.reorgDepth);
    this.reads.set(rule.id, { waiting: false, from: horizon, started: this.started.get(rule.id) });
    this.started.delete(rule.id);
    let from = horizon.block ?? 0;
    let read = state.read;
    try {
      for await (const batch of readRule(rule, horizon, this.ctx.follow)) {
        read = await this.take(rule, state.floor, read, batch, from);
        if (batch.through !== undefined) from = batch.through + 1;
        // Stopping between batches loses nothing: the next poll reads on from the last one taken.
        if (this.ctx.follow.signal?.aborted) return;
      }
    } catch (err) {
      if (!(err instanceof PagesMoved)) throw err;
      this.ctx.logger.info({ rule: rule.id }, err.message);
    }
  }

  /**
   * Takes a batch's new records into the journal with the read position, after checking the blocks it covers
   * (from `from` on) for reorgs: every record taken there must have been read again. Returns the read position.
   */
  private async take(
    rule: Rule,
    floor: Position,
    read: Position | undefined,
    batch: ReadBatch,
    from: number,
  ): Promise<Position | undefined> {
    const { logger } = this.ctx;
    const wanted = batch.records.filter((r) => isAfter(r, floor) && ruleWants(rule, r, ETH_TOKENS));
    const keys = recordKeys(wanted);

    await this.checkReorgs(rule, new Set(keys), from, batch.through);

    const known = await this.store.knownKeys(rule.id, keys);
    const fresh = wanted.map((record, i) => ({ record, key: keys[i]!, position: positionOf(record) }));
    const taken = fresh.filter((r) => !known.has(r.key));
    const newest = batch.records.reduce<Position | undefined>((at, r) => later(at, positionOf(r)), undefined);
    const position = later(read, newest);
    if (!taken.length && position === read) return read;
    await this.store.take(
      rule.id,
      taken,
      position ?? floor,
      taken.length && rule.mode === "digest" ? Date.now() : undefined,
    );
    if (taken.length) logger.info({ rule: rule.id, records: taken.length }, "new records");
    return position;
  }

  /**
   * Marks the records taken in blocks `from` to `through` that this read no longer has (a reorg removed them) and
   * clears the mark of removed ones that are back.
   */
  private async checkReorgs(rule: Rule, present: ReadonlySet<string>, from: number, through: number | undefined) {
    const { logger } = this.ctx;
    const window = await this.store.recordsFrom(rule.id, from, through);
    const gone = window.filter((s) => !s.reorged && !present.has(s.key));
    const back = window.filter((s) => s.reorged && present.has(s.key));
    if (gone.length) {
      await this.store.markReorged(
        rule.id,
        gone.map((s) => s.key),
        true,
      );
      for (const s of gone) {
        const mailed = s.state !== "queued";
        logger.warn(
          { rule: rule.id, key: s.key, block: s.position.block, state: s.state, custom_id: s.customId ?? null },
          !mailed
            ? "a reorg removed a record before it was mailed; it will not be mailed"
            : rule.retract
              ? "a reorg removed a record that was already mailed; a retraction follows once its email is sent"
              : "a reorg removed a record that was already mailed; nothing more is sent for it",
        );
      }
    }
    if (back.length) {
      await this.store.markReorged(
        rule.id,
        back.map((s) => s.key),
        false,
      );
      for (const s of back) logger.info({ rule: rule.id, key: s.key }, "a record removed by a reorg is back");
    }
  }

  /**
   * Journals and sends what the rules have queued, at most SEND_BATCH new emails per email-send run (with the
   * retries that are due), until nothing more is due. While sends fail (surely not sent), new records wait queued.
   */
  private async mailQueued(): Promise<void> {
    const { rules } = this.watchConfig;
    this.head = rules.some((r) => typeof r.confirmations === "number" && r.confirmations > 0)
      ? await this.indexHead()
      : undefined;
    this.finalized = rules.some((r) => r.confirmations === "finalized") ? await this.finalizedBlock() : undefined;
    let retries = Date.now() >= this.sendHoldOff ? await this.store.mails(["retry"], SEND_BATCH) : [];
    const detailsOf: DetailsOf = this.ctx.details?.session(this.ctx.follow.signal) ?? (async () => []);
    for (;;) {
      if (this.ctx.follow.signal?.aborted || Date.now() < this.sendHoldOff) return;
      const journalled: Mail[] = [];
      let more = false;
      for (const rule of this.watchConfig.rules) {
        const room = SEND_BATCH - journalled.length;
        if (room <= 0) {
          more = true;
          break;
        }
        const claimed = await this.claim(rule, room, detailsOf);
        journalled.push(...claimed.mails);
        more ||= claimed.more;
      }
      if (!journalled.length && !retries.length) return;
      await this.send(journalled, retries);
      retries = [];
      if (!more) return;
    }
  }

  /**
   * Turns what the rule has due into journalled email intents, at most `room`: retractions, the digest of a clock
   * hour that ended with records held back, then the oldest queued records (one email each, a transaction's, or a
   * due digest), of which those past `max_per_hour` are held for their hour's digest. `more`: some may be due now.
   */
  private async claim(rule: Rule, room: number, detailsOf: DetailsOf): Promise<{ mails: Mail[]; more: boolean }> {
    // One moment for the hour's count and the journal's time: a claim across the hour's end counts in one hour.
    const now = Date.now();
    const hour = Math.floor(now / HOUR_MS);
    const followUps = [
      ...(rule.retract ? await this.retractions(rule, room, detailsOf) : []),
      ...(rule.max_per_hour !== undefined ? await this.hourDigest(rule, hour, detailsOf) : []),
    ];
    // A follow-up may leave others (more removed records, another hour's): look again until none comes.
    let more = followUps.length > 0;
    let intents = followUps.slice(0, room);
    if (room > intents.length) {
      const own = await this.recordIntents(rule, room - intents.length, detailsOf);
      more ||= own.more;
      intents = [...intents, ...(await this.capped(rule, hour, own.intents))];
    }
    if (intents.length) await this.store.journal(rule.id, intents, now);
    return { mails: intents.map((i) => i.mail), more };
  }

  /** One email per record. */
  private async eachIntents(rule: Rule, mailed: readonly StoredRecord[], detailsOf: DetailsOf): Promise<Intent[]> {
    const details = await detailsOf(mailed.map((q) => q.record));
    return mailed.map((q, i) => {
      const customId = customIdOf(rule.id, [q.key]);
      const message = eachMessage(rule, q.record, customId, this.unsubscribeUrl(rule), details[i]);
      return { mail: mailOf(rule, customId, message), keys: [q.key] };
    });
  }

  /** The rule's own emails: one per queued record (at most `room`), per transaction, or a due digest. */
  private async recordIntents(
    rule: Rule,
    room: number,
    detailsOf: DetailsOf,
  ): Promise<{ intents: Intent[]; more: boolean }> {
    const confirmed = this.confirmedOf(rule);
    if (rule.mode === "each" && rule.group === "transaction") return this.transactionIntents(rule, room, detailsOf);
    if (rule.mode === "each") {
      const queued = confirmed(await this.store.queued(rule.id, room + 1));
      return { intents: await this.eachIntents(rule, queued.slice(0, room), detailsOf), more: queued.length > room };
    }
    // Enough to see the record threshold, and one more to know whether a full digest leaves some over.
    const queued = confirmed(
      await this.store.queued(rule.id, Math.max(DIGEST_MAX_RECORDS, rule.digest?.records ?? 0) + 1),
    );
    if (!queued.length) return { intents: [], more: false };
    const state = await this.store.ruleState(rule.id);
    // No start on record (what a full digest left over, a record back after a reorg): it has waited long enough.
    const since = state?.digestSince ?? 0;
    const now = Date.now();
    const byCount = rule.digest?.records !== undefined && queued.length >= rule.digest.records;
    const byTime = rule.digest?.minutes !== undefined && now - since >= rule.digest.minutes * 60_000;
    // A schedule: the records wait for the first slot after the first of them came (none on record, or a dry run's
    // 0: due now, named by its records rather than by a slot of 1970).
    const slot =
      rule.digest?.at !== undefined && state?.digestSince
        ? nextSlot(scheduleOf(rule.digest), state.digestSince)
        : undefined;
    const bySlot = rule.digest?.at !== undefined && (slot === undefined || slot <= now);
    if (!byCount && !byTime && !bySlot && !this.ctx.dryRun) return { intents: [], more: false };
    const batch = queued.slice(0, DIGEST_MAX_RECORDS);
    const keys = batch.map((q) => q.key);
    // A slot's digest is named by it: journalling it closes the window, so no other digest is ever of that slot.
    const customId = slot !== undefined && slot <= now ? scheduledIdOf(rule.id, slot) : customIdOf(rule.id, keys);
    const records = batch.map((q) => q.record);
    const message = digestMessage(
      rule,
      records,
      customId,
      this.unsubscribeUrl(rule),
      undefined,
      await detailsOf(records),
    );
    return { intents: [{ mail: mailOf(rule, customId, message), keys }], more: queued.length > batch.length };
  }

  /**
   * `max_per_hour`: the intents that fit in this clock hour's remaining emails; the records of the others are held
   * for the hour's digest (a record is held once, and held records leave the queue, so none is mailed twice).
   */
  private async capped(rule: Rule, hour: number, intents: Intent[]): Promise<Intent[]> {
    if (rule.max_per_hour === undefined || !intents.length) return intents;
    const left = Math.max(0, rule.max_per_hour - (await this.store.mailsSince(rule.id, hour * HOUR_MS)));
    const over = intents.slice(left);
    if (!over.length) return intents;
    const keys = over.flatMap((i) => i.keys);
    await this.store.hold(rule.id, keys, hour);
    this.ctx.logger.info(
      {
        rule: rule.id,
        records: keys.length,
        hour: new Date(hour * HOUR_MS).toISOString(),
        max_per_hour: rule.max_per_hour,
      },
      "max_per_hour reached: records wait for the hour's digest, sent when the hour ends",
    );
    return intents.slice(0, left);
  }

  /** The digest of the oldest clock hour that ended with records held back (at most DIGEST_MAX_RECORDS of them). */
  private async hourDigest(rule: Rule, hour: number, detailsOf: DetailsOf): Promise<Intent[]> {
    const held = await this.store.held(rule.id, hour, DIGEST_MAX_RECORDS);
    const oldest = held[0]?.heldHour;
    const batch = held.filter((q) => q.heldHour === oldest);
    if (!batch.length) return [];
    const keys = batch.map((q) => q.key);
    const customId = followUpIdOf(rule.id, "h", keys);
    const records = batch.map((q) => q.record);
    const message = overflowMessage(rule, records, customId, this.unsubscribeUrl(rule), await detailsOf(records));
    return [{ mail: mailOf(rule, customId, message, "overflow"), keys }];
  }

  /**
   * `retract`: one email per sent email whose records a reorg removed, naming those records (a transaction's: its
   * hash and tokens). Journalling it marks the records, so none is retracted twice.
   */
  private async retractions(rule: Rule, room: number, detailsOf: DetailsOf): Promise<Intent[]> {
    const removed = await this.store.retractable(rule.id, DIGEST_MAX_RECORDS);
    const byMail = new Map<string, StoredRecord[]>();
    for (const r of removed) {
      const id = r.customId ?? r.key;
      byMail.set(id, [...(byMail.get(id) ?? []), r]);
    }
    const groups = [...byMail.values()].slice(0, room);
    const details = await detailsOf(groups.flat().map((r) => r.record));
    const firstOf = groups.map((_, k) => groups.slice(0, k).reduce((n, g) => n + g.length, 0));
    return groups.map((records, k) => {
      const keys = records.map((r) => r.key);
      const customId = followUpIdOf(rule.id, "r", keys);
      const message = retractionMessage(
        rule,
        records.map((r) => r.record),
        customId,
        this.unsubscribeUrl(rule),
        details.slice(firstOf[k], firstOf[k]! + records.length),
      );
      return { mail: mailOf(rule, customId, message, "retraction"), keys };
    });
  }

  /** The one-click link of a rule that mails one recipient (a link must unsubscribe only whoever follows it). */
  private unsubscribeUrl(rule: Rule): string | undefined {
    const recipients = [...rule.mail.to, ...(rule.mail.cc ?? []), ...(rule.mail.bcc ?? [])];
    if (recipients.length !== 1) return undefined;
    const claim = { sender: rule.from.Email.toLowerCase(), email: recipients[0]!.Email, campaign: rule.id };
    return unsubscribeUrl(this.ctx.send.config.env, claim);
  }

  /**
   * `group: "transaction"`: one intent per transaction of the oldest queued records (at most `room`), carrying the
   * keys of all its records, so the journal takes them together or not at all. A transaction is taken in one read
   * (reads cover whole blocks), so its records are queued together; the last one read here may go on past the
   * records looked at, and waits unless it is the only one.
   */
  private async transactionIntents(
    rule: Rule,
    room: number,
    detailsOf: DetailsOf,
  ): Promise<{ intents: Intent[]; more: boolean }> {
    const queued = this.confirmedOf(rule)(await this.store.queued(rule.id, DIGEST_MAX_RECORDS + 1));
    const groups = new Map<string, typeof queued>();
    for (const q of queued) {
      const hash = (q.record as { transaction_hash?: unknown }).transaction_hash;
      const id = typeof hash === "string" && hash ? hash.toLowerCase() : `key:${q.key}`;
      groups.set(id, [...(groups.get(id) ?? []), q]);
    }
    const all = [...groups.values()];
    const cut = queued.length > DIGEST_MAX_RECORDS && all.length > 1 ? all.slice(0, -1) : all;
    const taken = cut.slice(0, room);
    const details = await detailsOf(taken.flat().map((q) => q.record));
    const firstOf = taken.map((_, k) => taken.slice(0, k).reduce((n, g) => n + g.length, 0));
    const intents = taken.map((group, k) => {
      const keys = group.map((q) => q.key);
      const customId = customIdOf(rule.id, keys);
      const message = transactionMessage(
        rule,
        group.map((q) => q.record),
        customId,
        this.unsubscribeUrl(rule),
        details.slice(firstOf[k], firstOf[k]! + group.length),
      );
      return { mail: mailOf(rule, customId, message), keys };
    });
    return { intents, more: all.length > taken.length || queued.length > DIGEST_MAX_RECORDS };
  }

  /**
   * The oldest queued records up to the first one not yet `confirmations` blocks deep, or not yet finalized (records
   * without a block, bids and listings, do not wait); none while the index has no head (the node no finalized block).
   */
  private confirmedOf(rule: Rule): (queued: StoredRecord[]) => StoredRecord[] {
    const confirmations = rule.confirmations ?? 0;
    if (!confirmations) return (queued) => queued;
    const { head, finalized } = this;
    const deep =
      confirmations === "finalized"
        ? (block: number) => finalized !== undefined && block <= finalized
        : (block: number) => head !== undefined && block + confirmations <= head;
    return (queued) => {
      const waiting = queued.findIndex((q) => q.position.block !== undefined && !deep(q.position.block));
      return waiting === -1 ? queued : queued.slice(0, waiting);
    };
  }

  /**
   * The finalized block of the index's node (INDEX_RPC_URL, `eth_getBlockByNumber("finalized")`); undefined when the
   * node cannot say (down, or a chain without finality): the rule's records wait, and the watch says so once.
   */
  private async finalizedBlock(): Promise<number | undefined> {
    const { config, signal } = this.ctx.follow;
    const url = config.indexRpc.url;
    if (!url) return undefined;
    this.finalizedRpc ??= new RpcClient(url, {
      pool: config.pool,
      timeoutMs: config.indexRpc.timeoutMs,
      retry: config.indexRpc.retry,
      signal,
    });
    let why: string;
    try {
      const block = await this.finalizedRpc.call<{ number?: unknown } | null>(
        "eth_getBlockByNumber",
        ["finalized", false],
        FINALIZED_ANSWER_BYTES,
      );
      if (typeof block?.number === "string") {
        if (this.finalizedFailing)
          this.ctx.logger.info({ node: this.finalizedRpc.origin }, "the node has a finalized block again");
        this.finalizedFailing = false;
        return hexToNumber(block.number);
      }
      why = "it has no finalized block";
    } catch (err) {
      if (signal?.aborted) throw err;
      why = err instanceof Error ? err.message : String(err);
    }
    if (!this.finalizedFailing) {
      this.ctx.logger.warn(
        { node: this.finalizedRpc.origin, error: why },
        'the node could not say its finalized block: records of rules with confirmations "finalized" wait',
      );
    }
    this.finalizedFailing = true;
    return undefined;
  }

  /** The chain head the own index's writer last saw (undefined: none yet, or no index). */
  private async indexHead(): Promise<number | undefined> {
    const { indexStatus } = await import("../sources/own-index/index.js");
    const status = await indexStatus(this.ctx.follow.config).catch(() => undefined);
    const known = [status?.headBlock, status?.lastBlock].filter((b): b is number => typeof b === "number");
    return known.length ? Math.max(...known) : undefined;
  }

  /** Sends new intents and the retries due in one email-send run, then settles them. */
  private async send(journalled: readonly Mail[], retries: readonly Mail[]): Promise<void> {
    if (retries.length) await this.store.markSending(retries.map((m) => m.customId));
    const batch = [...journalled, ...retries];
    if (WATCH_CHANNELS.journalled.hasSubscribers && !this.ctx.dryRun) {
      WATCH_CHANNELS.journalled.publish({ mails: batch.map((m) => ({ customId: m.customId, rule: m.rule })) });
    }
    const results = this.ctx.dryRun ? this.ctx.dryRun.deliver(batch) : await sendMails(batch, this.ctx.send);
    if (WATCH_CHANNELS.sent.hasSubscribers && !this.ctx.dryRun) {
      WATCH_CHANNELS.sent.publish({ results: results.map((r) => ({ customId: r.customId, state: r.state })) });
    }
    await this.store.settle(results);
    results.forEach((r, i) => {
      this.count(r, "sent", batch[i]!.message.Subject);
    });
    const retry = results.filter((r) => r.state === "retry").length;
    if (retry) {
      this.sendFailures++;
      // Surely-not-sent emails wait, doubling from one poll interval up to five minutes.
      this.sendHoldOff = Date.now() + Math.min(300_000, this.watchConfig.pollMs * 2 ** (this.sendFailures - 1));
    } else {
      this.sendFailures = 0;
    }
  }

  private count(result: MailResult, how: "sent" | "resolved", subject?: string): void {
    const { logger } = this.ctx;
    const fields = { custom_id: result.customId, state: result.state, ...(subject === undefined ? {} : { subject }) };
    if (result.state === "sent") {
      this.summary.sent++;
      logger.info(fields, how === "sent" ? "mailed" : "an email left open by an earlier run had gone out");
    } else if (result.state === "unknown") {
      this.summary.unknown++;
      logger.warn(
        { ...fields, error: errorText(result.result) },
        "delivery unknown: it may have been delivered, so it is not sent again; check the provider",
      );
    } else if (result.state === "failed") {
      this.summary.failed++;
      logger.error({ ...fields, error: errorText(result.result) }, "the email was refused and will not be sent");
    } else {
      logger.warn({ ...fields, error: errorText(result.result) }, "the email was not sent; it is sent again later");
    }
  }
}

/** The schedule of a digest with `at` (its other fields defaulted). */
function scheduleOf(digest: {
  at?: string;
  every?: Schedule["every"];
  on?: Schedule["on"];
  timezone?: string;
}): Schedule {
  return { at: digest.at!, every: digest.every ?? "day", on: digest.on, timezone: digest.timezone };
}

/** An email to journal and the keys of the records it carries. */
interface Intent {
  mail: Mail;
  keys: string[];
}

function mailOf(rule: Rule, customId: string, message: EmailMessage, kind: MailKind = "record"): Mail {
  return { customId, rule: rule.id, state: "pending", message, attempts: 1, kind };
}

export function errorText(result: MessageResult): string {
  return result.Errors?.map((e) => `${e.ErrorCode}: ${e.ErrorMessage}`).join("; ") ?? "";
}
