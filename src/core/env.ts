/**
 * Every environment variable chainmail reads, in one TypeBox schema: the source of validation (`setting`), of the
 * error messages (each names the variable and the rule it broke) and of docs/configuration.md's table
 * (`configurationTable`, checked by a test). A new variable is one line here, then `setting(env, "NAME")` where it
 * is used.
 *
 * Each entry is the type of the *value* (an integer within bounds, one of a list, a string matching a pattern, a URL,
 * a host); the raw text of the variable is converted to it first. An empty variable counts as unset. `default` is
 * the value an unset variable reads as (none: `undefined`, usually because another variable stands in, named by
 * `x-default`). `checkSettings` checks them all at once: what every command runs before anything else.
 */
import {
  type Static,
  type TInteger,
  type TLiteral,
  type TSchema,
  type TString,
  type TUnion,
  Type,
} from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ChainmailError } from "./errors.js";

/** The values of NFT_SOURCE (sources/catalog.ts says what a workflow host asks for each). */
export const NFT_SOURCES = ["nftport", "index", "opensea", "index+opensea", "service"] as const;
export const EMAIL_TRANSPORTS = ["mailjet", "smtp", "outbox"] as const;
export const SQLITE_DRIVERS = ["node", "better-sqlite3"] as const;
/** The hosted providers whose published costs and limits the index knows (chain/providers.ts). */
export const INDEX_RPC_PROVIDERS = ["alchemy", "infura", "quicknode", "generic"] as const;

interface Doc {
  /** The section of the table the variable is listed under. */
  group: "NFT retrievers" | "Email" | "Token details" | "Upstream calls" | "HTTP service" | "Demo";
  description: string;
  /** The default as the table shows it, where `default` alone does not say it (or there is none). */
  shown?: string;
}

const doc = ({ group, description, shown }: Doc) => ({
  description,
  "x-group": group,
  ...(shown === undefined ? {} : { "x-default": shown }),
});

/**
 * The longest duration a setting may hold: Node's timers take at most 2^31-1 ms (about 24.8 days) and turn a longer
 * one into 1 ms, which would time every call out at once.
 */
export const MAX_DURATION_MS = 2 ** 31 - 1;

// The default's type rides on the schema's type (a property only the type checker sees: TypeBox types `default` as
// any), so `setting` knows which variables can read as undefined.
type Phantom<D> = { "~default": D };
/** An integer from `min` to `max`: every number has a maximum, so none reaches Node's range errors. */
const int = <D extends number | undefined = undefined>(min: number, max: number, d: Doc & { default?: D }) =>
  Type.Integer({ minimum: min, maximum: max, default: d.default, ...doc(d) }) as TInteger & Phantom<D>;
/** Milliseconds, at most MAX_DURATION_MS (or a smaller `max`). */
const duration = <D extends number | undefined = undefined>(min: number, d: Doc & { default?: D; max?: number }) =>
  int(min, d.max ?? MAX_DURATION_MS, d);
const text = <D extends string | undefined = undefined>(d: Doc & { default?: D }) =>
  Type.String({ default: d.default, ...doc(d) }) as TString & Phantom<D>;

/** What an upstream's URL must be (a setting's or a flag's, e.g. `--rpc`): see `urlProblem`. */
export const HTTP_URL_RULE = "an absolute http:// or https:// URL, e.g. http://localhost:8545";
/** What an address to listen on must be (`CHAINMAIL_HOST`, `--host`): see `isHost`. */
export const HOST_RULE = "a host name or an IP address, e.g. 127.0.0.1, ::1 or localhost";

const HTTP = ["http:", "https:"];
/**
 * The URL forms a setting may take: its schemes, what it may hold after its origin, and its rule in words. An
 * endpoint (INDEX_RPC_URL) may hold anything; a base URL that paths are appended to a path but no ?query or
 * #fragment (they would end up in the middle); a proxy only its origin (undici refuses anything more).
 */
