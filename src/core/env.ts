/**
 * Every environment variable chainmail reads, in one TypeBox schema: the source of validation (`setting`), of the
 * error messages (each names the variable and the rule it broke) and of docs/configuration.md's table
 * (`configurationTable`, checked by a test). A new variable is one line here, then `setting(env, "NAME")` where it
 * is used.
 *
 * Each entry is the type of the *value* (an integer, one of a list, a string matching a pattern); the raw text of
 * the variable is converted to it first. An empty variable counts as unset. `default` is the value an unset
 * variable reads as (none: `undefined`, usually because another variable stands in, named by `x-default`).
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
/** The hosted providers whose published costs and limits the index knows (sources/index/providers.ts). */
export const INDEX_RPC_PROVIDERS = ["alchemy", "infura", "quicknode", "generic"] as const;

interface Doc {
  /** The section of the table the variable is listed under. */
  group: "NFT retrievers" | "Email" | "Upstream calls" | "HTTP service" | "Demo";
  description: string;
  /** The default as the table shows it, where `default` alone does not say it (or there is none). */
  shown?: string;
}

const doc = ({ group, description, shown }: Doc) => ({
  description,
  "x-group": group,
  ...(shown === undefined ? {} : { "x-default": shown }),
});

// The default's type rides on the schema's type (a property only the type checker sees: TypeBox types `default` as
// any), so `setting` knows which variables can read as undefined.
type Phantom<D> = { "~default": D };
const int = <D extends number | undefined = undefined>(min: number, d: Doc & { default?: D; max?: number }) =>
  Type.Integer({
    minimum: min,
    ...(d.max === undefined ? {} : { maximum: d.max }),
    default: d.default,
    ...doc(d),
  }) as TInteger & Phantom<D>;
