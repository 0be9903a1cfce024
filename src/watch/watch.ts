/**
 * `chainmail watch`: NFT activity to email, as a flow of the existing nodes. Each poll, every rule reads its new
 * records through its retriever (follow.ts) and takes them into the journal; records become email intents
 * (each: one per record; digest: one per rule when due), journalled before `email-send` sends them, and settled
 * with the send's results. Never twice: a record is taken once (its key is a primary key), an intent is never sent
 * again once it may have gone out, and an intent left open by a crash is looked up in the transport, not resent.
 * Never skipped: records wait in the journal until their email's fate is known.
 */
import { createHash } from "node:crypto";
import { channel } from "node:diagnostics_channel";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import type { Logger } from "../core/node.js";
import { isPostgresUrl } from "../db/database.js";
import type { EmailMessage, MessageResult } from "../schemas/email.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { parseWatchConfig, type Rule, type WatchConfig } from "./config.js";
import { openWatchStore } from "./db-store.js";
import {
  type FollowContext,
  findFloor,
  fingerprintOf,
  holdOffMs,
  horizonOf,
  isAfter,
  Pacer,
  PagesMoved,
  type ReadBatch,
  readBatches,
} from "./follow.js";
import { ETH_TOKENS, type Position, positionOf, recordKeys, ruleWants } from "./records.js";
import { digestMessage, eachMessage } from "./render.js";
import { resolveMails, type SendContext, sendMails } from "./send.js";
import type { Mail, MailResult, RuleState, WatchStore } from "./store.js";

export interface WatchOptions {
  /** The configuration: the parsed JSON of a watch file (checked here), or an already checked one. */
  config: unknown;
  /** Settings (EMAIL_TRANSPORT, INDEX_DB, NFTPORT_API_KEY, …); default the process environment. */
  env?: Record<string, string | undefined>;
  signal?: AbortSignal;
  logger?: Logger;
  /** One poll and its sends, then return (default: until `signal` aborts). */
  once?: boolean;
}

export interface WatchSummary {
  polls: number;
  /** Emails by final state over this run. */
  sent: number;
  failed: number;
  unknown: number;
  /** Emails surely not sent, waiting in the journal to be sent again by a later poll, when the run ended. */
  retrying: number;
}

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

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The CustomID of a rule's email: the rule and what it carries, so the same intent always has the same id. */
export function customIdOf(rule: string, keys: readonly string[]): string {
  if (keys.length === 1) return `cw.${rule}.${keys[0]}`;
  return `cw.${rule}.d${createHash("sha256").update(keys.join(",")).digest("hex").slice(0, 24)}`;
}

/** Spaces the upstream calls of every rule: NFTPort's and OpenSea's rate limits (the own index needs none). */
function pacerFor(watchConfig: WatchConfig): Pacer | undefined {
  if (watchConfig.source === "index") return undefined;
  return new Pacer(
    watchConfig.source === "nftport" ? watchConfig.nftportRequestsPerSecond : watchConfig.openseaRequestsPerSecond,
  );
}

/** Settings the watch runs with: NFT_SOURCE from the config, and an SMTP journal beside the store. */
function settingsOf(watchConfig: WatchConfig, env: Record<string, string | undefined>) {
  const base = loadConfig({ ...env, NFT_SOURCE: watchConfig.source });
  const store = watchConfig.store ?? base.indexDb;
  const beside = isPostgresUrl(store) ? "./data" : dirname(store);
  const config = loadConfig({
    ...env,
    NFT_SOURCE: watchConfig.source,
    SMTP_JOURNAL: env.SMTP_JOURNAL || join(beside, "smtp-journal.jsonl"),
  });
  return { config, store };
}

