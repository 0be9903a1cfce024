/**
 * Configuration from the environment. `loadConfig` takes any env-like record, so a library user or a test builds a
 * config without touching `process.env`. Every variable, its rule and its default are in core/env.ts's schema.
 */
import { type EMAIL_TRANSPORTS, type INDEX_RPC_PROVIDERS, type NFT_SOURCES, setting } from "./env.js";
import { poolsFor, type UpstreamPools } from "./pools/choose.js";
import type { UpstreamPool } from "./upstream-pool.js";

export interface RetryPolicy {
  /** Retries after the first attempt (0 = never retry). */
  maxRetries: number;
  /** First backoff step; doubles each retry, with full jitter. */
  baseDelayMs: number;
  /** No single wait is longer than this, Retry-After included. */
  maxDelayMs: number;
  /** Total time budget across all attempts and waits; no retry starts past it. */
  budgetMs: number;
}

export interface UpstreamConfig {
  baseUrl: string;
  timeoutMs: number;
  retry: RetryPolicy;
}

export interface Config {
  nftport: UpstreamConfig & {
    apiKey: string | undefined;
    /** The pool of NFTPort calls when it is not `pool` (loadConfig: undici's Agent when no proxy is set). */
    pool?: UpstreamPool | undefined;
  };
  opensea: UpstreamConfig & {
    apiKey: string | undefined;
    /** The pool of OpenSea calls when it is not `pool` (the same paging pool as NFTPort's). */
    pool?: UpstreamPool | undefined;
    /** Chainlink-style ETH/USD feed asked (through INDEX_RPC_URL's node) for the `price_usd` of OpenSea's sales. */
    ethUsdFeed: string;
  };
  mailjet: UpstreamConfig & {
    userId: string | undefined;
    password: string | undefined;
    /** Calls in flight at once when a batch is split. */
    concurrency: number;
  };
  /** Where the three retrievers read from. */
  nftSource: NftSourceName;
  /** Another chainmail's HTTP service as the source (NFT_SOURCE=service). */
  service: UpstreamConfig & {
    /** Its bearer token (one of that service's CHAINMAIL_TOKENS), when it asks for one. */
    token: string | undefined;
  };
  /** The own index (NFT_SOURCE=index): an SQLite file path or a `postgres://` URL. */
  indexDb: string;
  /** The Ethereum JSON-RPC node `chainmail index` follows (INDEX_RPC_URL; `--rpc` overrides). */
  indexRpc: {
    url: string | undefined;
    /** The node's WebSocket for `newHeads` (INDEX_RPC_WS_URL); undefined: the endpoint's address, ws:// or wss://. */
    wsUrl: string | undefined;
    timeoutMs: number;
    retry: RetryPolicy;
    /** How long `chainmail index --once` waits out a provider's throttling before it stops (a follower waits on). */
    throttleBudgetMs: number;
    /** How long a block's logs may stay incomplete at the provider (a lagging backend) before the index stops. */
    lagBudgetMs: number;
    /** Whose costs and limits the calls are planned by; undefined: recognised by the endpoint's host. */
    provider: (typeof INDEX_RPC_PROVIDERS)[number] | undefined;
    /** The plan's throughput, when the user states it: units (CU, credits) per second, requests per second. */
    unitsPerSecond: number | undefined;
    requestsPerSecond: number | undefined;
  };
  /** Where `email-send` delivers. */
  emailTransport: (typeof EMAIL_TRANSPORTS)[number];
  smtpUrl: string | undefined;
  /** JSON-lines file where the smtp transport notes each message with a CustomID as it goes (SMTP_JOURNAL). */
  smtpJournal: string | undefined;
  outboxDir: string;
  /** The HTTP engine of every upstream call: connection pool and proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY). */
  pool: UpstreamPool;
  /** The env record this config was read from, for settings owned by one source or transport. */
  env: Readonly<Record<string, string | undefined>>;
}

type Env = Readonly<Record<string, string | undefined>>;

export { NFT_SOURCES } from "./env.js";
export type NftSourceName = (typeof NFT_SOURCES)[number];

const trimSlashes = (url: string) => url.replace(/\/+$/, "");