const URL_FORMS = {
  "http-url": { schemes: HTTP, after: "anything", rule: HTTP_URL_RULE },
  "base-url": {
    schemes: HTTP,
    after: "a path",
    rule: "an absolute http:// or https:// URL, e.g. http://localhost:8545, without ?query or #fragment",
  },
  "proxy-url": {
    schemes: HTTP,
    after: "nothing",
    rule: "an absolute http:// or https:// URL, e.g. http://localhost:3128, without a path, ?query or #fragment",
  },
  "ws-url": {
    schemes: ["ws:", "wss:"],
    after: "anything",
    rule: "an absolute ws:// or wss:// URL, e.g. wss://mainnet.infura.io/ws/v3/<key>",
  },
  "smtp-url": {
    schemes: ["smtp:", "smtps:"],
    after: "anything",
    rule: "an smtp:// or smtps:// URL, e.g. smtps://user:password@smtp.example.com:465",
  },
} as const;
type UrlForm = keyof typeof URL_FORMS;
/** The forms a string setting may be checked for beyond its schema (`formatProblem` holds the checks). */
type Format = UrlForm | "host";
const ruleOfFormat = (format: Format): string => (format === "host" ? HOST_RULE : URL_FORMS[format].rule);
/**
 * A string of one `Format`. A URL may hold a key (a provider's RPC URL) or a password (a proxy's, SMTP's): its value
 * is never shown in a refusal (`x-secret`).
 */
const formatted = <D extends string | undefined = undefined>(format: Format, d: Doc & { default?: D }) =>
  Type.String({
    default: d.default,
    "x-format": format,
    "x-rule": ruleOfFormat(format),
    ...(format === "host" ? {} : { "x-secret": true }),
    ...doc(d),
  }) as TString & Phantom<D>;
const baseUrl = <D extends string | undefined = undefined>(d: Doc & { default?: D }) => formatted("base-url", d);
const oneOf = <const T extends string>(values: readonly T[], d: Doc & { default: NoInfer<T> }) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: d.default, ...doc(d) },
  ) as TUnion<TLiteral<T>[]> & Phantom<T>;
/** One of `values`, or unset (no default: the reader decides). */
const oneOfOrUnset = <const T extends string>(values: readonly T[], d: Doc) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    doc(d),
  ) as TUnion<TLiteral<T>[]> & Phantom<undefined>;

const retrievers = "NFT retrievers";
const email = "Email";
const calls = "Upstream calls";
const service = "HTTP service";
/** Retries are also bounded by CHAINMAIL_RETRY_BUDGET_MS; more than this many is a mistake. */
const MAX_RETRIES = 100;
/** Per second, for the index's throttle: far above any provider's plan. */
const MAX_PER_SECOND = 1_000_000;
/** Mailjet calls in flight: the upstream pool holds 64 connections. */
const MAX_MAILJET_CONCURRENCY = 64;
/** A body is read as one string, and V8's strings hold at most 2^29-24 characters: 256 MiB stays well below. */
const MAX_BODY_LIMIT_BYTES = 256 * 1024 * 1024;
/** Soft bounces before suppression: past this, the message's kept events (100) could no longer count them. */
const MAX_SOFT_BOUNCES = 100;
/** Far above what one process's file descriptors allow. */
const MAX_CONNECTIONS = 1_000_000;
/** A client sends its headers in milliseconds; an hour is more than any keep-alive idle time needs. */
const MAX_HEADERS_TIMEOUT_MS = 3_600_000;
/** Requests in flight or in line, and cache entries: far beyond one process's memory for them. */
const MAX_IN_FLIGHT = 1_000_000;
/** More service processes than any machine has cores for. */
const MAX_WORKERS = 1_024;
/** A cache is for repeats within a short while; a day is already far beyond any page's freshness. */
const MAX_CACHE_TTL_MS = 86_400_000;
const details = "Token details";
/** Token details wait at most this long: a mail must not be held for minutes by a slow metadata host. */
const MAX_ENRICH_MS = 600_000;
/** A metadata document is a small JSON object; on-chain SVGs in `data:` URIs reach a few MiB at most. */
const MAX_METADATA_BYTES = 16 * 1024 * 1024;
/** An upstream's own timeout and retries, standing in for CHAINMAIL_TIMEOUT_MS and CHAINMAIL_MAX_RETRIES. */
const perUpstream = <U extends string>(upstream: U, what: string) => {
  const timeout = duration(1, { group: calls, description: `timeout of ${what}`, shown: "`CHAINMAIL_TIMEOUT_MS`" });
  const retries = int(0, MAX_RETRIES, {
    group: calls,
    description: `retries of ${what}`,
    shown: "`CHAINMAIL_MAX_RETRIES`",
  });
  return { [`${upstream}_TIMEOUT_MS`]: timeout, [`${upstream}_MAX_RETRIES`]: retries } as Record<
    `${U}_TIMEOUT_MS`,
    typeof timeout
  > &
    Record<`${U}_MAX_RETRIES`, typeof retries>;
};

