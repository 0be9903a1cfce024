/**
 * The service's own settings, read from the same env record as the rest of the configuration
 * (`config.env`), so a test or the demo sets them without touching `process.env`.
 */
import type { Config } from "../core/config.js";
import { setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import { nftSources } from "../sources/catalog.js";
import { mailTransports } from "../transports/catalog.js";

/** Load shedding of the node routes (admission.ts). */
export interface AdmissionLimits {
  maxInFlight: number;
  maxQueued: number;
  queueTimeoutMs: number;
  /** Past this event-loop delay new node requests are refused at once; 0: never. */
  maxEventLoopDelayMs: number;
}

export interface ServerSettings {
  /** Accepted bearer tokens; empty means the node routes are open. */
  tokens: string[];
  /** The settings holding default upstream credentials the operator configured (then tokens are mandatory). */
  operatorCredentials: string[];
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** Longest a node may run for one request, in milliseconds. */
  requestTimeoutMs: number;
  /** Longest a client may take to send a request's headers (and idle between requests on a kept-alive socket). */
  headersTimeoutMs: number;
  /** Longest a client may take to send a request's body, on top of the headers' time. */
  bodyTimeoutMs: number;
  /** Most connections open at once; more are closed as soon as they open. */
  maxConnections: number;
  /** Load shedding of the node routes (admission.ts). */
  admission: AdmissionLimits;
  /** The shared upstream reads (core/pools/shared-reads.ts): cache time (0: off) and bounds. */
  cache: { ttlMs: number; maxEntries: number; maxBytes: number };
  /** Basic credentials of Mailjet's event callback, when set. */
  events: { user: string; password: string } | undefined;
}

/** Shorter tokens are too easy to guess. */
const MIN_TOKEN_LENGTH = 16;

/** Names of the settings that hold operator credentials the service would spend on a caller's behalf. */
function operatorCredentials(config: Config): string[] {
  return [...nftSources, ...mailTransports].flatMap((definition) => definition.operatorCredentials?.(config) ?? []);
}

/** The bearer tokens, checked: long enough, and sendable in an Authorization header. */
function bearerTokens(given: string[]): string[] {
  const tokens = given.map((t) => t.trim()).filter((t) => t !== "");
  const short = tokens.findIndex((t) => t.length < MIN_TOKEN_LENGTH);
  if (short !== -1) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting CHAINMAIL_TOKENS is invalid: token ${short + 1} is shorter than ${MIN_TOKEN_LENGTH} characters.`,
      { hint: "Use long random tokens, e.g. `openssl rand -hex 32`.", details: { setting: "CHAINMAIL_TOKENS" } },
    );
  }
  // A caller sends the token in a header as `Bearer <token>`: a space or a control character could never match.
  const unsendable = tokens.findIndex((t) => !/^[\x21-\x7E]+$/.test(t));
  if (unsendable !== -1) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting CHAINMAIL_TOKENS is invalid: token ${unsendable + 1} holds a space, a control character or a character beyond ASCII, which no Authorization header can carry.`,
      { hint: "Use long random tokens, e.g. `openssl rand -hex 32`.", details: { setting: "CHAINMAIL_TOKENS" } },
    );
  }
  return tokens;
}

/**
 * Reads CHAINMAIL_TOKENS, CHAINMAIL_BODY_LIMIT_BYTES, CHAINMAIL_REQUEST_TIMEOUT_MS, CHAINMAIL_HEADERS_TIMEOUT_MS,
 * CHAINMAIL_BODY_TIMEOUT_MS, CHAINMAIL_MAX_CONNECTIONS, the load-shedding and the cache settings. Throws a clear error when default credentials are
 * configured without any token: nobody else may spend the operator's keys.
 */
export function loadServerSettings(config: Config, overrides: { tokens?: string[] } = {}): ServerSettings {
  const tokens = bearerTokens(overrides.tokens ?? (setting(config.env, "CHAINMAIL_TOKENS") ?? "").split(","));
  const credentials = operatorCredentials(config);
  if (credentials.length > 0 && tokens.length === 0) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `chainmail serve refuses to start: ${credentials.join(", ")} ${credentials.length === 1 ? "is" : "are"} set, so anyone reaching the service could spend those credentials.`,
      {
        hint: "Set CHAINMAIL_TOKENS to one or more comma-separated bearer tokens (callers then send `Authorization: Bearer <token>`), or unset the default credentials so callers pass their own in params.",
        details: { setting: "CHAINMAIL_TOKENS", credentials },
      },
    );
  }
  return {
    tokens,
    operatorCredentials: credentials,
    events: eventCredentials(config),
    bodyLimitBytes: setting(config.env, "CHAINMAIL_BODY_LIMIT_BYTES"),
    requestTimeoutMs: setting(config.env, "CHAINMAIL_REQUEST_TIMEOUT_MS"),
    headersTimeoutMs: setting(config.env, "CHAINMAIL_HEADERS_TIMEOUT_MS"),
    bodyTimeoutMs: setting(config.env, "CHAINMAIL_BODY_TIMEOUT_MS"),
    maxConnections: setting(config.env, "CHAINMAIL_MAX_CONNECTIONS"),
    admission: {
      maxInFlight: setting(config.env, "CHAINMAIL_MAX_IN_FLIGHT"),
      maxQueued: setting(config.env, "CHAINMAIL_MAX_QUEUED"),
      queueTimeoutMs: setting(config.env, "CHAINMAIL_QUEUE_TIMEOUT_MS"),
      maxEventLoopDelayMs: setting(config.env, "CHAINMAIL_MAX_EVENT_LOOP_DELAY_MS"),
    },
    cache: {
      ttlMs: setting(config.env, "CHAINMAIL_CACHE_TTL_MS"),
      maxEntries: setting(config.env, "CHAINMAIL_CACHE_MAX_ENTRIES"),
      maxBytes: setting(config.env, "CHAINMAIL_CACHE_MAX_BYTES"),
    },
  };
}

/** CHAINMAIL_EVENTS_USER and CHAINMAIL_EVENTS_PASSWORD: both or neither. */
function eventCredentials(config: Config): ServerSettings["events"] {
  const user = setting(config.env, "CHAINMAIL_EVENTS_USER");
  const password = setting(config.env, "CHAINMAIL_EVENTS_PASSWORD");
  if (user === undefined && password === undefined) return undefined;
  if (user === undefined || password === undefined || user.includes(":")) {
    const colon = user?.includes(":") === true;
    const missing = user === undefined ? "CHAINMAIL_EVENTS_USER" : "CHAINMAIL_EVENTS_PASSWORD";
    const named = colon ? "CHAINMAIL_EVENTS_USER" : missing;
    const problem = colon
      ? "CHAINMAIL_EVENTS_USER holds a colon, which Basic credentials cannot carry"
      : `${missing} is not set; set both or neither`;
    throw new ChainmailError("INVALID_INPUT", `Setting ${named} is invalid: ${problem}.`, {
      details: { setting: named },
    });
  }
  return { user, password };
}