export async function watch(options: WatchOptions): Promise<WatchSummary> {
  const env = options.env ?? process.env;
  const watchConfig = parseWatchConfig(options.config, env.NFT_SOURCE);
  const { config, store: where } = settingsOf(watchConfig, env);
  const logger = options.logger ?? silent;
  const store = await openWatchStore(where);
  const run = new WatchRun(watchConfig, store, {
    follow: {
      config,
      source: watchConfig.source,
      reorgDepth: watchConfig.reorgDepth,
      signal: options.signal,
      pacer: pacerFor(watchConfig),
    },
    send: { config, signal: options.signal, logger },
    logger,
  });
  let lock: { release(): Promise<void> } | undefined;
  try {
    lock = await store.lockWriter({
      signal: options.signal,
      onWait: () => logger.warn({ store: store.where }, "another chainmail watch is running on this store; waiting"),
    });
    logger.info({ store: store.where, rules: watchConfig.rules.length, source: watchConfig.source }, "watch started");
    for (;;) {
      await run.tick();
      if (options.once || options.signal?.aborted) break;
      await sleep(watchConfig.pollMs, undefined, { signal: options.signal }).catch(() => undefined);
      if (options.signal?.aborted) break;
    }
    run.summary.retrying = (await store.mails(["retry"])).length;
    return run.summary;
  } finally {
    await lock?.release();
    await store.close();
  }
}

interface RunContext {
  follow: FollowContext;
  send: SendContext;
  logger: Logger;
}

/** One watch's state between polls: back-off after failures, counts. */
class WatchRun {
  readonly summary: WatchSummary = { polls: 0, sent: 0, failed: 0, unknown: 0, retrying: 0 };
  private readonly holdOff = new Map<string, number>();
  /** Rules that cannot start yet (logged once). */
  private readonly waiting = new Set<string>();
  private sendFailures = 0;
  private sendHoldOff = 0;

