/**
 * The watch configuration (`chainmail watch --config watch.json`, `watch({ config })`): one TypeBox schema for
 * types, validation and the README, plus the rules across fields a schema cannot say. A bad file is refused with
 * the nodes' own error shape: `invalid_input` with every violation at once, each naming its field
 * (`rules[2].mail.to[0].Email`).
 */
import { type Static, Type } from "@sinclair/typebox";
import { ChainmailError, invalidInput, type Violation } from "../core/errors.js";
import { checkPort, readJsonData } from "../core/validate.js";
import { Address } from "../schemas/common.js";
import { messageProblems } from "../transports/message-rules.js";
import { templateProblems } from "./render.js";

const strict = { additionalProperties: false } as const;

const Recipient = Type.Object(
  {
    Email: Type.String({ minLength: 1, maxLength: 254, description: "An email address" }),
    Name: Type.Optional(Type.String({ maxLength: 200 })),
  },
  strict,
);

const Template = (description: string, maxLength = 100_000) => Type.String({ maxLength, description });

export const MailTemplate = Type.Object(
  {
    from: Type.Optional(Recipient),
    to: Type.Array(Recipient, { minItems: 1, maxItems: 50 }),
    cc: Type.Optional(Type.Array(Recipient, { maxItems: 50 })),
    bcc: Type.Optional(Type.Array(Recipient, { maxItems: 50 })),
    subject: Type.Optional(Template("Subject with {{var:…}} variables; cut to 255 characters", 1000)),
    text: Type.Optional(Template("Text part with {{var:…}} variables")),
    html: Type.Optional(Template("HTML part with {{var:…}} variables (values are HTML-escaped)")),
    item_text: Type.Optional(Template("digest: one record's line in the text part ({{var:items}})")),
    item_html: Type.Optional(Template("digest: one record's HTML in the HTML part ({{var:items}})")),
  },
  strict,
);

export const RULE_TYPES = ["transfer", "mint", "burn", "sale", "bid", "list", "all"] as const;

/** Where a watch reads records from: the values of NFT_SOURCE. */
export const WATCH_SOURCES = ["index", "nftport", "opensea", "index+opensea"] as const;
export type WatchSource = (typeof WATCH_SOURCES)[number];

/** The sources whose by-contract retriever answers bids and listings. */
const ORDER_BOOK_SOURCES: readonly WatchSource[] = ["nftport", "opensea", "index+opensea"];

const PriceBound = (bound: string, description: string) =>
  Type.Object(
    {
      eth: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12, description: `${bound} this many ETH` })),
      usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1e15, description: `${bound} this many US dollars` })),
    },
    { ...strict, description },
  );

export const WatchRule = Type.Object(
  {
    id: Type.String({
      pattern: "^[A-Za-z0-9_-]{1,64}$",
      description: "Stable name of the rule: its cursor and journal are kept under it",
      "x-rule": "1 to 64 letters, digits, _ or -",
    }),
    contract_address: Type.Optional(Address("Watch this NFT contract (omit for the whole chain)")),
    token_id: Type.Optional(
      Type.String({
        pattern: "^[0-9]{1,78}$",
        description: "Watch this token of contract_address",
        "x-rule": "a decimal integer string (uint256)",
      }),
    ),
    type: Type.Optional(
      Type.Array(Type.Union(RULE_TYPES.map((t) => Type.Literal(t))), {
        minItems: 1,
        uniqueItems: true,
        maxItems: RULE_TYPES.length,
        description:
          'Record kinds to mail; bid and list only with contract_address alone, from nftport, opensea or index+opensea. Default ["sale"]',
      }),
    ),
    min_price: Type.Optional(
      PriceBound("at least", "Only records with a price of at least this (exactly one of eth, usd)"),
    ),
    max_price: Type.Optional(
      PriceBound(
        "at most",
        "Only records with a price of at most this (exactly one of eth, usd): a listing below a price",
      ),
    ),
    mode: Type.Optional(
      Type.Union([Type.Literal("each"), Type.Literal("digest")], {
        description: "each: one email per record; digest: one email per rule for several records. Default each",
      }),
    ),
    digest: Type.Optional(
      Type.Object(
        {
          minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: "Send every N minutes" })),
          records: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Send every N records" })),
        },
        { ...strict, description: "mode digest: send when either threshold is reached" },
      ),
    ),
    start_block: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Mail records from this block on; default: after the chain head the index saw (NFTPort: the newest record) when the rule first runs",
      }),
    ),
    mail: MailTemplate,
  },
  strict,
);
export type WatchRule = Static<typeof WatchRule>;

