/**
 * A rule's mail template made into Send API v3.1 messages: one per record (`each`) or one per digest. The
 * `{{var:name}}` / `{{var:name:"default"}}` syntax and its escaping are the SMTP/outbox renderer's own
 * (transports/mime/template.ts), applied here so every transport delivers the same text.
 */
import type { Violation } from "../core/errors.js";
import type { TokenDetails } from "../enrichment/enrich.js";
import type { EmailMessage } from "../schemas/email.js";
import type { TransactionRecord } from "../schemas/transactions.js";
import { substituteVariables } from "../transports/mime/template.js";
import type { Rule, WatchRule } from "./config-schema.js";
import { GROUP_VARIABLES, groupVariables, positionOf, RECORD_VARIABLES, recordVariables } from "./records.js";

type Mail = WatchRule["mail"];
type Part =
  | "subject"
  | "text"
  | "html"
  | "item_text"
  | "item_html"
  | "retract_subject"
  | "retract_text"
  | "retract_html";

/**
 * The default templates' lines of a record's details (enrichment/enrich.ts), only those it has: a name, the
 * collection, both sides' ENS names, the image (its link in text, the picture in HTML). A template of one's own
 * places `{{var:token_name}}` and the others where it wants them.
 */
function detailLines(variables: Record<string, string>, html: boolean): { image: string; lines: string } {
  const has = (name: string) => Boolean(variables[name]);
  const line = (label: string, value: string) => (html ? `<li>${label}: ${value}</li>` : `${label}: ${value}\n`);
  const lines = [
    has("token_name") ? line("Name", "{{var:token_name}}") : "",
    has("collection_name") ? line("Collection", "{{var:collection_name}}") : "",
    has("from_name") ? line("From", "{{var:from_name}} ({{var:from}})") : "",
    has("to_name") ? line("To", "{{var:to_name}} ({{var:to}})") : "",
    has("token_image") && !html ? line("Image", "{{var:token_image}}") : "",
  ].join("");
  const image =
    has("token_image") && html
      ? '<p><img src="{{var:token_image}}" alt="{{var:token_name:"NFT image"}}" width="240" ' +
        'style="display:block;max-width:240px;height:auto;border:0"></p>'
      : "";
  return { image, lines };
}

/** `each`: the default templates, with the record's details where it has them. */
function eachDefaults(variables: Record<string, string>) {
  const text = detailLines(variables, false);
  const html = detailLines(variables, true);
  return {
    subject: "{{var:rule}}: {{var:summary}}",
    text:
      `{{var:summary}}\n\n${text.lines}Contract: {{var:contract_address}}\nToken: {{var:token_id}}\nTransaction: {{var:transaction_hash}}\n` +
      "Block: {{var:block_number}}\nDate (UTC): {{var:transaction_date}}\n\nSent by chainmail watch (rule {{var:rule}}).",
    html:
      `${html.image}<p>{{var:summary}}</p><ul>${html.lines}<li>Contract: {{var:contract_address}}</li><li>Token: {{var:token_id}}</li>` +
      "<li>Transaction: {{var:transaction_hash}}</li><li>Block: {{var:block_number}}</li>" +
      "<li>Date (UTC): {{var:transaction_date}}</li></ul><p>Sent by chainmail watch (rule {{var:rule}}).</p>",
  };
}

const DIGEST_DEFAULTS = {
  subject: "{{var:rule}}: {{var:count}} new record{{var:plural_s}}",
  text: "{{var:rule}}: {{var:count}} new record{{var:plural_s}}, {{var:first_date}} to {{var:last_date}} UTC\n\n{{var:items}}\n\nSent by chainmail watch.",
  html: "<p>{{var:rule}}: {{var:count}} new record{{var:plural_s}}, {{var:first_date}} to {{var:last_date}} UTC</p><ul>{{var:items}}</ul><p>Sent by chainmail watch.</p>",
  item_text: "- {{var:summary}}",
  item_html: "<li>{{var:summary}}</li>",
} as const;

export const DIGEST_VARIABLES = [
  "rule",
  "count",
  "plural_s",
  "items",
  "first_date",
  "last_date",
  "first_block",
  "last_block",
];