const text = <D extends string | undefined = undefined>(d: Doc & { default?: D }) =>
  Type.String({ default: d.default, ...doc(d) }) as TString & Phantom<D>;
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
/** An upstream's own timeout and retries, standing in for CHAINMAIL_TIMEOUT_MS and CHAINMAIL_MAX_RETRIES. */
const perUpstream = <U extends string>(upstream: U, what: string) => {
  const timeout = int(1, { group: calls, description: `timeout of ${what}`, shown: "`CHAINMAIL_TIMEOUT_MS`" });
  const retries = int(0, { group: calls, description: `retries of ${what}`, shown: "`CHAINMAIL_MAX_RETRIES`" });
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
  NFTPORT_BASE_URL: text({
    group: retrievers,
    description: "origin of the NFTPort-compatible upstream",
    default: "https://api.nftport.xyz",
  }),
  NFTPORT_API_KEY: text({
    group: retrievers,
    description: "operator's NFTPort key, used when a caller gives no `params.api_key`",
  }),
  OPENSEA_BASE_URL: text({
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
      description: "ETH/USD feed asked through `INDEX_RPC_URL` for OpenSea sales' `price_usd`",
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
  INDEX_RPC_URL: text({
    group: retrievers,
    description: "JSON-RPC endpoint `chainmail index` follows (`--rpc` overrides); OpenSea's blocks",
  }),
  INDEX_RPC_THROTTLE_BUDGET_MS: int(0, {
    group: retrievers,
    description: "how long `chainmail index --once` waits out throttling; following the head waits on",
    default: 600_000,
  }),
  INDEX_RPC_PROVIDER: oneOfOrUnset(INDEX_RPC_PROVIDERS, {
    group: retrievers,
    description: "whose published costs and limits `chainmail index` plans its calls by",
    shown: "recognised by the endpoint's host, else `generic`",
  }),
  INDEX_RPC_CU_PER_SECOND: int(1, {
    group: retrievers,
    description: "your plan's compute units (or credits) per second: the index paces its calls to it, never above",
    shown: "0.9× the provider's smallest plan (Alchemy: 330), raised or lowered by its throttling",
  }),
  INDEX_RPC_REQUESTS_PER_SECOND: int(1, {
    group: retrievers,
    description: "your plan's requests per second: the index paces its calls to it (counted as requests), never above",
    shown: "learnt from the provider's throttling",
  }),
  INDEX_RPC_LAG_BUDGET_MS: int(0, {
    group: retrievers,
    description: "how long a block's logs may stay incomplete at the provider before the index stops",
    default: 180_000,
  }),
  CHAINMAIL_SERVICE_URL: text({
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
  MAILJET_BASE_URL: text({
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
  MAILJET_CONCURRENCY: int(1, {
    group: email,
    description: "Mailjet calls in flight when a batch is split",
    default: 4,
  }),
  SMTP_URL: text({ group: email, description: "`smtps://user:pass@host:465` or `smtp://user:pass@host:587`" }),
  SMTP_TIMEOUT_MS: int(1, {
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
  CHAINMAIL_TIMEOUT_MS: int(1, { group: calls, description: "timeout of one upstream attempt", default: 30_000 }),
  CHAINMAIL_MAX_RETRIES: int(0, { group: calls, description: "retries after the first attempt", default: 4 }),
  ...perUpstream("NFTPORT", "NFTPort calls"),
  ...perUpstream("OPENSEA", "OpenSea calls"),
  ...perUpstream("MAILJET", "Mailjet calls (Mailjet retries only 429 and never-opened connections)"),
  ...perUpstream("INDEX_RPC", "JSON-RPC calls"),
  ...perUpstream("CHAINMAIL_SERVICE", "calls to the chainmail service of `NFT_SOURCE=service`"),
  CHAINMAIL_RETRY_BASE_MS: int(0, {
    group: calls,
    description: "first backoff step; doubles per retry, jittered",
    default: 500,
  }),
  CHAINMAIL_RETRY_MAX_DELAY_MS: int(0, {
    group: calls,
    description: "longest single wait, `Retry-After` included; a longer `Retry-After` ends the retries",
    default: 20_000,
  }),
  CHAINMAIL_RETRY_BUDGET_MS: int(0, {
    group: calls,
    description: "total time across attempts and waits; no retry starts past it",
    default: 120_000,
  }),
  HTTPS_PROXY: text({ group: calls, description: "proxy for https upstream calls (also `https_proxy`)" }),
  HTTP_PROXY: text({ group: calls, description: "proxy for http upstream calls (also `http_proxy`)" }),
  NO_PROXY: text({ group: calls, description: "hosts reached without the proxy (also `no_proxy`)" }),
  CHAINMAIL_PORT: int(0, {
    group: service,
    description: "where `serve` listens (`--port` overrides)",
    default: 8080,
    max: 65_535,
  }),
  CHAINMAIL_HOST: text({
    group: service,
    description: "the address `serve` listens on (`--host` overrides)",
    default: "127.0.0.1",
  }),
  CHAINMAIL_TOKENS: text({
    group: service,
    description: "comma-separated bearer tokens; required when operator credentials are set",
  }),
  // Mailjet accepts messages up to 15 MB; Base64 inflates attachments by 4/3 and a batch holds several.
  CHAINMAIL_BODY_LIMIT_BYTES: int(1, {
    group: service,
    description: "largest request body (30 MiB)",
    default: 30 * 1024 * 1024,
  }),
  // A little more than the default retry budget (120 s), so a retrying node can report its own failure.
  CHAINMAIL_REQUEST_TIMEOUT_MS: int(1, {
    group: service,
    description: "longest a node may run for one request",
    default: 130_000,
  }),
  // A client sends its headers in milliseconds; a slow one holding a socket open is cut after a few seconds.
  CHAINMAIL_HEADERS_TIMEOUT_MS: int(1, {
    group: service,
    description: "time to send a request's headers; idle time of a kept-alive connection",
    default: 5_000,
  }),
  // 30 MiB in 10 s is 3 MB/s: any client on a LAN or a fair uplink. Raise it for large batches over slow links.
  CHAINMAIL_BODY_TIMEOUT_MS: int(1, {
    group: service,
    description: "time to send the body, after the headers' time",
    default: 10_000,
  }),
  // Bounds descriptors and memory; far above the requests one instance serves at once.
  CHAINMAIL_MAX_CONNECTIONS: int(1, { group: service, description: "connections open at once", default: 4_096 }),
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
    return schema.maximum === undefined
      ? `an integer >= ${schema.minimum}`
      : `an integer from ${schema.minimum} to ${schema.maximum}`;
  }
  return "a string";
}

/**
 * The value of one variable: checked against its schema, its default when unset or empty. A value that breaks its
 * rule is refused as `invalid_input` naming the variable, its value and the rule.
 */
export function setting<N extends EnvName>(env: Env, name: N): SettingValue<N> {
  const schema: TSchema = EnvSchema.properties[name];
  const raw = env[name];
  if (raw === undefined || raw === "") return schema.default;
  const value = schema.type === "integer" ? Number(raw) : raw;
  if (!Value.Check(schema, value)) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `Setting ${name}=${JSON.stringify(raw)} is invalid: must be ${ruleOf(schema)}.`,
      { details: { setting: name } },
    );
  }
  return value as SettingValue<N>;
}

/** docs/configuration.md's table of variables, from the schema (rows in schema order, grouped). */
export function configurationTable(): string {
  const groups = new Map<string, string[][]>();
  for (const [name, schema] of Object.entries(EnvSchema.properties) as [string, TSchema][]) {
    const shown = schema["x-default"] ?? (schema.default === undefined ? "none" : `\`${schema.default}\``);
    const rows = groups.get(schema["x-group"]) ?? [];
    const values = schema.anyOf ? ` (${(schema.anyOf as TSchema[]).map((v) => `\`${v.const}\``).join(", ")})` : "";
    rows.push([`\`${name}\``, `${schema.description ?? ""}${values}`, shown]);
    groups.set(schema["x-group"], rows);
  }
  const rows = [...groups].flatMap(([group, members]) => [[`**${group}**`, "", ""], ...members]);
  const widths = [0, 1, 2].map((i) =>
    Math.max(...[["variable", "meaning", "default"], ...rows].map((r) => r[i]!.length)),
  );
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [
    line(["variable", "meaning", "default"]),
    `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`,
    ...rows.map(line),
  ].join("\n");
}

// Type checks, not run: a name outside the schema is refused, and a variable without a default may be undefined.
type Assert<T extends true> = T;
export type _Checks = [
  Assert<"NFTPORT_TIMEOUT_MS" extends EnvName ? true : false>,
  Assert<string extends EnvName ? false : true>,
  Assert<SettingValue<"MAILJET_CONCURRENCY"> extends number ? true : false>,
  Assert<undefined extends SettingValue<"NFTPORT_TIMEOUT_MS"> ? true : false>,
];
