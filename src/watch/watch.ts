/**
 * `chainmail watch`: NFT activity to email, as a flow of the existing nodes. Each poll, every rule reads its new
 * records through its retriever (follow.ts) and takes them into the journal; records become email intents
 * (each: one per record; digest: one per rule when due), journalled before `email-send` sends them, and settled
 * with the send's results. Never twice: a record is taken once (its key is a primary key), an intent is never sent
 * again once it may have gone out, and an intent left open by a crash is looked up in the transport, not resent.
 * Never skipped: records wait in the journal until their email's fate is known.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Config, loadConfig } from "../core/config.js";
import { MessageErrorCode } from "../core/errors.js";
import type { Logger } from "../core/node.js";
import { isPostgresUrl } from "../db/database.js";
import { type EnrichmentCache, memoryCache } from "../enrichment/cache.js";
import { Enricher, enrichmentSettings } from "../enrichment/enrich.js";
import { guardedGet } from "../enrichment/metadata-fetch.js";
import { openStoreCache } from "../enrichment/store-cache.js";
import type { EmailMessage, MessageResult } from "../schemas/email.js";
import { IndexCommits } from "../sources/own-index/index.js";
import { parseWatchConfig, type WatchConfig } from "./config.js";
import { openWatchStore } from "./db-store.js";
import { DryRunStore } from "./dry-store.js";
import { type FollowContext, Pacer } from "./follow.js";
import { errorText, type RuleRead, type WatchContext, WatchRun, type WatchSummary } from "./run.js";
import type { Mail, MailResult } from "./store.js";

export { customIdOf, type RuleRead, SEND_BATCH, type WatchSummary } from "./run.js";

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

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** How the rules read; the pacer spaces the upstream calls of every rule (NFTPort's and OpenSea's rate limits). */
function followContext(watchConfig: WatchConfig, config: Config, signal: AbortSignal | undefined): FollowContext {
  const pacer =
    watchConfig.source === "index"
      ? undefined
      : new Pacer(
          watchConfig.source === "nftport"
            ? watchConfig.nftportRequestsPerSecond
            : watchConfig.openseaRequestsPerSecond,
        );
  return { config, source: watchConfig.source, reorgDepth: watchConfig.reorgDepth, signal, pacer };
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
    // The lifecycle and suppression list beside the journal, unless the operator keeps them elsewhere: what
    // email-send checks, so the watch never mails a suppressed address.
    CHAINMAIL_MAIL_DB: env.CHAINMAIL_MAIL_DB || store,
  });
  return { config, store };
}

export async function watch(options: WatchOptions): Promise<WatchSummary> {
  const env = options.env ?? process.env;
  const watchConfig = parseWatchConfig(options.config, env.NFT_SOURCE, { indexRpcUrl: env.INDEX_RPC_URL?.trim() });
  const { config, store: where } = settingsOf(watchConfig, env);
  const logger = options.logger ?? silent;
  const store = await openWatchStore(where);
  const context: WatchContext = {
    follow: followContext(watchConfig, config, options.signal),
    send: { config, signal: options.signal, logger },
    logger,
  };
  const run = new WatchRun(watchConfig, store, context);
  let lock: { release(): Promise<void> } | undefined;
  let wake: IndexCommits | undefined;
  let cache: EnrichmentCache | undefined;
  try {
    const details = enrichmentSettings(config, guardedGet);
    if (details) {
      // Token details are kept beside the journal (their own table), so a restart asks nothing twice.
      cache = await openStoreCache(where, details.cacheMs);
      context.details = new Enricher(details, cache, logger);
    }
    lock = await store.lockWriter({
      signal: options.signal,
      onWait: () => logger.warn({ store: store.where }, "another chainmail watch is running on this store; waiting"),
    });
    logger.info({ store: store.where, rules: watchConfig.rules.length, source: watchConfig.source }, "watch started");
    wake = options.once ? undefined : await wakeUpOf(watchConfig, config);
    for (;;) {
      await run.tick();
      if (options.once || options.signal?.aborted) break;
      await (wake?.wait(watchConfig.pollMs, options.signal) ??
        sleep(watchConfig.pollMs, undefined, { signal: options.signal }).catch(() => undefined));
      if (options.signal?.aborted) break;
    }
    run.summary.retrying = (await store.mails(["retry"])).length;
    return run.summary;
  } finally {
    await wake?.close();
    await lock?.release();
    await cache?.close();
    await store.close();
  }
}