export const EnvSchema = Type.Object({
  NFT_SOURCE: oneOf(NFT_SOURCES, {
    group: retrievers,
    description: "where the three retrievers read from",
    default: "nftport",
  }),
  NFTPORT_BASE_URL: baseUrl({
    group: retrievers,
    description: "origin of the NFTPort-compatible upstream",
    default: "https://api.nftport.xyz",
  }),
  NFTPORT_API_KEY: text({
    group: retrievers,
    description: "operator's NFTPort key, used when a caller gives no `params.api_key`",
  }),
  OPENSEA_BASE_URL: baseUrl({
    group: retrievers,
    description: "origin of the OpenSea-compatible upstream",
    default: "https://api.opensea.io",
  }),
  OPENSEA_API_KEY: text({
    group: retrievers,
    description: "operator's OpenSea key, used when a caller gives no `params.api_key`",
  }),
  ETH_USD_FEED: Type.String({
    pattern: "^0x[0-9a-fA-F]{40}$",
    "x-rule": "an address (0x followed by 40 hex digits)",
    default: "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419",
    ...doc({
      group: retrievers,
      description: "ETH/USD feed asked through `INDEX_RPC_URL` for the `price_usd` of OpenSea sales and watch mails",
      shown: "Chainlink's mainnet ETH/USD",
    }),
  }) as TString & Phantom<string>,
  INDEX_DB: text({
    group: retrievers,
    description: "the own index: an SQLite file or a `postgres://` URL",
    shown: "`INDEX_DATABASE_URL`, else `./data/index.sqlite`",
  }),
  INDEX_DATABASE_URL: text({
    group: retrievers,
    description: "the own index, when `INDEX_DB` is not set",
    default: "./data/index.sqlite",
  }),
  CHAINMAIL_SQLITE_DRIVER: oneOfOrUnset(SQLITE_DRIVERS, {
    group: retrievers,
    description: "the library that opens SQLite files",
    shown: "`node` on Node 22.13+, else `better-sqlite3`",
  }),
  INDEX_RPC_URL: formatted("http-url", {
    group: retrievers,
    description: "JSON-RPC endpoint `chainmail index` follows (`--rpc` overrides); OpenSea's blocks",
  }),
  INDEX_RPC_WS_URL: formatted("ws-url", {
    group: retrievers,
    description: "the same node's WebSocket, where `chainmail index` subscribes to new heads (`newHeads`)",
    shown: "`INDEX_RPC_URL` with ws:// (wss://)",
  }),
  INDEX_RPC_THROTTLE_BUDGET_MS: duration(0, {
    group: retrievers,
    description: "how long `chainmail index --once` waits out throttling; following the head waits on",
    default: 600_000,
  }),
  INDEX_RPC_PROVIDER: oneOfOrUnset(INDEX_RPC_PROVIDERS, {
    group: retrievers,
    description: "whose published costs and limits `chainmail index` plans its calls by",
    shown: "recognised by the endpoint's host, else `generic`",
  }),
  INDEX_RPC_CU_PER_SECOND: int(1, MAX_PER_SECOND, {
    group: retrievers,
    description: "your plan's compute units (or credits) per second: the index paces its calls to it, never above",
    shown: "0.9× the provider's smallest plan (Alchemy: 330), raised or lowered by its throttling",
  }),
  INDEX_RPC_REQUESTS_PER_SECOND: int(1, MAX_PER_SECOND, {
    group: retrievers,
    description: "your plan's requests per second: the index paces its calls to it (counted as requests), never above",
    shown: "learnt from the provider's throttling",
  }),
  INDEX_RPC_LAG_BUDGET_MS: duration(0, {
    group: retrievers,
    description: "how long a block's logs may stay incomplete at the provider before the index stops",
    default: 180_000,
  }),
  CHAINMAIL_SERVICE_URL: baseUrl({
    group: retrievers,
    description: "with `NFT_SOURCE=service`: where another `chainmail serve` listens",
  }),
  CHAINMAIL_SERVICE_TOKEN: text({
    group: retrievers,
    description: "a bearer token of that service (one of its `CHAINMAIL_TOKENS`)",
  }),
  EMAIL_TRANSPORT: oneOf(EMAIL_TRANSPORTS, {
    group: email,
    description: "where `email-send` delivers",
    default: "mailjet",
  }),
  MAILJET_BASE_URL: baseUrl({
    group: email,
    description: "origin of the Mailjet-compatible upstream",
    default: "https://api.mailjet.com",
  }),
  MAILJET_API_KEY: text({
    group: email,
    description: "operator's Mailjet API key, used when the input has no `params`",
  }),
  MAILJET_SECRET_KEY: text({
    group: email,
    description: "operator's Mailjet secret key, used when the input has no `params`",
  }),
  MAILJET_CONCURRENCY: int(1, MAX_MAILJET_CONCURRENCY, {
    group: email,
    description: "Mailjet calls in flight when a batch is split",
    default: 4,
  }),
  SMTP_URL: formatted("smtp-url", {
    group: email,
    description: "`smtps://user:pass@host:465` or `smtp://user:pass@host:587`",
  }),
  SMTP_TIMEOUT_MS: duration(1, {
    group: email,
    description: "SMTP connection and command timeout",
    shown: "`CHAINMAIL_TIMEOUT_MS`",
  }),
  SMTP_JOURNAL: text({
    group: email,
    description: 'JSON-lines file where smtp notes each message with a CustomID (see "Watch")',
    shown: "none (the watch sets one)",
  }),
  OUTBOX_DIR: text({
    group: email,
    description: "where the outbox transport stores `.eml` files and `index.jsonl`",
    default: "./data/outbox",
  }),
  CHAINMAIL_MAIL_DB: text({
    group: email,
    description:
      "the mail lifecycle (each message's state, Mailjet's delivery events, the suppression list): an SQLite file or a `postgres://` URL",
    shown: "none: nothing kept, nobody suppressed (a watch keeps them in its store)",
  }),
  CHAINMAIL_SOFT_BOUNCE_LIMIT: int(1, MAX_SOFT_BOUNCES, {
    group: email,
    description: "soft bounces of one recipient (from one sender) that put it on the suppression list",
    default: 3,
  }),
  CHAINMAIL_PUBLIC_URL: baseUrl({
    group: email,
    description: "where recipients reach `chainmail serve`: the origin of one-click unsubscribe links (https)",
    shown: "none: no unsubscribe link",
  }),
  CHAINMAIL_UNSUBSCRIBE_SECRET: Type.String({
    pattern: "^[\\x21-\\x7E]{32,4096}$",
    "x-secret": true,
    "x-rule": "32 to 4096 printable ASCII characters without spaces, e.g. the output of `openssl rand -hex 32`",
    ...doc({
      group: email,
      description: "the key unsubscribe links are signed with (HMAC-SHA256); with `CHAINMAIL_PUBLIC_URL`",
      shown: "none",
    }),
  }) as TString & Phantom<undefined>,
  CHAINMAIL_ENRICH: oneOf(["true", "false"], {
    group: details,
    description:
      "`false`: no token name, image, ENS names or USD value in watch mails and activity items (`true` needs `INDEX_RPC_URL`)",
    default: "true",
  }),
  CHAINMAIL_ENRICH_BUDGET_MS: duration(0, {
    group: details,
    description: "longest the token details of one poll's mails may take; what is not in by then stays empty",
    default: 8_000,
    max: MAX_ENRICH_MS,
  }),
  CHAINMAIL_METADATA_TIMEOUT_MS: duration(1, {
    group: details,
    description: "time of one token metadata fetch (redirects included)",
    default: 4_000,
    max: MAX_ENRICH_MS,
  }),
  CHAINMAIL_METADATA_MAX_BYTES: int(1_024, MAX_METADATA_BYTES, {
    group: details,
    description: "largest token metadata document (fetched or in a `data:` URI)",
    default: 256 * 1024,
  }),
  CHAINMAIL_ENRICH_CACHE_MS: duration(0, {
    group: details,
    description: "how long a token's details and an address's ENS name are kept in the watch's store (0: not kept)",
    default: 86_400_000,
  }),
  CHAINMAIL_IPFS_GATEWAY: baseUrl({
    group: details,
    description: "the gateway `ipfs://` token URIs and images are read through (an https URL for images in mail)",
    default: "https://ipfs.io/ipfs/",
  }),
  CHAINMAIL_FETCH_PRIVATE: oneOf(["true", "false"], {
    group: details,
    description:
      "`true`: token URIs may point at private, loopback and link-local addresses (a local chain's); refused otherwise",
    default: "false",
  }),
  CHAINMAIL_TIMEOUT_MS: duration(1, { group: calls, description: "timeout of one upstream attempt", default: 30_000 }),
  CHAINMAIL_MAX_RETRIES: int(0, MAX_RETRIES, {
    group: calls,
    description: "retries after the first attempt",
    default: 4,
  }),
  ...perUpstream("NFTPORT", "NFTPort calls"),
  ...perUpstream("OPENSEA", "OpenSea calls"),
  ...perUpstream("MAILJET", "Mailjet calls (Mailjet retries only 429 and never-opened connections)"),
  ...perUpstream("INDEX_RPC", "JSON-RPC calls"),
  ...perUpstream("CHAINMAIL_SERVICE", "calls to the chainmail service of `NFT_SOURCE=service`"),
  CHAINMAIL_RETRY_BASE_MS: duration(0, {
    group: calls,
    description: "first backoff step; doubles per retry, jittered",
    default: 500,
  }),
  CHAINMAIL_RETRY_MAX_DELAY_MS: duration(0, {
    group: calls,
    description: "longest single wait, `Retry-After` included; a longer `Retry-After` ends the retries",
    default: 20_000,
  }),
  CHAINMAIL_RETRY_BUDGET_MS: duration(0, {
    group: calls,
    description: "total time across attempts and waits; no retry starts past it",
    default: 120_000,
  }),
  HTTPS_PROXY: formatted("proxy-url", {
    group: calls,
    description: "proxy for https upstream calls (also `https_proxy`)",
  }),
  HTTP_PROXY: formatted("proxy-url", {
    group: calls,
    description: "proxy for http upstream calls (also `http_proxy`)",
  }),
  NO_PROXY: text({ group: calls, description: "hosts reached without the proxy (also `no_proxy`)" }),
  CHAINMAIL_PORT: int(0, 65_535, {
    group: service,
    description: "where `serve` listens (`--port` overrides)",
    default: 8080,
  }),
  CHAINMAIL_HOST: formatted("host", {
    group: service,
    description: "the address `serve` listens on (`--host` overrides)",
    default: "127.0.0.1",
  }),
  CHAINMAIL_TOKENS: text({
    group: service,
    description: "comma-separated bearer tokens; required when operator credentials are set",
  }),
  CHAINMAIL_EVENTS_USER: text({
    group: service,
    description: "Basic user Mailjet's event callback logs in with (`POST /events/mailjet`); a bearer token also works",
  }),
  CHAINMAIL_EVENTS_PASSWORD: text({
    group: service,
    description: "Basic password of `CHAINMAIL_EVENTS_USER`",
  }),
  // Mailjet accepts messages up to 15 MB; Base64 inflates attachments by 4/3 and a batch holds several.
  CHAINMAIL_BODY_LIMIT_BYTES: int(1, MAX_BODY_LIMIT_BYTES, {
    group: service,
    description: "largest request body (30 MiB)",
    default: 30 * 1024 * 1024,
  }),
  // A little more than the default retry budget (120 s), so a retrying node can report its own failure.
  CHAINMAIL_REQUEST_TIMEOUT_MS: duration(1, {
    group: service,
    description: "longest a node may run for one request",
    default: 130_000,
  }),
  // A client sends its headers in milliseconds; a slow one holding a socket open is cut after a few seconds.
  CHAINMAIL_HEADERS_TIMEOUT_MS: duration(1, {
    group: service,
    description: "time to send a request's headers; idle time of a kept-alive connection",
    default: 5_000,
    max: MAX_HEADERS_TIMEOUT_MS,
  }),
  // 30 MiB in 10 s is 3 MB/s: any client on a LAN or a fair uplink. Raise it for large batches over slow links.
  CHAINMAIL_BODY_TIMEOUT_MS: duration(1, {
    group: service,
    description: "time to send the body, after the headers' time",
    default: 10_000,
  }),
  // One process answers on one core (a page is mostly the statement, its JSON and the socket write): more cores, more
  // workers (server/workers.ts). Each keeps its own line and cache, so limits below are per worker.
  CHAINMAIL_WORKERS: int(1, MAX_WORKERS, {
    group: service,
    description: "processes of `serve` answering on the one port (each its own line and cache)",
    default: 1,
  }),
  // Bounds descriptors and memory; far above the requests one instance serves at once.
  CHAINMAIL_MAX_CONNECTIONS: int(1, MAX_CONNECTIONS, {
    group: service,
    description: "connections open at once",
    default: 4_096,
  }),
  // Node requests beyond these wait in line, then are refused with 503 and Retry-After (server/admission.ts): an
  // answer within about a second, or a refusal at once, rather than a wait of tens of seconds.
  CHAINMAIL_MAX_IN_FLIGHT: int(1, MAX_IN_FLIGHT, {
    group: service,
    description: "node requests run at once; more wait in line",
    default: 128,
  }),
  CHAINMAIL_MAX_QUEUED: int(0, MAX_IN_FLIGHT, {
    group: service,
    description: "node requests waiting in line; more are refused at once (503)",
    default: 512,
  }),
  CHAINMAIL_QUEUE_TIMEOUT_MS: duration(1, {
    group: service,
    description: "longest a node request waits in line before it is refused (503)",
    // 200 ms: under 500 busy connections the answered requests' p99 stays near 250 ms (BENCHMARKS.md).
    default: 200,
    max: MAX_HEADERS_TIMEOUT_MS,
  }),
  // Under more load than the CPU serves, requests wait unread in their sockets while the loop comes round; past this
  // delay new ones are refused at once, so the loop comes round faster for the rest. Off by default (as in
  // @fastify/under-pressure): one large request parsed or checked in one go (a 20 MB mail batch) holds the loop too,
  // and would have others refused meanwhile; an operator of a busy own-index replica sets it (e.g. 100).
  CHAINMAIL_MAX_EVENT_LOOP_DELAY_MS: int(0, MAX_HEADERS_TIMEOUT_MS, {
    group: service,
    description: "event-loop delay past which new node requests are refused (503); 0: never",
    default: 0,
  }),
  // Off by default: an answer then is always the upstream's latest. Identical reads in flight are shared regardless.
  CHAINMAIL_CACHE_TTL_MS: int(0, MAX_CACHE_TTL_MS, {
    group: service,
    description: "how long an upstream page (NFTPort, OpenSea) may answer repeats; 0: off",
    default: 0,
  }),
  CHAINMAIL_CACHE_MAX_ENTRIES: int(1, MAX_IN_FLIGHT, {
    group: service,
    description: "upstream pages the cache holds at most",
    default: 10_000,
  }),
  CHAINMAIL_CACHE_MAX_BYTES: int(1, MAX_BODY_LIMIT_BYTES * 16, {
    group: service,
    description: "bytes of upstream pages the cache holds at most (64 MiB)",
    default: 64 * 1024 * 1024,
  }),
  ANVIL_BIN: text({
    group: "Demo",
    description: "another anvil binary for `npm start`",
    shown: "the one `@foundry-rs/anvil` installs",
  }),
});

