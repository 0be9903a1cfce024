/**
 * The watch configuration (`chainmail watch --config watch.json`, `watch({ config })`): one TypeBox schema for
 * types, validation and the README, plus the rules across fields a schema cannot say. A bad file is refused with
 * the nodes' own error shape: `invalid_input` with every violation at once, each naming its field
 * (`rules[2].mail.to[0].Email`).
 */
import { ChainmailError, invalidInput, type Violation } from "../core/errors.js";
import { checkPort, readJsonData } from "../core/validate.js";
import { messageProblems } from "../transports/message-rules.js";
import {
  ORDER_BOOK_SOURCES,
  type Parsed,
  retrieverKind,
  WATCH_SOURCES,
  type WatchConfig,
  WatchConfigSchema,
  type WatchSource,
} from "./config-schema.js";
import { templateProblems } from "./render.js";
import { isTimeZone } from "./schedule.js";

export * from "./config-schema.js";

/**
 * Checks a parsed configuration file and fills in defaults; throws `invalid_input` listing every problem.
 * `defaultSource` is NFT_SOURCE's value (NFTPort when it names no source a watch reads). `settings`: what the
 * watch will run with, for the rules that need a setting (without it, those are not checked).
 */
export function parseWatchConfig(
  value: unknown,
  defaultSource: string | undefined = "nftport",
  settings?: WatchSettings,
): WatchConfig {
  // Read as untrusted data first, as every node input is: own properties, bounded depth, and strings that are
  // Unicode (a lone surrogate in a template would make every email of its rule unsendable).
  const data = readJsonData(value, "");
  if (data.violations) throw refusal(data.violations);
  const checked = checkPort("", WatchConfigSchema, data.value);
  const violations = [...checked.violations];
  const fallback = (WATCH_SOURCES as readonly string[]).includes(defaultSource ?? "")
    ? (defaultSource as WatchSource)
    : "nftport";
  // Cross-field rules run only on a value the schema accepted as a whole; their own types are then sure.
  if (!violations.length) {
    const parsed = checked.value as Parsed;
    violations.push(...crossFieldProblems(parsed, parsed.source ?? fallback, settings));
  }
  if (violations.length) throw refusal(violations);
  const parsed = checked.value as Parsed;
  const source = parsed.source ?? fallback;
  return {
    source,
    store: parsed.store,
    pollMs: Math.round((parsed.poll_seconds ?? (source === "index" ? 2 : 30)) * 1000),
    reorgDepth: parsed.reorg_depth ?? 12,
    nftportRequestsPerSecond: parsed.nftport_requests_per_second ?? 2,
    openseaRequestsPerSecond: parsed.opensea_requests_per_second ?? 1,
    rules: parsed.rules.map((rule) => ({
      ...rule,
      type: rule.type ?? ["sale"],
      mode: rule.mode ?? "each",
      kind: retrieverKind(rule),
      from: rule.mail.from ?? parsed.from!,
    })),
  };
}

/** The settings some rules need, as the watch will run with them. */
export interface WatchSettings {
  /** INDEX_RPC_URL: `confirmations: "finalized"` asks this node for its finalized block. */
  indexRpcUrl: string | undefined;
}

function refusal(violations: Violation[]): ChainmailError {
  const payload = invalidInput(violations);
  return new ChainmailError("INVALID_INPUT", payload.error.replace(/^Invalid input/, "Invalid watch configuration"), {
    details: { violations },
  });
}

function violation(field: string, rule: string, message: string, value?: unknown): Violation {
  return { field, rule, message, ...(value === undefined ? {} : { value }) };
}

function crossFieldProblems(config: Parsed, source: WatchSource, settings: WatchSettings | undefined): Violation[] {
  const out: Violation[] = [];
  const seen = new Set<string>();
  config.rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (seen.has(rule.id)) {
      out.push(violation(`${at}.id`, "unique", `${at}.id = "${rule.id}" is invalid: another rule has this id`));
    }
    seen.add(rule.id);
    const mode = rule.mode ?? "each";
    out.push(
      ...readProblems(rule, at, source, settings),
      ...modeProblems(rule, at, mode),
      ...mailProblems(rule, at, mode, config.from),
    );
  });
  return out;
}

type ParsedRule = Parsed["rules"][number];

