/**
 * Configuration from the environment. `loadConfig` takes any env-like record, so a library user or a test builds a
 * config without touching `process.env`.
 */
import { ChainmailError } from "./errors.js";
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
    timeoutMs: number;
    retry: RetryPolicy;
    /** How long `chainmail index --once` waits out a provider's throttling before it stops (a follower waits on). */
    throttleBudgetMs: number;
    /** How long a block's logs may stay incomplete at the provider (a lagging backend) before the index stops. */
    lagBudgetMs: number;
  };
  /** Where `email-send` delivers. */
  emailTransport: "mailjet" | "smtp" | "outbox";
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

/**
 * The values of NFT_SOURCE: NFTPort, the own index, OpenSea, the own index with OpenSea's order book, or another
 * chainmail's HTTP service (sources/catalog.ts says what a workflow host asks for each).
 */
export const NFT_SOURCES = ["nftport", "index", "opensea", "index+opensea", "service"] as const;
export type NftSourceName = (typeof NFT_SOURCES)[number];

/** Chainlink's ETH / USD price feed on Ethereum mainnet (its proxy). */
const CHAINLINK_ETH_USD = "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419";

/** An integer setting of at least `min`, or `fallback` when unset; anything else is a clear error naming it. */
export function intSetting(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting ${name}=${JSON.stringify(raw)} is invalid: must be an integer >= ${min}.`,
      {
        details: { setting: name },
      },
    );
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting ${name}=${JSON.stringify(raw)} is invalid: must be one of ${values.join(", ")}.`,
      {
        details: { setting: name },
      },
    );
  }
  return raw as T;
}

/** An Ethereum address setting (lower case), or `fallback` when unset. */
function address(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^0x[0-9a-fA-F]{40}$/.test(raw)) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting ${name}=${JSON.stringify(raw)} is invalid: must be an address (0x followed by 40 hex digits).`,
      { details: { setting: name } },
    );
  }
  return raw.toLowerCase();
}

function upstream(env: Env, prefix: string, baseUrl: string): UpstreamConfig {
  const timeoutMs = intSetting(env, `${prefix}_TIMEOUT_MS`, intSetting(env, "CHAINMAIL_TIMEOUT_MS", 30_000, 1), 1);
  return {
    baseUrl: (env[`${prefix}_BASE_URL`] || baseUrl).replace(/\/+$/, ""),
    timeoutMs,
    retry: {
      maxRetries: intSetting(env, `${prefix}_MAX_RETRIES`, intSetting(env, "CHAINMAIL_MAX_RETRIES", 4)),
      baseDelayMs: intSetting(env, "CHAINMAIL_RETRY_BASE_MS", 500),
      maxDelayMs: intSetting(env, "CHAINMAIL_RETRY_MAX_DELAY_MS", 20_000),
      budgetMs: intSetting(env, "CHAINMAIL_RETRY_BUDGET_MS", 120_000),
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
      ...upstream(env, "NFTPORT", "https://api.nftport.xyz"),
      apiKey: env.NFTPORT_API_KEY || undefined,
      pool: pools.paging,
    },
    opensea: {
      ...upstream(env, "OPENSEA", "https://api.opensea.io"),
      apiKey: env.OPENSEA_API_KEY || undefined,
      pool: pools.paging,
      ethUsdFeed: address(env, "ETH_USD_FEED", CHAINLINK_ETH_USD),
    },
    mailjet: {
      ...upstream(env, "MAILJET", "https://api.mailjet.com"),
      userId: env.MAILJET_API_KEY || undefined,
      password: env.MAILJET_SECRET_KEY || undefined,
      concurrency: intSetting(env, "MAILJET_CONCURRENCY", 4, 1),
    },
    nftSource: oneOf(env, "NFT_SOURCE", NFT_SOURCES, "nftport"),
    service: {
      ...upstream(env, "CHAINMAIL_SERVICE", ""),
      baseUrl: (env.CHAINMAIL_SERVICE_URL ?? "").replace(/\/+$/, ""),
      token: env.CHAINMAIL_SERVICE_TOKEN || undefined,
    },
    indexDb: env.INDEX_DB || env.INDEX_DATABASE_URL || "./data/index.sqlite",
    indexRpc: {
      url: env.INDEX_RPC_URL || undefined,
      timeoutMs: indexRpc.timeoutMs,
      retry: indexRpc.retry,
      throttleBudgetMs: intSetting(env, "INDEX_RPC_THROTTLE_BUDGET_MS", 600_000),
      lagBudgetMs: intSetting(env, "INDEX_RPC_LAG_BUDGET_MS", 180_000),
    },
    emailTransport: oneOf(env, "EMAIL_TRANSPORT", ["mailjet", "smtp", "outbox"] as const, "mailjet"),
    smtpUrl: env.SMTP_URL || undefined,
    smtpJournal: env.SMTP_JOURNAL || undefined,
    outboxDir: env.OUTBOX_DIR || "./data/outbox",
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