export const WatchConfigSchema = Type.Object(
  {
    source: Type.Optional(
      Type.Union(
        WATCH_SOURCES.map((s) => Type.Literal(s)),
        { description: "Where records come from; default NFT_SOURCE" },
      ),
    ),
    store: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: "Where cursors and the journal live; default the index database (INDEX_DB)",
      }),
    ),
    poll_seconds: Type.Optional(
      Type.Number({
        minimum: 0.05,
        maximum: 86_400,
        description: "Between polls; default 2 (index), 30 (nftport, opensea, index+opensea)",
      }),
    ),
    reorg_depth: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: "Blocks re-read on every poll to see reorgs; default 12",
      }),
    ),
    nftport_requests_per_second: Type.Optional(
      Type.Number({ minimum: 0.01, maximum: 1000, description: "NFTPort calls per second across rules; default 2" }),
    ),
    opensea_requests_per_second: Type.Optional(
      Type.Number({ minimum: 0.01, maximum: 1000, description: "OpenSea calls per second across rules; default 1" }),
    ),
    from: Type.Optional(Recipient),
    rules: Type.Array(WatchRule, { minItems: 1, maxItems: 200 }),
  },
  { ...strict, title: "chainmail watch configuration" },
);
type Parsed = Static<typeof WatchConfigSchema>;

/** A validated configuration with every default filled in. */
export interface WatchConfig {
  source: WatchSource;
  store: string | undefined;
  pollMs: number;
  reorgDepth: number;
  nftportRequestsPerSecond: number;
  openseaRequestsPerSecond: number;
  rules: Rule[];
}

export type RetrieverKind = "by-token" | "by-contract" | "on-chain";

export interface Rule extends Omit<WatchRule, "type" | "mode"> {
  type: (typeof RULE_TYPES)[number][];
  mode: "each" | "digest";
  kind: RetrieverKind;
  from: { Email: string; Name?: string | undefined };
}

export function retrieverKind(rule: Pick<WatchRule, "contract_address" | "token_id">): RetrieverKind {
  if (rule.token_id !== undefined) return "by-token";
  return rule.contract_address !== undefined ? "by-contract" : "on-chain";
}

/**
 * Checks a parsed configuration file and fills in defaults; throws `invalid_input` listing every problem.
 * `defaultSource` is NFT_SOURCE's value (NFTPort when it names no source a watch reads).
 */
export function parseWatchConfig(value: unknown, defaultSource: string | undefined = "nftport"): WatchConfig {
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
    violations.push(...crossFieldProblems(parsed, parsed.source ?? fallback));
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

function refusal(violations: Violation[]): ChainmailError {
  const payload = invalidInput(violations);
  return new ChainmailError("INVALID_INPUT", payload.error.replace(/^Invalid input/, "Invalid watch configuration"), {
    details: { violations },
  });
}

function violation(field: string, rule: string, message: string, value?: unknown): Violation {
  return { field, rule, message, ...(value === undefined ? {} : { value }) };
}

function crossFieldProblems(config: Parsed, source: WatchSource): Violation[] {
  const out: Violation[] = [];
  const seen = new Set<string>();
  config.rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (seen.has(rule.id)) {
      out.push(violation(`${at}.id`, "unique", `${at}.id = "${rule.id}" is invalid: another rule has this id`));
    }
    seen.add(rule.id);
    if (rule.token_id !== undefined && rule.contract_address === undefined) {
      out.push(violation(`${at}.contract_address`, "required with token_id", `${at}.contract_address is required`));
    }
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
    if (source === "opensea" && retrieverKind(rule) === "on-chain") {
      out.push(
        violation(
          `${at}.contract_address`,
          "required with source opensea",
          `${at}.contract_address is required with source opensea: OpenSea filters the whole chain by time, not by block (use index or index+opensea for the whole chain)`,
        ),
      );
    }
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
    const mode = rule.mode ?? "each";
    if (mode === "digest" && rule.digest?.minutes === undefined && rule.digest?.records === undefined) {
      out.push(
        violation(
          `${at}.digest`,
          "minutes or records",
          `${at}.digest is required with mode "digest": give minutes, records or both`,
        ),
      );
    }
    if (mode === "each" && rule.digest !== undefined) {
      out.push(violation(`${at}.digest`, 'only with mode "digest"', `${at}.digest is only used with mode "digest"`));
    }
    if (mode === "each" && (rule.mail.item_text !== undefined || rule.mail.item_html !== undefined)) {
      const field = rule.mail.item_text !== undefined ? "item_text" : "item_html";
      out.push(
        violation(
          `${at}.mail.${field}`,
          'only with mode "digest"',
          `${at}.mail.${field} is only used with mode "digest"`,
        ),
      );
    }
    const from = rule.mail.from ?? config.from;
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
    for (const problem of templateProblems(rule.mail, mode))
      out.push({ ...problem, field: `${at}.mail.${problem.field}` });
  });
  return out;
}