/** `group: "transaction"`: the each-mail of one transaction's records (the details are its first record's). */
function groupDefaults(variables: Record<string, string>) {
  const text = detailLines(variables, false);
  const html = detailLines(variables, true);
  return {
    subject: "{{var:rule}}: {{var:summary}}",
    text:
      `{{var:summary}}\n\n${text.lines}Records: {{var:count}}\nContract: {{var:contract_address}}\nTokens: {{var:token_ids}}\n` +
      'Total price: {{var:total_price:"-"}} {{var:currency}}\nTransaction: {{var:transaction_hash}}\n' +
      "Block: {{var:block_number}}\nDate (UTC): {{var:transaction_date}}\n\nSent by chainmail watch (rule {{var:rule}}).",
    html:
      `${html.image}<p>{{var:summary}}</p><ul>${html.lines}<li>Records: {{var:count}}</li><li>Contract: {{var:contract_address}}</li>` +
      '<li>Tokens: {{var:token_ids}}</li><li>Total price: {{var:total_price:"-"}} {{var:currency}}</li>' +
      "<li>Transaction: {{var:transaction_hash}}</li><li>Block: {{var:block_number}}</li>" +
      "<li>Date (UTC): {{var:transaction_date}}</li></ul><p>Sent by chainmail watch (rule {{var:rule}}).</p>",
  };
}

/** retract: the follow-up of an email whose records a reorg removed (a transaction's: its hash and tokens). */
const RETRACT_DEFAULTS = {
  subject: "{{var:rule}}: retracted: {{var:summary}}",
  text:
    "A reorganisation of the chain removed what an earlier email of this rule reported:\n\n{{var:summary}}\n\n" +
    "Transaction: {{var:transaction_hash}}\nContract: {{var:contract_address}}\nTokens: {{var:token_ids}}\n" +
    "Block (no longer in the chain): {{var:block_number}}\n\nSent by chainmail watch (rule {{var:rule}}).",
  html:
    "<p>A reorganisation of the chain removed what an earlier email of this rule reported:</p><p>{{var:summary}}</p>" +
    "<ul><li>Transaction: {{var:transaction_hash}}</li><li>Contract: {{var:contract_address}}</li>" +
    "<li>Tokens: {{var:token_ids}}</li><li>Block (no longer in the chain): {{var:block_number}}</li></ul>" +
    "<p>Sent by chainmail watch (rule {{var:rule}}).</p>",
} as const;

/** max_per_hour: the records a clock hour's cap held back, in one digest sent when the hour ends. */
const OVERFLOW_DEFAULTS = {
  ...DIGEST_DEFAULTS,
  subject: "{{var:rule}}: {{var:count}} more records of the hour past max_per_hour",
  text: "{{var:rule}}: {{var:count}} more records past max_per_hour, {{var:first_date}} to {{var:last_date}} UTC\n\n{{var:items}}\n\nSent by chainmail watch.",
  html: "<p>{{var:rule}}: {{var:count}} more records past max_per_hour, {{var:first_date}} to {{var:last_date}} UTC</p><ul>{{var:items}}</ul><p>Sent by chainmail watch.</p>",
} as const;

/**
 * Which names each part may use, by mode and whether each mail is a transaction's (`unsubscribe_url`: the
 * recipient's one-click link, when there is one).
 */
function allowedNames(mode: "each" | "digest", part: Part, grouped: boolean): readonly string[] {
  if (part === "item_text" || part === "item_html") return RECORD_VARIABLES;
  if (part.startsWith("retract_")) return [...RECORD_VARIABLES, ...GROUP_VARIABLES, "unsubscribe_url"];
  if (mode === "digest") return [...DIGEST_VARIABLES, "unsubscribe_url"];
  return [...RECORD_VARIABLES, ...(grouped ? GROUP_VARIABLES : []), "unsubscribe_url"];
}

/**
 * The default templates end with the unsubscribe link when the message has one (a rule mailing one recipient, with
 * CHAINMAIL_PUBLIC_URL and CHAINMAIL_UNSUBSCRIBE_SECRET set); a template of one's own places `{{var:unsubscribe_url}}`.
 */
