/**
 * What `email-send` does around any transport: before the send, recipients on the suppression list are taken out
 * (each answered with an error entry `suppressed`: the reason and since when), a message left without a `To` is
 * not handed over at all; after it, every recipient that got a MessageID is recorded as `sent` (`queued` for the
 * outbox) with the message's CustomID and EventPayload, so Mailjet's events find it.
 */
import { MessageErrorCode } from "../core/errors.js";
import { toDecimal } from "../core/json.js";
import type { SuppressionLookup } from "../core/node.js";
import type { EmailMessage, EmailRequest, ErrorEntry, MessageResult } from "../schemas/email.js";
import { applyGlobals, isObject } from "../transports/message-rules.js";
import { errorEntry, notSentResult } from "../transports/outcome.js";
import type { SendOutcome } from "../transports/types.js";
import type { SendRecord } from "./store.js";
import { suppressionKey } from "./suppression-key.js";

type Found = { sender: string; reason: string; since: string };

const LISTS = ["To", "Cc", "Bcc"] as const;

export interface Held {
  /** What goes to the transport: the messages with someone left to send to, without suppressed recipients. */
  request: EmailRequest;
  /** Input index of each message handed over, in order. */
  kept: number[];
  /** Per input index: the entries of the recipients taken out. */
  entries: Map<number, ErrorEntry[]>;
  total: number;
}

type Loose = Record<string, unknown>;

const senderOf = (message: Loose, globals: Loose | undefined): string => {
  const from = applyGlobals(globals, message).From;
  return isObject(from) && typeof from.Email === "string" ? from.Email : "";
};

function suppressedEntry(at: string, email: string, found: Found): ErrorEntry {
  const who = found.sender === "*" ? "every sender" : found.sender;
  return errorEntry(
    MessageErrorCode.SUPPRESSED,
    `${at} = ${JSON.stringify(email)} is on the suppression list of ${who} (${found.reason} since ${found.since}); not sent to it. Pass SendToSuppressed: true to send anyway, or remove it with \`chainmail mail suppressions remove\`.`,
    [at],
    { Reason: found.reason, Since: found.since },
  );
}

/** The lists of `Globals` Mailjet adds to every message (it refuses a `To` there). */
const GLOBAL_LISTS = ["Cc", "Bcc"] as const;

/** `Globals.Cc` or `Globals.Bcc` (own keys only); none when it is not a list. */
function globalList(globals: Loose | undefined, list: (typeof GLOBAL_LISTS)[number]): unknown[] {
  const entries = globals && Object.hasOwn(globals, list) ? globals[list] : undefined;
  return Array.isArray(entries) ? entries : [];
}

const emailOf = (entry: unknown): string | undefined =>
  isObject(entry) && typeof entry.Email === "string" ? entry.Email : undefined;

/** The suppression list asked once per sender, about every recipient of its messages (Globals' Cc and Bcc too). */
async function lookUp(
  store: SuppressionLookup,
  messages: readonly EmailMessage[],
  globals: Loose | undefined,
): Promise<Map<string, ReadonlyMap<string, Found>>> {
  const shared = GLOBAL_LISTS.flatMap((list) => globalList(globals, list).flatMap((r) => emailOf(r) ?? []));
  const bySender = new Map<string, string[]>();
  for (const message of messages) {
    const sender = suppressionKey(senderOf(message, globals));
    const emails = bySender.get(sender) ?? [...shared];
    for (const list of LISTS) for (const r of message[list] ?? []) emails.push(r.Email);
    bySender.set(sender, emails);
  }
  const found = new Map<string, ReadonlyMap<string, Found>>();
  for (const [sender, emails] of bySender) found.set(sender, await store.suppressed(sender, emails));
  return found;
}

/** Takes suppressed recipients out of `request` (nothing when it says `SendToSuppressed`). */
export async function holdSuppressed(store: SuppressionLookup | undefined, request: EmailRequest): Promise<Held> {
  const { SendToSuppressed: override, ...forwarded } = request;
  const messages = request.Messages;
  const all = messages.map((_, i) => i);
  if (!store || override === true) return { request: forwarded, kept: all, entries: new Map(), total: messages.length };
  const globals = isObject(request.Globals) ? request.Globals : undefined;
  const found = await lookUp(store, messages, globals);
  const suppressedFor = (message: EmailMessage) => found.get(suppressionKey(senderOf(message, globals)))!;
  // Globals' Cc and Bcc go to every message: when one of them is held back from some message, every message takes
  // them as its own (first, where Mailjet puts them) and Globals keeps neither.
  const fold = messages.some((message) =>
    GLOBAL_LISTS.some((list) =>
      globalList(globals, list).some((r) => suppressedFor(message).has(suppressionKey(emailOf(r) ?? ""))),
    ),
  );
  const kept: number[] = [];
  const out: EmailMessage[] = [];
  const entries = new Map<number, ErrorEntry[]>();
  messages.forEach((message, i) => {
    const { copy, held } = withoutSuppressed(message, suppressedFor(message), fold ? globals : undefined);
    if (held.length) entries.set(i, held);
    if (copy.To.length === 0) return;
    kept.push(i);
    out.push(copy);
  });
  const shared = fold && globals ? { Globals: withoutLists(globals) } : {};
  return { request: { ...forwarded, ...shared, Messages: out }, kept, entries, total: messages.length };
}