/** What the rule reads: a token needs its contract; bids, listings and OpenSea need a contract alone. */
function readProblems(
  rule: ParsedRule,
  at: string,
  source: WatchSource,
  settings: WatchSettings | undefined,
): Violation[] {
  const out: Violation[] = [];
  if (rule.token_id !== undefined && rule.contract_address === undefined) {
    out.push(violation(`${at}.contract_address`, "required with token_id", `${at}.contract_address is required`));
  }
  if (rule.contracts !== undefined && rule.contract_address !== undefined) {
    out.push(
      violation(
        `${at}.contracts`,
        "not with contract_address",
        `${at}.contracts is invalid with contract_address: give one contract as contract_address or several as contracts`,
      ),
    );
  }
  if (rule.side !== undefined && rule.wallets === undefined) {
    out.push(violation(`${at}.side`, "only with wallets", `${at}.side is only used with wallets`, rule.side));
  }
  out.push(...confirmationProblems(rule, at, source, settings), ...sourceProblems(rule, at, source));
  return out;
}

/** When a record is mailed: confirmations the source can count, a retraction only of what was mailed at once. */
function confirmationProblems(
  rule: ParsedRule,
  at: string,
  source: WatchSource,
  settings: WatchSettings | undefined,
): Violation[] {
  const out: Violation[] = [];
  if (rule.confirmations && source !== "index" && source !== "index+opensea") {
    out.push(
      violation(
        `${at}.confirmations`,
        "only with source index or index+opensea",
        rule.confirmations === "finalized"
          ? `${at}.confirmations is invalid with source ${source}: "finalized" is the own index's node's finalized block (use index or index+opensea, with INDEX_RPC_URL)`
          : `${at}.confirmations is invalid with source ${source}: blocks on top are counted from the own index's head (use index or index+opensea)`,
        rule.confirmations,
      ),
    );
  } else if (rule.confirmations === "finalized" && settings && !settings.indexRpcUrl) {
    out.push(
      violation(
        `${at}.confirmations`,
        "finalized only with INDEX_RPC_URL",
        `${at}.confirmations = "finalized" needs INDEX_RPC_URL: the finalized block is asked of the index's JSON-RPC node (set INDEX_RPC_URL, or give a number of blocks)`,
        rule.confirmations,
      ),
    );
  }
  if (rule.retract && rule.confirmations !== undefined && rule.confirmations !== 0) {
    out.push(
      violation(
        `${at}.retract`,
        "only with confirmations 0",
        `${at}.retract is only used with confirmations 0: a record mailed ${rule.confirmations === "finalized" ? "once its block is finalized" : `after ${rule.confirmations} confirmations`} is not retracted (drop retract or confirmations)`,
        rule.retract,
      ),
    );
  }
  return out;
}

/** What the source can read: bids and listings from an order book by contract, OpenSea by contract. */
function sourceProblems(rule: ParsedRule, at: string, source: WatchSource): Violation[] {
  const out: Violation[] = [];
  const orderBook = (rule.type ?? []).filter((t) => t === "bid" || t === "list");
  if (orderBook.length && retrieverKind(rule) !== "by-contract") {
    out.push(
      violation(
        `${at}.type`,
        "bid and list only with contract_address alone",
        `${at}.type = ${JSON.stringify(rule.type)} is invalid: bid and list are only retrieved by contract (give contract_address without token_id)`,
        rule.type,
      ),
    );
  } else if (orderBook.length && !ORDER_BOOK_SOURCES.includes(source)) {
    out.push(
      violation(
        `${at}.type`,
        `bid and list only from ${ORDER_BOOK_SOURCES.join(", ")}`,
        `${at}.type = ${JSON.stringify(rule.type)} is invalid: source ${source} has no bids or listings (use ${ORDER_BOOK_SOURCES.join(", ")})`,
        rule.type,
      ),
    );
  }
  if (source === "opensea" && rule.contracts !== undefined) {
    out.push(
      violation(
        `${at}.contracts`,
        "not with source opensea",
        `${at}.contracts is invalid with source opensea: OpenSea has no whole-chain read to keep to the list (give each contract a rule of its own)`,
      ),
    );
  } else if (source === "opensea" && retrieverKind(rule) === "on-chain") {
    out.push(
      violation(
        `${at}.contract_address`,
        "required with source opensea",
        `${at}.contract_address is required with source opensea: OpenSea filters the whole chain by time, not by block (use index or index+opensea for the whole chain)`,
      ),
    );
  }
  return out;
}