function withLink(
  message: Pick<EmailMessage, "TextPart" | "HTMLPart">,
  mail: Partial<Record<"text" | "html", string>>,
  url: string | undefined,
): Pick<EmailMessage, "TextPart" | "HTMLPart"> {
  if (!url) return message;
  const html = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return {
    TextPart: mail.text === undefined ? `${message.TextPart}\nUnsubscribe: ${url}` : message.TextPart,
    HTMLPart:
      mail.html === undefined ? `${message.HTMLPart}<p><a href="${html}">Unsubscribe</a></p>` : message.HTMLPart,
  };
}

/** `{{var:…}}` names in a template that have no default and that the rule's records cannot fill. */
export function templateProblems(mail: Mail, mode: "each" | "digest", grouped = false): Violation[] {
  const out: Violation[] = [];
  for (const part of PARTS) {
    const text = mail[part];
    if (text === undefined) continue;
    const allowed = allowedNames(mode, part, grouped);
    const unknown = [...new Set(substituteVariables(text, {}, { html: false }).missing)].filter(
      (name) => !allowed.includes(name),
    );
    if (unknown.length) {
      out.push({
        field: part,
        rule: `variables: ${allowed.join(", ")}`,
        message: `${part} uses unknown variable${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} (known: ${allowed.join(", ")}; or give a default: {{var:name:"…"}})`,
      });
    }
  }
  return out;
}

// A marker the HTML escaping leaves alone, replaced by the already-escaped item list afterwards.
const ITEMS_MARK = "\u0000items\u0000";

/**
 * A template filled in. A value the record lacks (a transfer's marketplace or price) is empty in `variables`: it is
 * absent, so its `{{var:name:"default"}}` applies, and without a default it renders empty.
 */
function fill(template: string, variables: Record<string, string>, html: boolean): string {
  const present = Object.fromEntries(Object.entries(variables).filter(([, value]) => value !== ""));
  const { text } = substituteVariables(template, present, { html, absent: "" });
  return html ? text.replace(ITEMS_MARK, variables.itemsHtml ?? "") : text;
}

/** Subjects are one line of at most 255 characters (Mailjet refuses longer ones). */
function subjectLine(text: string): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, " ").trim();
  return line.length > 255 ? `${line.slice(0, 254)}…` : line;
}

function envelope(rule: Rule, customId: string): Pick<EmailMessage, "From" | "To" | "Cc" | "Bcc" | "CustomID"> {
  return {
    From: rule.from,
    To: rule.mail.to,
    ...(rule.mail.cc?.length ? { Cc: rule.mail.cc } : {}),
    ...(rule.mail.bcc?.length ? { Bcc: rule.mail.bcc } : {}),
    CustomID: customId,
  };
}

/** `each`: the message for one record. */
export function eachMessage(
  rule: Rule,
  record: TransactionRecord,
  customId: string,
  unsubscribeUrl?: string,
  details?: TokenDetails,
): EmailMessage {
  const variables = recordVariables(record, rule.id, details);
  return singleMessage(rule, eachDefaults(variables), variables, customId, unsubscribeUrl);
}

/** `group: "transaction"`: the message for one transaction's records, oldest first. */
export function transactionMessage(
  rule: Rule,
  records: readonly TransactionRecord[],
  customId: string,
  unsubscribeUrl?: string,
  details?: readonly TokenDetails[],
): EmailMessage {
  const variables = groupVariables(records, rule.id, details);
  return singleMessage(rule, groupDefaults(variables), variables, customId, unsubscribeUrl);
}

/** `retract`: the follow-up of an email whose records (oldest first) a reorg removed. */
export function retractionMessage(
  rule: Rule,
  records: readonly TransactionRecord[],
  customId: string,
  unsubscribeUrl?: string,
  details?: readonly TokenDetails[],
): EmailMessage {
  const group = groupVariables(records, rule.id, details);
  const hashes = [...new Set(records.map((r) => recordVariables(r, rule.id).transaction_hash))];
  // One record reads as its own email did; one transaction's as a transaction's; a digest's names every transaction.
  const variables =
    records.length === 1
      ? { ...group, summary: recordVariables(records[0]!, rule.id, details?.[0]).summary ?? "" }
      : hashes.length > 1
        ? { ...group, summary: group.summary!.replace(/ in \S+$/, ""), transaction_hash: hashes.join(", ") }
        : group;
  const own = {
    subject: rule.mail.retract_subject,
    text: rule.mail.retract_text,
    html: rule.mail.retract_html,
  };
  return singleMessage(rule, RETRACT_DEFAULTS, variables, customId, unsubscribeUrl, own);
}