export type EnvName = keyof typeof EnvSchema.properties;
type Entry<N extends EnvName> = (typeof EnvSchema.properties)[N];
/** What `setting` gives: the value's type, or undefined for a variable without a default. */
export type SettingValue<N extends EnvName> = undefined extends Entry<N>["~default"]
  ? Static<Entry<N>> | undefined
  : Static<Entry<N>>;

type Env = Readonly<Record<string, string | undefined>>;

/** The rule a value must follow, in words, from its schema: what an error message says it must be. */
export function ruleOf(schema: TSchema): string {
  if (typeof schema["x-rule"] === "string") return schema["x-rule"];
  if (schema.anyOf) return `one of ${(schema.anyOf as TSchema[]).map((s) => s.const).join(", ")}`;
  if (schema.type === "integer") {
    const longest = schema.maximum === MAX_DURATION_MS ? " (ms; Node's longest timer, about 24.8 days)" : "";
    return schema.maximum === undefined
      ? `an integer >= ${schema.minimum}`
      : `an integer from ${schema.minimum} to ${schema.maximum}${longest}`;
  }
  return "a string";
}

/** Spaces, control characters: a URL parser drops some of them silently, so they are refused first. */
const SPACE_OR_CONTROL = /[\s\p{Cc}]/u;

/**
 * What is wrong with `raw` as a URL of one form (by default an http(s) endpoint), in words that never repeat it (it
 * may hold a key or a password); undefined when nothing is. Also for a flag's URL (`--rpc`).
 */