/**
 * What ends the wait between polls early: a rule reading the own index polls again as soon as the index commits
 * (commits.ts), not at its next poll; other sources wait the poll interval.
 */
async function wakeUpOf(watchConfig: WatchConfig, config: Config): Promise<IndexCommits | undefined> {
  if (watchConfig.source !== "index" || !config.indexDb) return undefined;
  return IndexCommits.open(config.indexDb);
}

export interface PreviewEmail {
  rule: string;
  records: number;
  message: EmailMessage;
}

/** A rule in a dry run: where its read started (or that it cannot start yet), and what it would mail. */
export interface RulePreview {
  rule: string;
  read: RuleRead | undefined;
  /** Records the emails of this rule carry, and how many emails. */
  records: number;
  emails: number;
}

/**
 * `--dry-run`: the emails the next poll would send, without writing or sending anything: the same run as `watch()`
 * over a store whose writes stay in memory. A rule with saved state shows its new records; a rule that never ran
 * shows what the records of its newest `reorg_depth` blocks would give, as a preview of its template.
 */
export async function previewWatch(options: Omit<WatchOptions, "once" | "logger">): Promise<PreviewEmail[]> {
  return (await dryRunWatch(options)).emails;
}

/** The dry run with what each rule did: what `chainmail watch --dry-run` reports, one line per rule. */
export async function dryRunWatch(
  options: Omit<WatchOptions, "once" | "logger">,
): Promise<{ emails: PreviewEmail[]; rules: RulePreview[] }> {
  const env = options.env ?? process.env;
  const watchConfig = parseWatchConfig(options.config, env.NFT_SOURCE, { indexRpcUrl: env.INDEX_RPC_URL?.trim() });
  const { config, store: where } = settingsOf(watchConfig, env);
  const real = isPostgresUrl(where) || existsSync(where) ? await openWatchStore(where) : undefined;
  const store = new DryRunStore(real, where, watchConfig.reorgDepth);
  const out: PreviewEmail[] = [];
  const deliver = (mails: readonly Mail[]): MailResult[] =>
    mails.map((mail) => {
      out.push({ rule: mail.rule, records: store.recordsOf.get(mail.customId) ?? 1, message: mail.message });
      return { customId: mail.customId, state: "sent", result: { Status: "success" } as MessageResult };
    });
  const details = enrichmentSettings(config, guardedGet);
  const run = new WatchRun(watchConfig, store, {
    follow: followContext(watchConfig, config, options.signal),
    send: { config, signal: options.signal, logger: silent },
    logger: silent,
    dryRun: { deliver },
    // A dry run writes nothing: its token details are kept in memory.
    details: details ? new Enricher(details, memoryCache(details.cacheMs), silent) : undefined,
  });
  try {
    await run.tick();
  } finally {
    await store.close();
  }
  const rules = watchConfig.rules.map((rule) => {
    const mine = out.filter((email) => email.rule === rule.id);
    const records = mine.reduce((sum, email) => sum + email.records, 0);
    return { rule: rule.id, read: run.reads.get(rule.id), records, emails: mine.length };
  });
  return { emails: out, rules };
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
  /** Recipients it was not sent to because they are on the suppression list, and why (`reason since …`). */
  suppressed?: { email: string; reason: string; since: string }[];
}

/** The recipients a result held back as suppressed (email-send's `suppressed` entries). */
function suppressedOf(mail: Mail): WatchMailStatus["suppressed"] {
  const held = (mail.result?.Errors ?? []).filter((e) => e.ErrorCode === MessageErrorCode.SUPPRESSED);
  return held.map((e) => {
    const [, list, index] = /^(To|Cc|Bcc)\[(\d+)\]/.exec(e.ErrorRelatedTo[0] ?? "") ?? [];
    const recipient = list ? mail.message[list as "To" | "Cc" | "Bcc"]?.[Number(index)] : undefined;
    const { Reason, Since } = e as { Reason?: unknown; Since?: unknown };
    return { email: recipient?.Email ?? "", reason: String(Reason ?? ""), since: String(Since ?? "") };
  });
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
      const suppressed = suppressedOf(mail);
      return {
        custom_id: mail.customId,
        rule: mail.rule,
        state: mail.state,
        subject: mail.message.Subject ?? "",
        to: [...(mail.message.To ?? []), ...(mail.message.Cc ?? []), ...(mail.message.Bcc ?? [])].map((r) => r.Email),
        attempts: mail.attempts,
        ...(error ? { error } : {}),
        ...(suppressed?.length ? { suppressed } : {}),
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
