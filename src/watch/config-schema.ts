/**
 * The watch configuration's schema and the types it gives: one TypeBox schema for types, validation and the
 * README. A leaf of src/watch: the parser (config.ts), the renderer and the record filters all read it.
 */
import { type Static, Type } from "@sinclair/typebox";
import { RECORD_FILTER_FIELDS } from "../activity/filter.js";
import { Address } from "../schemas/common.js";
import { WEEKDAYS } from "./schedule.js";

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
    retract_subject: Type.Optional(
      Template("retract: the retraction's subject (the removed records' variables, as a transaction's)", 1000),
    ),
    retract_text: Type.Optional(Template("retract: the retraction's text part")),
    retract_html: Type.Optional(Template("retract: the retraction's HTML part")),
  },
  strict,
);

export const RULE_TYPES = ["transfer", "mint", "burn", "sale", "bid", "list", "all"] as const;

/** Where a watch reads records from: the values of NFT_SOURCE. */
export const WATCH_SOURCES = ["index", "nftport", "opensea", "index+opensea"] as const;
export type WatchSource = (typeof WATCH_SOURCES)[number];

/** The sources whose by-contract retriever answers bids and listings. */
export const ORDER_BOOK_SOURCES: readonly WatchSource[] = ["nftport", "opensea", "index+opensea"];

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
    ...RECORD_FILTER_FIELDS,
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
    confirmations: Type.Optional(
      Type.Union(
        [
          Type.Integer({ minimum: 0, maximum: 64 }),
          Type.Literal("finalized", { description: "once its block is at or below the node's finalized block" }),
        ],
        {
          description:
            "Mail a record only once this many blocks are on top of it (the own index's head), or \"finalized\" (the finalized block of INDEX_RPC_URL's node); default 0. index and index+opensea",
          "x-rule": '0 to 64, or "finalized"',
        },
      ),
    ),
    group: Type.Optional(
      Type.Literal("transaction", {
        description:
          "mode each: one email per transaction for all its records the rule wants (a sweep): count, every token id, total price",
      }),
    ),
    retract: Type.Optional(
      Type.Boolean({
        description:
          "confirmations 0: one follow-up email when a reorg removes a record already mailed (never for one not mailed, never twice)",
      }),
    ),
    max_per_hour: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 10_000,
        description:
          "At most this many emails in a clock hour (UTC); the records past it wait for one digest of that hour, sent when it ends",
      }),
    ),
    digest: Type.Optional(
      Type.Object(
        {
          minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: "Send every N minutes" })),
          records: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: "Send every N records" })),
          at: Type.Optional(
            Type.String({
              pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$",
              description: "Send what waits at the first poll at or after this local time (HH:MM, 24-hour)",
              "x-rule": "a time HH:MM, 00:00 to 23:59",
            }),
          ),
          every: Type.Optional(
            Type.Union([Type.Literal("day"), Type.Literal("week")], {
              description: "with at: every day (the default) or every week",
            }),
          ),
          on: Type.Optional(
            Type.Union(
              WEEKDAYS.map((d) => Type.Literal(d)),
              { description: "with every week: the day; default monday" },
            ),
          ),
          timezone: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 64,
              description: "with at: the IANA time zone of at (Europe/Paris); default UTC",
            }),
          ),
        },
        {
          ...strict,
          description:
            "mode digest: send when a threshold is reached (minutes, records) or at the scheduled time (at), whichever comes first",
        },
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
    rules: Type.Array(WatchRule, { minItems: 1, maxItems: 1_000 }),
  },
  { ...strict, title: "chainmail watch configuration" },
);
export type Parsed = Static<typeof WatchConfigSchema>;

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