export function urlProblem(raw: string, form: UrlForm = "http-url"): string | undefined {
  const { schemes, after } = URL_FORMS[form];
  if (SPACE_OR_CONTROL.test(raw)) return "it holds a space or a control character";
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(raw)?.[1]?.toLowerCase();
  if (scheme === undefined || !(schemes as readonly string[]).includes(scheme))
    return `it does not start with ${schemes.map((s) => `${s}//`).join(" or ")}`;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    return "it is not a well-formed URL";
  }
  // "http:///x" parses, the parser mending it into a host "x": a host must follow the "//" as written.
  if (parsed.hostname === "" || /^[a-z][a-z0-9+.-]*:\/\/[\\/?#]/i.test(raw)) return "it names no host";
  try {
    // The user and password are read decoded: a `%` not followed by two hex digits could not be.
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
  } catch {
    return "its user or password holds a % not followed by two hex digits";
  }
  if (after === "a path" && (parsed.search || parsed.hash)) return "it has a ?query or a #fragment";
  if (after === "nothing" && (parsed.pathname !== "/" || parsed.search || parsed.hash))
    return "it has a path, a ?query or a #fragment";
  return undefined;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HOST_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/** Whether `raw` is an IPv4 or IPv6 address or a host name (letters, digits, hyphens; no all-digit last label). */
export function isHost(raw: string): boolean {
  if (IPV4.test(raw)) return true;
  if (/^[0-9a-f:.]+$/i.test(raw) && raw.includes(":")) {
    try {
      // The URL parser knows every IPv6 form (`::`, `::ffff:1.2.3.4`); the characters above keep it to an address.
      new URL(`http://[${raw}]/`);
      return true;
    } catch {
      return false;
    }
  }
  const labels = (raw.endsWith(".") ? raw.slice(0, -1) : raw).split(".");
  return raw.length <= 253 && labels.every((label) => HOST_LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!);
}

/** What is wrong with a string setting's value beyond its schema (its `x-format`), or undefined. */
function formatProblem(schema: TSchema, raw: string): string | undefined {
  const format = schema["x-format"] as Format | undefined;
  if (format === undefined) return undefined;
  if (format === "host") return isHost(raw) ? undefined : "it is neither a host name nor an IP address";
  return urlProblem(raw, format);
}

/** A value as a refusal shows it: its JSON, cut at 256 characters (a variable may hold megabytes). */
const shownValue = (raw: string): string => {
  const text = JSON.stringify(raw);
  return text.length > 256 ? `${text.slice(0, 253)}...` : text;
};

/** The value of `raw` under `name` (a schema variable, or its lower-case alias), or its refusal. */
function read(schema: TSchema, name: string, raw: string | undefined): unknown {
  if (raw === undefined || raw === "") return schema.default;
  const value = schema.type === "integer" ? Number(raw) : raw;
  const problem = Value.Check(schema, value) ? formatProblem(schema, raw) : "";
  if (problem === undefined) return value;
  // A URL may hold a key or a password: it is named, never shown.
  const shown = schema["x-secret"] === true ? "" : `=${shownValue(raw)}`;
  throw new ChainmailError(
    "INVALID_INPUT",
    `Setting ${name}${shown} is invalid: ${problem ? `${problem}; it ` : ""}must be ${ruleOf(schema)}.`,
    { details: { setting: name } },
  );
}

/**
 * The value of one variable: checked against its schema, its default when unset or empty. A value that breaks its
 * rule is refused as `invalid_input` naming the variable, the rule and what is wrong (the value too, unless it may
 * hold a secret).
 */
export function setting<N extends EnvName>(env: Env, name: N): SettingValue<N> {
  return read(EnvSchema.properties[name], name, env[name]) as SettingValue<N>;
}

/**
 * The proxy settings, each from its upper-case variable or, when that is not set at all, its lower-case one (the
 * convention curl and undici follow), checked by the same rules and named as given.
 */
export function proxySettings(env: Env): {
  httpProxy: string | undefined;
  httpsProxy: string | undefined;
  noProxy: string | undefined;
} {
  const aliased = (name: "HTTP_PROXY" | "HTTPS_PROXY" | "NO_PROXY") => {
    const given = env[name] !== undefined ? name : name.toLowerCase();
    return read(EnvSchema.properties[name], given, env[given]) as string | undefined;
  };
  return { httpProxy: aliased("HTTP_PROXY"), httpsProxy: aliased("HTTPS_PROXY"), noProxy: aliased("NO_PROXY") };
}

/**
 * Checks every setting of `env` at once, whether or not the command at hand reads it, and throws the first refusal:
 * what every command runs before anything else, so that a bad value is named at start, never found midway.
 */
export function checkSettings(env: Env): void {
  for (const name of Object.keys(EnvSchema.properties) as EnvName[]) setting(env, name);
  proxySettings(env);
}

/** A value's rule as the table states it: the bounds, the values, or the form without its example. */
function briefRule(schema: TSchema): string {
  if (schema.anyOf) return (schema.anyOf as TSchema[]).map((s) => `\`${s.const}\``).join(", ");
  if (schema.type === "integer") return `${schema.minimum} to ${schema.maximum}`;
  if (typeof schema["x-rule"] === "string") return schema["x-rule"].replace(/, e\.g\. [^,]*,?/, "");
  return "any text";
}

/** docs/configuration.md's table of variables, from the schema (rows in schema order, grouped). */
export function configurationTable(): string {
  const groups = new Map<string, string[][]>();
  for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
    const shown = schema["x-default"] ?? (schema.default === undefined ? "none" : `\`${schema.default}\``);
    const rows = groups.get(schema["x-group"]) ?? [];
    rows.push([`\`${name}\``, schema.description ?? "", briefRule(schema), shown]);
    groups.set(schema["x-group"], rows);
  }
  const header = ["variable", "meaning", "value", "default"];
  const rows = [...groups].flatMap(([group, members]) => [[`**${group}**`, "", "", ""], ...members]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

// Type checks, not run: a name outside the schema is refused, and a variable without a default may be undefined.
type Assert<T extends true> = T;
export type _Checks = [
  Assert<"NFTPORT_TIMEOUT_MS" extends EnvName ? true : false>,
  Assert<string extends EnvName ? false : true>,
  Assert<SettingValue<"MAILJET_CONCURRENCY"> extends number ? true : false>,
  Assert<undefined extends SettingValue<"NFTPORT_TIMEOUT_MS"> ? true : false>,
];
