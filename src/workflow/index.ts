/**
 * What the workflow packages (Node-RED, n8n) take from chainmail, and nothing more: the four nodes, running them
 * with a config a host builds from its own settings and HTTP engine, paging, the activity poll, a chainmail
 * service's delivery events and suppression list (mail/service.ts), and the catalog of
 * what a user may choose. Each package bundles this module; it reads no `process`, starts no timer and loads no
 * HTTP library of its own (the host's pool does the HTTP), so that n8n's scanner accepts the bundle.
 */

import type { TSchema } from "@sinclair/typebox";
import { type Config, configFrom, NFT_SOURCES } from "../core/config.js";
import { setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import type { AnyNode } from "../core/node.js";
import type { UpstreamPool } from "../core/upstream-pool.js";
import { type EnrichmentCache, memoryCache } from "../enrichment/cache.js";
import { Enricher, enrichmentSettings, type TokenDetails } from "../enrichment/enrich.js";
import type { MetadataFetch } from "../enrichment/metadata.js";
import { poolFetch } from "../enrichment/pool-fetch.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { nftSources } from "../sources/catalog.js";

export { parseRecordFilter, type RecordFilter, WALLET_SIDES } from "../activity/filter.js";
export {
  type ActivityCursor,
  type ActivityTarget,
  POLL_INTERVAL_SECONDS,
  pollActivity,
  pollInterval,
  targetKey,
} from "../activity/poll.js";
export type { Config } from "../core/config.js";
export { ChainmailError, type ErrorPayload, toErrorPayload } from "../core/errors.js";
export { scrub } from "../core/http.js";
export { parseJson, withExactStrings } from "../core/json.js";
export { type AnyNode, type RunContext, runNodeWith } from "../core/node.js";
export { PageError, pagesWith } from "../core/paginate.js";
export {
  type Answer,
  AnswerTooLarge,
  AttemptTimeout,
  CutOffAnswer,
  type Exchange,
  type UpstreamPool,
} from "../core/upstream-pool.js";
export { MAX_EVENTS_PER_POLL, type MailEventCursor, pollMailEvents, serviceSuppressions } from "../mail/service.js";
export type { FeedEvent } from "../mail/store.js";
export {
  emailSend,
  nftTransactionsByContract,
  nftTransactionsByToken,
  nftTransactionsOnChain,
} from "../nodes/index.js";
export { MailjetEventKinds } from "../schemas/mail.js";
export {
  nftSources,
  portableNftSources,
  type Setting,
  type SourceEntry,
  settingsEnv,
  workflowSources,
} from "../sources/catalog.js";
export { mailTransports, portableMailTransports, type TransportEntry } from "../transports/catalog.js";
export type { EnrichmentCache, MetadataFetch, TokenDetails };

/** Settings a host may pass through from its environment or its user: the catalog's, and the tuning ones. */
export const TUNING_SETTINGS = [
  "CHAINMAIL_TIMEOUT_MS",
  "CHAINMAIL_MAX_RETRIES",
  "CHAINMAIL_RETRY_BASE_MS",
  "CHAINMAIL_RETRY_MAX_DELAY_MS",
  "CHAINMAIL_RETRY_BUDGET_MS",
  "NFTPORT_TIMEOUT_MS",
  "OPENSEA_TIMEOUT_MS",
  "MAILJET_TIMEOUT_MS",
  "MAILJET_CONCURRENCY",
] as const;

/** Settings of token details a host may pass through from its environment (src/enrichment). */
export const DETAIL_SETTINGS = [
  "CHAINMAIL_ENRICH",
  "CHAINMAIL_ENRICH_BUDGET_MS",
  "CHAINMAIL_METADATA_TIMEOUT_MS",
  "CHAINMAIL_METADATA_MAX_BYTES",
  "CHAINMAIL_ENRICH_CACHE_MS",
  "CHAINMAIL_IPFS_GATEWAY",
  "CHAINMAIL_FETCH_PRIVATE",
  "ETH_USD_FEED",
] as const;

/** Where an activity node keeps token details between its polls: memory, for CHAINMAIL_ENRICH_CACHE_MS. */
export function detailsCache(config: Config): EnrichmentCache {
  return memoryCache(setting(config.env, "CHAINMAIL_ENRICH_CACHE_MS"));
}

/**
 * The token details of an activity poll's records, in order, for a host to emit beside each record (never in it),
 * within CHAINMAIL_ENRICH_BUDGET_MS; undefined when they are off (no INDEX_RPC_URL, or CHAINMAIL_ENRICH=false).
 * Metadata is fetched through the config's pool (the host's engine and its guards) unless `fetch` says otherwise.
 */
export function activityDetails(
  config: Config,
  cache: EnrichmentCache,
  fetch: MetadataFetch = poolFetch(config.pool),
): ((records: readonly TransactionRecord[]) => Promise<TokenDetails[]>) | undefined {
  const settings = enrichmentSettings(config, fetch);
  if (!settings) return undefined;
  const enricher = new Enricher(settings, cache);
  return (records) => (records.length ? enricher.detailsOf(records) : Promise.resolve([]));
}

/**
 * A host's config: the settings it gathered (NFT_SOURCE among them) and its HTTP engine; always Mailjet for mail. A
 * source that needs the own index (index, index+opensea) cannot run in a workflow package: it is refused with the
 * way that works (a `chainmail serve` with that source, reached as the `service` source), never swapped silently.
 */
export function hostConfig(env: Readonly<Record<string, string | undefined>>, pool: UpstreamPool): Config {
  const source = env.NFT_SOURCE;
  const known = (NFT_SOURCES as readonly string[]).includes(source ?? "");
  if (source && known && !nftSources.some((s) => s.id === source && s.portable)) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `NFT_SOURCE=${source} needs chainmail's own index, which a workflow package does not carry: run \`NFT_SOURCE=${source} chainmail serve\` and choose the chainmail service as the source (its URL and token).`,
      { details: { setting: "NFT_SOURCE" } },
    );
  }
  return configFrom({ ...env, EMAIL_TRANSPORT: "mailjet" }, { pool });
}

/** The values a retriever's `query.type` filter accepts, read from its schema (what a host lists as options). */
export function typeFilterValues(node: AnyNode): string[] {
  const filter = (node.inputs as Record<string, TSchema>).query?.properties?.type;
  const items = (filter?.items?.anyOf ?? []) as TSchema[];
  return items.map((literal) => String(literal.const));
}
