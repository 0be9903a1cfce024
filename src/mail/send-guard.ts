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

/** Takes suppressed recipients out of `request` (nothing when it says `SendToSuppressed`). */
export async function holdSuppressed(store: SuppressionLookup | undefined, request: EmailRequest): Promise<Held> {
  const { SendToSuppressed: override, ...forwarded } = request;
  const messages = request.Messages;
  const all = messages.map((_, i) => i);
  if (!store || override === true) return { request: forwarded, kept: all, entries: new Map(), total: messages.length };
  const globals = isObject(request.Globals) ? request.Globals : undefined;
  const bySender = new Map<string, string[]>();
  for (const message of messages) {
    const sender = senderOf(message, globals).toLowerCase();
    const emails = bySender.get(sender) ?? [];
    for (const list of LISTS) for (const r of message[list] ?? []) emails.push(r.Email);
    bySender.set(sender, emails);
  }
  const found = new Map<string, ReadonlyMap<string, Found>>();
  for (const [sender, emails] of bySender) found.set(sender, await store.suppressed(sender, emails));
  const kept: number[] = [];
  const out: EmailMessage[] = [];
  const entries = new Map<number, ErrorEntry[]>();
  messages.forEach((message, i) => {
    const suppressed = found.get(senderOf(message, globals).toLowerCase())!;
    if (suppressed.size === 0) {
      kept.push(i);
      out.push(message);
      return;
    }
    const copy: Loose = { ...message };
    const held: ErrorEntry[] = [];
    for (const list of LISTS) {
      const recipients = message[list];
      if (!recipients) continue;
      copy[list] = recipients.filter((r, j) => {
        const hit = suppressed.get(r.Email.trim().toLowerCase());
        if (hit) held.push(suppressedEntry(`${list}[${j}].Email`, r.Email, hit));
        return !hit;
      });
    }
    if (held.length) entries.set(i, held);
    if ((copy.To as unknown[]).length === 0) return;
    kept.push(i);
    out.push(copy as EmailMessage);
  });
  return { request: { ...forwarded, Messages: out }, kept, entries, total: messages.length };
}

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