type Upstream = "NFTPORT" | "OPENSEA" | "MAILJET" | "INDEX_RPC" | "CHAINMAIL_SERVICE";

function upstream(env: Env, prefix: Upstream, baseUrl: string): UpstreamConfig {
  // The shared values are checked even where an upstream's own stands in for them.
  const timeoutMs = setting(env, "CHAINMAIL_TIMEOUT_MS");
  const maxRetries = setting(env, "CHAINMAIL_MAX_RETRIES");
  return {
    baseUrl: trimSlashes(baseUrl),
    timeoutMs: setting(env, `${prefix}_TIMEOUT_MS`) ?? timeoutMs,
    retry: {
      maxRetries: setting(env, `${prefix}_MAX_RETRIES`) ?? maxRetries,
      baseDelayMs: setting(env, "CHAINMAIL_RETRY_BASE_MS"),
      maxDelayMs: setting(env, "CHAINMAIL_RETRY_MAX_DELAY_MS"),
      budgetMs: setting(env, "CHAINMAIL_RETRY_BUDGET_MS"),
    },
  };
}

/** The configuration of an env-like record, with this process's HTTP engines (pools/choose.ts). */
export function loadConfig(env: Env = process.env): Config {
  return configFrom(env, poolsFor(env));
}

/**
 * The configuration of an env-like record, its upstream calls going through `pools`: what a workflow host calls
 * with its own request helper (and a record of the settings its user gave), never reading `process`.
 */
export function configFrom(env: Env, pools: UpstreamPools): Config {
  const indexRpc = upstream(env, "INDEX_RPC", "");

  return {
    nftport: {
      ...upstream(env, "NFTPORT", setting(env, "NFTPORT_BASE_URL")),
      apiKey: setting(env, "NFTPORT_API_KEY"),
      pool: pools.paging,
    },
    opensea: {
      ...upstream(env, "OPENSEA", setting(env, "OPENSEA_BASE_URL")),
      apiKey: setting(env, "OPENSEA_API_KEY"),
      pool: pools.paging,
      ethUsdFeed: setting(env, "ETH_USD_FEED").toLowerCase(),
    },
    mailjet: {
      ...upstream(env, "MAILJET", setting(env, "MAILJET_BASE_URL")),
      userId: setting(env, "MAILJET_API_KEY"),
      password: setting(env, "MAILJET_SECRET_KEY"),
      concurrency: setting(env, "MAILJET_CONCURRENCY"),
    },
    nftSource: setting(env, "NFT_SOURCE"),
    service: {
      ...upstream(env, "CHAINMAIL_SERVICE", ""),
      baseUrl: trimSlashes(setting(env, "CHAINMAIL_SERVICE_URL") ?? ""),
      token: setting(env, "CHAINMAIL_SERVICE_TOKEN"),
    },
    indexDb: setting(env, "INDEX_DB") ?? setting(env, "INDEX_DATABASE_URL"),
    indexRpc: {
      url: setting(env, "INDEX_RPC_URL"),
      wsUrl: setting(env, "INDEX_RPC_WS_URL"),
      timeoutMs: indexRpc.timeoutMs,
      retry: indexRpc.retry,
      throttleBudgetMs: setting(env, "INDEX_RPC_THROTTLE_BUDGET_MS"),
      lagBudgetMs: setting(env, "INDEX_RPC_LAG_BUDGET_MS"),
      provider: setting(env, "INDEX_RPC_PROVIDER"),
      unitsPerSecond: setting(env, "INDEX_RPC_CU_PER_SECOND"),
      requestsPerSecond: setting(env, "INDEX_RPC_REQUESTS_PER_SECOND"),
    },
    emailTransport: setting(env, "EMAIL_TRANSPORT"),
    smtpUrl: setting(env, "SMTP_URL"),
    smtpJournal: setting(env, "SMTP_JOURNAL"),
    outboxDir: setting(env, "OUTBOX_DIR"),
    pool: pools.pool,
    env,
  };
}

let processConfig: Config | undefined;

/** The config of this process's environment, read once. */
export function defaultConfig(): Config {
  processConfig ??= loadConfig(process.env);
  return processConfig;
}