/** Price bounds and the digest settings, which depend on the mode. */
function modeProblems(rule: ParsedRule, at: string, mode: "each" | "digest"): Violation[] {
  const out: Violation[] = [];
  for (const bound of ["min_price", "max_price"] as const) {
    const given = rule[bound];
    if (!given) continue;
    if (["eth", "usd"].filter((k) => (given as Record<string, unknown>)[k] !== undefined).length !== 1) {
      out.push(
        violation(
          `${at}.${bound}`,
          "exactly one of eth, usd",
          `${at}.${bound} is invalid: give exactly one of eth, usd`,
          given,
        ),
      );
    }
  }
  const digest = rule.digest;
  if (mode === "digest" && digest?.minutes === undefined && digest?.records === undefined && digest?.at === undefined) {
    out.push(
      violation(
        `${at}.digest`,
        "minutes, records or at",
        `${at}.digest is required with mode "digest": give minutes, records, a scheduled time (at), or several`,
      ),
    );
  }
  if (digest) out.push(...scheduleProblems(digest, `${at}.digest`));
  if (mode === "digest" && rule.group !== undefined) {
    out.push(violation(`${at}.group`, 'only with mode "each"', `${at}.group is only used with mode "each"`));
  }
  if (mode === "each" && rule.digest !== undefined) {
    out.push(violation(`${at}.digest`, 'only with mode "digest"', `${at}.digest is only used with mode "digest"`));
  }
  out.push(...templateUseProblems(rule, at, mode));
  return out;
}

/** Template parts given where nothing uses them. */
function templateUseProblems(rule: ParsedRule, at: string, mode: "each" | "digest"): Violation[] {
  const out: Violation[] = [];
  // With max_per_hour, an each rule mails the records past the cap in a digest: its items are the rule's to say.
  const itemsUsed = mode === "digest" || rule.max_per_hour !== undefined;
  if (!itemsUsed && (rule.mail.item_text !== undefined || rule.mail.item_html !== undefined)) {
    const field = rule.mail.item_text !== undefined ? "item_text" : "item_html";
    out.push(
      violation(
        `${at}.mail.${field}`,
        'only with mode "digest" or max_per_hour',
        `${at}.mail.${field} is only used with mode "digest" or max_per_hour`,
      ),
    );
  }
  for (const part of ["retract_subject", "retract_text", "retract_html"] as const) {
    if (rule.mail[part] !== undefined && !rule.retract) {
      out.push(violation(`${at}.mail.${part}`, "only with retract", `${at}.mail.${part} is only used with retract`));
    }
  }
  return out;
}

/** A digest's schedule: its parts only with `at`, `on` only every week, a time zone the runtime knows. */
function scheduleProblems(digest: NonNullable<ParsedRule["digest"]>, at: string): Violation[] {
  const out: Violation[] = [];
  if (digest.at === undefined) {
    for (const part of ["every", "on", "timezone"] as const) {
      if (digest[part] !== undefined) {
        out.push(violation(`${at}.${part}`, "only with at", `${at}.${part} is only used with at (the scheduled time)`));
      }
    }
    return out;
  }
  if (digest.on !== undefined && digest.every !== "week") {
    out.push(
      violation(
        `${at}.on`,
        'only with every "week"',
        `${at}.on is only used with every "week" (a daily digest goes out every day)`,
        digest.on,
      ),
    );
  }
  if (digest.timezone !== undefined && !isTimeZone(digest.timezone)) {
    out.push(
      violation(
        `${at}.timezone`,
        "a known IANA time zone",
        `${at}.timezone = ${JSON.stringify(digest.timezone)} is invalid: must be an IANA time zone such as Europe/Paris or UTC`,
        digest.timezone,
      ),
    );
  }
  return out;
}

/** The mail's sender, its addresses by every transport's rules, and its templates. */
function mailProblems(rule: ParsedRule, at: string, mode: "each" | "digest", topFrom: Parsed["from"]): Violation[] {
  const out: Violation[] = [];
  const from = rule.mail.from ?? topFrom;
  if (!from) out.push(violation(`${at}.mail.from`, "required", `${at}.mail.from is required (or a top-level from)`));
  // The address rules every transport applies (email-send checks the same before sending).
  const sample = {
    From: from ?? { Email: "sender@example.com" },
    To: rule.mail.to,
    ...(rule.mail.cc ? { Cc: rule.mail.cc } : {}),
    ...(rule.mail.bcc ? { Bcc: rule.mail.bcc } : {}),
    TextPart: "-",
  };
  for (const problem of messageProblems(sample)) {
    const path = problem.path.replace(/^(To|Cc|Bcc)\b/, (m) => m.toLowerCase());
    const field = path.startsWith("From")
      ? rule.mail.from
        ? `${at}.mail.from.Email`
        : "from.Email"
      : `${at}.mail.${path}`;
    out.push(violation(field, problem.rule, problem.say(field), problem.value));
  }
  for (const problem of templateProblems(rule.mail, mode, rule.group !== undefined))
    out.push({ ...problem, field: `${at}.mail.${problem.field}` });
  return out;
}