  constructor(
    private readonly watchConfig: WatchConfig,
    private readonly store: WatchStore,
    private readonly ctx: RunContext,
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
        logger.warn(
          { rule: rule.id },
          "waiting to start the rule: the index has not seen the chain yet (run chainmail index)",
        );
      }
      this.waiting.add(rule.id);
      return undefined;
    }
    this.waiting.delete(rule.id);
    await this.store.startRule(rule.id, fingerprint, floor);
    logger.info({ rule: rule.id, after_block: floor.block ?? null, after_date: floor.date }, "rule started");
    return this.store.ruleState(rule.id);
  }

  /** Reads the rule's new records and takes them into the journal, batch by batch, oldest first. */
  private async poll(rule: Rule): Promise<void> {
    const state = await this.startedState(rule);
    if (!state) return;
    const horizon = horizonOf(state.floor, state.read, this.ctx.follow.reorgDepth);
    let from = horizon.block;
    let read = state.read;
    try {
      for await (const batch of readBatches(rule, horizon, this.ctx.follow)) {
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

    const present = new Set(keys);
    const window = await this.store.recordsFrom(rule.id, from, batch.through);
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
          mailed
            ? "a reorg removed a record that was already mailed; nothing more is sent for it"
            : "a reorg removed a record before it was mailed; it will not be mailed",
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
   * Journals and sends what the rules have queued, at most SEND_BATCH new emails per email-send run (with the
   * retries that are due), until nothing more is due. While sends fail (surely not sent), new records wait queued.
   */
  private async mailQueued(): Promise<void> {
    let retries = Date.now() >= this.sendHoldOff ? await this.store.mails(["retry"], SEND_BATCH) : [];
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
        const claimed = await this.claim(rule, room);
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
   * Turns the rule's oldest queued records into journalled email intents: one per record (at most `room`), or a due
   * digest. `more`: records are left that may be due now.
   */
  private async claim(rule: Rule, room: number): Promise<{ mails: Mail[]; more: boolean }> {
    let intents: { mail: Mail; keys: string[] }[];
    let more: boolean;
    if (rule.mode === "each") {
      const queued = await this.store.queued(rule.id, room + 1);
      more = queued.length > room;
      intents = queued.slice(0, room).map((q) => {
        const customId = customIdOf(rule.id, [q.key]);
        return { mail: mailOf(rule, customId, eachMessage(rule, q.record, customId)), keys: [q.key] };
      });
    } else {
      // Enough to see the record threshold, and one more to know whether a full digest leaves some over.
      const queued = await this.store.queued(rule.id, Math.max(DIGEST_MAX_RECORDS, rule.digest?.records ?? 0) + 1);
      if (!queued.length) return { mails: [], more: false };
      const state = await this.store.ruleState(rule.id);
      // No start on record (what a full digest left over, a record back after a reorg): it has waited long enough.
      const since = state?.digestSince ?? 0;
      const byCount = rule.digest?.records !== undefined && queued.length >= rule.digest.records;
      const byTime = rule.digest?.minutes !== undefined && Date.now() - since >= rule.digest.minutes * 60_000;
      if (!byCount && !byTime) return { mails: [], more: false };
      const batch = queued.slice(0, DIGEST_MAX_RECORDS);
      more = queued.length > batch.length;
      const keys = batch.map((q) => q.key);
      const customId = customIdOf(rule.id, keys);
      const message = digestMessage(
        rule,
        batch.map((q) => q.record),
        customId,
      );
      intents = [{ mail: mailOf(rule, customId, message), keys }];
    }
    if (intents.length) await this.store.journal(rule.id, intents);
    return { mails: intents.map((i) => i.mail), more };
  }

  /** Sends new intents and the retries due in one email-send run, then settles them. */
  private async send(journalled: readonly Mail[], retries: readonly Mail[]): Promise<void> {
    if (retries.length) await this.store.markSending(retries.map((m) => m.customId));
    const batch = [...journalled, ...retries];
    if (WATCH_CHANNELS.journalled.hasSubscribers) {
      WATCH_CHANNELS.journalled.publish({ mails: batch.map((m) => ({ customId: m.customId, rule: m.rule })) });
    }
    const results = await sendMails(batch, this.ctx.send);
    if (WATCH_CHANNELS.sent.hasSubscribers) {
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

function mailOf(rule: Rule, customId: string, message: EmailMessage): Mail {
  return { customId, rule: rule.id, state: "pending", message, attempts: 1 };
}

function errorText(result: MessageResult): string {
  return result.Errors?.map((e) => `${e.ErrorCode}: ${e.ErrorMessage}`).join("; ") ?? "";
}

/**
 * The later of two read positions, block and date each: a rule that mixes records with a block (on-chain) and
 * without (bids and listings) keeps the newest of each, so that neither kind's horizon stays behind.
 */
function later(a: Position | undefined, b: Position | undefined): Position | undefined {
  if (!a) return b;
  if (!b) return a;
  const block = a.block === undefined ? b.block : b.block === undefined ? a.block : Math.max(a.block, b.block);
  // Dates are strings in one format: their order is the text's (Math.max would make numbers of them).
  const date = [a.date, b.date].sort()[1]!;
  return block === a.block && date === a.date ? a : { block, date };
}

export interface PreviewEmail {
  rule: string;
  records: number;
  message: EmailMessage;
}

/**
 * `--dry-run`: the emails the next poll would send, without writing or sending anything. A rule with saved state
 * shows its new records; a rule that never ran shows what the records of its newest `reorg_depth` blocks would
 * give, as a preview of its template.
 */
export async function previewWatch(options: Omit<WatchOptions, "once" | "logger">): Promise<PreviewEmail[]> {
  const env = options.env ?? process.env;
  const watchConfig = parseWatchConfig(options.config, env.NFT_SOURCE);
  const { config, store: where } = settingsOf(watchConfig, env);
  const follow: FollowContext = {
    config,
    source: watchConfig.source,
    reorgDepth: watchConfig.reorgDepth,
    signal: options.signal,
    pacer: pacerFor(watchConfig),
  };
  const store = isPostgresUrl(where) || existsSync(where) ? await openWatchStore(where) : undefined;
  const out: PreviewEmail[] = [];
  try {
    for (const rule of watchConfig.rules) {
      const state = await store?.ruleState(rule.id);
      const floor = state?.floor ?? (await findFloor(rule, follow));
      if (!floor) continue; // an index that has not seen the chain has nothing to show
      const horizon = state
        ? horizonOf(floor, state.read, follow.reorgDepth)
        : { block: Math.max(0, (floor.block ?? 0) - follow.reorgDepth), date: "" };
      const fresh: TransactionRecord[] = [];
      const freshKeys: string[] = [];
      for await (const batch of readBatches(rule, horizon, follow)) {
        const wanted = batch.records.filter((r) => (!state || isAfter(r, floor)) && ruleWants(rule, r, ETH_TOKENS));
        const keys = recordKeys(wanted);
        const known = state ? await store!.knownKeys(rule.id, keys) : new Set<string>();
        wanted.forEach((record, i) => {
          if (known.has(keys[i]!)) return;
          fresh.push(record);
          freshKeys.push(keys[i]!);
        });
      }
      if (!fresh.length) continue;
      if (rule.mode === "each") {
        fresh.forEach((record, i) => {
          const customId = customIdOf(rule.id, [freshKeys[i]!]);
          out.push({ rule: rule.id, records: 1, message: eachMessage(rule, record, customId) });
        });
      } else {
        const customId = customIdOf(rule.id, freshKeys);
        out.push({ rule: rule.id, records: fresh.length, message: digestMessage(rule, fresh, customId) });
      }
    }
  } finally {
    await store?.close();
  }
  return out;
}

/** One email of the watch's journal, as `chainmail watch status` shows it. */
export interface WatchMailStatus {
  custom_id: string;
  rule: string;
  /** pending (a send may be under way, or was cut off: looked up at the next start), retry, unknown, failed, sent. */
  state: Mail["state"];
  subject: string;
  to: string[];
  attempts: number;
  /** Why it is not sent, as the transport said. */
  error?: string;
}

/** The store a watch file names (`store`, else INDEX_DB), open only if it exists: reading creates nothing. */
async function existingStore(options: { config: unknown; env?: Record<string, string | undefined> | undefined }) {
  const env = options.env ?? process.env;
  const watchConfig = parseWatchConfig(options.config, env.NFT_SOURCE);
  const { store: where } = settingsOf(watchConfig, env);
  return isPostgresUrl(where) || existsSync(where) ? openWatchStore(where) : undefined;
}

/**
 * The emails of a watch that did not go out (`all`: every email), oldest first: delivery unknown, failed, waiting
 * to be sent again, or left open. Nothing is changed or sent (`chainmail watch status`).
 */
export async function watchStatus(options: {
  config: unknown;
  env?: Record<string, string | undefined>;
  all?: boolean;
}): Promise<WatchMailStatus[]> {
  const store = await existingStore(options);
  if (!store) return [];
  try {
    const states: Mail["state"][] = [
      "pending",
      "retry",
      "unknown",
      "failed",
      ...(options.all ? ["sent" as const] : []),
    ];
    return (await store.mails(states)).map((mail) => {
      const error = mail.state === "sent" || !mail.result ? "" : errorText(mail.result);
      return {
        custom_id: mail.customId,
        rule: mail.rule,
        state: mail.state,
        subject: mail.message.Subject ?? "",
        to: [...(mail.message.To ?? []), ...(mail.message.Cc ?? []), ...(mail.message.Bcc ?? [])].map((r) => r.Email),
        attempts: mail.attempts,
        ...(error ? { error } : {}),
      };
    });
  } finally {
    await store.close();
  }
}

/**
 * Sends again, at the watch's next poll, emails whose delivery is unknown or that failed: the explicit decision the
 * watch never takes itself (`chainmail watch resend`). Only those states change; `not_resent` says why others did not.
 */
export async function resendWatchMails(options: {
  config: unknown;
  env?: Record<string, string | undefined>;
  customIds: readonly string[];
}): Promise<{ resent: string[]; not_resent: { custom_id: string; reason: string }[] }> {
  const store = await existingStore(options);
  let was: Map<string, Mail["state"] | undefined>;
  try {
    was = (await store?.resend(options.customIds)) ?? new Map();
  } finally {
    await store?.close();
  }
  const why: Record<Mail["state"], string> = {
    sent: "it was sent",
    pending: "it is open: the watch looks it up at its next start",
    retry: "it is already waiting to be sent again",
    unknown: "",
    failed: "",
  };
  const resent = options.customIds.filter((id) => was.get(id) === "unknown" || was.get(id) === "failed");
  const not_resent = options.customIds
    .filter((id) => !resent.includes(id))
    .map((id) => ({ custom_id: id, reason: why[was.get(id) ?? "unknown"] || "no such email in this watch's journal" }));
  return { resent, not_resent };
}