/** One message without its suppressed recipients; with `globals`, Globals' Cc and Bcc become its own first. */
function withoutSuppressed(
  message: EmailMessage,
  suppressed: ReadonlyMap<string, Found>,
  globals: Loose | undefined,
): { copy: EmailMessage; held: ErrorEntry[] } {
  if (suppressed.size === 0 && !globals) return { copy: message, held: [] };
  const copy: Loose = { ...message };
  const held: ErrorEntry[] = [];
  const keep = (at: string) => (r: unknown, j: number) => {
    const email = emailOf(r);
    const hit = email === undefined ? undefined : suppressed.get(suppressionKey(email));
    if (hit) held.push(suppressedEntry(`${at}[${j}].Email`, email!, hit));
    return !hit;
  };
  for (const list of LISTS) {
    const shared = list === "To" ? [] : globalList(globals, list).filter(keep(`Globals.${list}`));
    const own = message[list]?.filter(keep(list));
    if (own || shared.length) copy[list] = [...shared, ...(own ?? [])];
  }
  return { copy: copy as EmailMessage, held };
}

/** Globals without the lists every message now holds itself. */
const withoutLists = (globals: Loose): Loose =>
  Object.fromEntries(Object.entries(globals).filter(([key]) => !(GLOBAL_LISTS as readonly string[]).includes(key)));

/** The transport's outcome for the kept messages as the outcome of the whole input. */
export function mergeHeld(held: Held, outcome: SendOutcome | undefined): SendOutcome {
  if (held.entries.size === 0 && outcome) return outcome;
  const sent = outcome?.["messages sent"]?.Messages;
  const results: MessageResult[] = Array.from({ length: held.total }, (_, i) => ({
    Status: "error",
    Errors: held.entries.get(i) ?? [],
  }));
  held.kept.forEach((input, k) => {
    const result = sent?.[k];
    const extra = held.entries.get(input) ?? [];
    if (!result) {
      const notSent = notSentResult("the batch failed before it (see `error`)");
      results[input] = { ...notSent, Errors: [...notSent.Errors!, ...extra] };
      return;
    }
    // Like SMTP's refused recipients: an error that still lists those who got it.
    results[input] = extra.length
      ? { ...result, Status: "error", Errors: [...(result.Errors ?? []), ...extra] }
      : result;
  });
  const merged: SendOutcome = { ...outcome };
  if (sent || held.entries.size > 0) merged["messages sent"] = { Messages: results };
  if (outcome?.error) merged.error = remapIndexes(outcome.error, held.kept);
  return merged;
}

/** `details.messages` of a batch error names indexes of what was handed over: named again by input index. */
function remapIndexes(error: NonNullable<SendOutcome["error"]>, kept: number[]): NonNullable<SendOutcome["error"]> {
  const messages = error.details.messages;
  if (!isObject(messages)) return error;
  const remapped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(messages))
    remapped[key] = Array.isArray(value) ? value.map((i) => (typeof i === "number" ? (kept[i] ?? i) : i)) : value;
  return { ...error, details: { ...error.details, messages: remapped } };
}

/** One record per recipient that got a MessageID (SandboxMode's 0 is none). */
export function sendRecords(held: Held, outcome: SendOutcome, transport: string): SendRecord[] {
  const results = outcome["messages sent"]?.Messages;
  if (!results) return [];
  const globals = isObject(held.request.Globals) ? held.request.Globals : undefined;
  const records: SendRecord[] = [];
  held.kept.forEach((input, k) => {
    const message = applyGlobals(globals, held.request.Messages[k]! as Loose) as EmailMessage;
    const result = results[input];
    if (!result) return;
    for (const list of LISTS) {
      for (const r of result[list] ?? []) {
        const id = toDecimal(r.MessageID);
        if (id === "0") continue;
        records.push({
          messageId: id,
          messageUuid: r.MessageUUID || undefined,
          customId: typeof message.CustomID === "string" ? message.CustomID : undefined,
          email: r.Email,
          sender: typeof message.From?.Email === "string" ? message.From.Email : "",
          transport,
          payload: typeof message.EventPayload === "string" ? message.EventPayload : undefined,
          fact: transport === "outbox" ? "queued" : "sent",
        });
      }
    }
  });
  return records;
}