/** A message with one set of variables (a record's, or a transaction's): the rule's parts over `defaults`. */
function singleMessage(
  rule: Rule,
  defaults: { subject: string; text: string; html: string },
  recordOrGroup: Record<string, string>,
  customId: string,
  unsubscribeUrl: string | undefined,
  own: Partial<Record<"subject" | "text" | "html", string | undefined>> = rule.mail,
): EmailMessage {
  const variables = { ...recordOrGroup, unsubscribe_url: unsubscribeUrl ?? "" };
  const given = Object.fromEntries(Object.entries(own).filter(([, v]) => v !== undefined)) as Partial<
    Record<"subject" | "text" | "html", string>
  >;
  const template = {
    ...defaults,
    subject: given.subject ?? defaults.subject,
    text: given.text ?? defaults.text,
    html: given.html ?? defaults.html,
  };
  return {
    ...envelope(rule, customId),
    Subject: subjectLine(fill(template.subject, variables, false)),
    ...withLink(
      { TextPart: fill(template.text, variables, false), HTMLPart: fill(template.html, variables, true) },
      given,
      unsubscribeUrl,
    ),
  };
}

/**
 * max_per_hour: the records a clock hour's cap held back, oldest first: the rule's digest template (an each rule's
 * item_text / item_html; a digest rule's whole template) over the hour's defaults.
 */
export function overflowMessage(
  rule: Rule,
  records: readonly TransactionRecord[],
  customId: string,
  unsubscribeUrl?: string,
  details?: readonly TokenDetails[],
): EmailMessage {
  const own = definedParts(rule.mail);
  const parts = rule.mode === "digest" ? own : { item_text: own.item_text, item_html: own.item_html };
  return digestMessage(rule, records, customId, unsubscribeUrl, { ...OVERFLOW_DEFAULTS, ...defined(parts) }, details);
}

const defined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;

/** `digest`: one message listing several records, oldest first. */
export function digestMessage(
  rule: Rule,
  records: readonly TransactionRecord[],
  customId: string,
  unsubscribeUrl?: string,
  template: Record<"subject" | "text" | "html" | "item_text" | "item_html", string> = {
    ...DIGEST_DEFAULTS,
    ...definedParts(rule.mail),
  },
  details?: readonly TokenDetails[],
): EmailMessage {
  const each = records.map((record, i) => recordVariables(record, rule.id, details?.[i]));
  const first = positionOf(records[0]!);
  const last = positionOf(records[records.length - 1]!);
  const variables: Record<string, string> = {
    rule: rule.id,
    count: String(records.length),
    // "1 new record", "2 new records": templates have no conditionals.
    plural_s: records.length === 1 ? "" : "s",
    first_date: first.date,
    last_date: last.date,
    first_block: first.block === undefined ? "" : String(first.block),
    last_block: last.block === undefined ? "" : String(last.block),
    unsubscribe_url: unsubscribeUrl ?? "",
  };
  // The default items name the token where its name is known; a template of one's own is used as it is.
  const named = (part: "item_text" | "item_html", v: Record<string, string>) =>
    rule.mail[part] === undefined && v.token_name
      ? template[part].replace("{{var:summary}}", "{{var:token_name}}: {{var:summary}}")
      : template[part];
  const itemsText = each.map((v) => fill(named("item_text", v), v, false)).join("\n");
  const itemsHtml = each.map((v) => fill(named("item_html", v), v, true)).join("\n");
  return {
    ...envelope(rule, customId),
    Subject: subjectLine(fill(template.subject, { ...variables, items: "" }, false)),
    ...withLink(
      {
        TextPart: fill(template.text, { ...variables, items: itemsText }, false),
        HTMLPart: fill(template.html, { ...variables, items: ITEMS_MARK, itemsHtml }, true),
      },
      rule.mail,
      unsubscribeUrl,
    ),
  };
}

const PARTS = [
  "subject",
  "text",
  "html",
  "item_text",
  "item_html",
  "retract_subject",
  "retract_text",
  "retract_html",
] as const satisfies readonly Part[];

function definedParts(mail: Mail): Partial<Record<Part, string>> {
  return Object.fromEntries(PARTS.filter((part) => mail[part] !== undefined).map((part) => [part, mail[part]!]));
}
