/**
 * Per-message results in Mailjet's shape, for transports that assign ids themselves: every recipient gets a
 * MessageUUID and a 64-bit numeric MessageID (like Mailjet's, beyond 2^53, so kept as a bigint).
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { ExactInteger } from "../../core/json.js";
import type { MessageResult } from "../../schemas/email.js";
import type { RenderedMessage } from "./render.js";

const EPOCH = 1_577_836_800_000n; // 2020-01-01T00:00:00Z: 41 bits of milliseconds last until 2089.
let sequence = randomBytes(3).readUIntBE(0, 3);

/** A new 64-bit id: milliseconds since 2020 in the high bits, a per-process sequence (random start) below. */
export function newMessageNumber(): bigint {
  sequence = (sequence + 1) & 0x3fffff;
  return ((BigInt(Date.now()) - EPOCH) << 22n) | BigInt(sequence);
}

export interface RecipientResult {
  Email: string;
  MessageUUID: string;
  MessageID: ExactInteger;
  MessageHref: string;
}

/**
 * The success entry of a message. `href` says where each recipient's copy can be looked up; `sandbox` gives
 * Mailjet's SandboxMode values (empty UUID, MessageID 0, empty href). Only `accepted` recipients are listed.
 */
export function successEntry(
  message: RenderedMessage,
  options: { href: (id: bigint) => string; sandbox?: boolean; accepted?: ReadonlySet<string> },
): MessageResult & { CustomID: string } {
  const results = (emails: string[]): RecipientResult[] =>
    emails
      .filter((email) => !options.accepted || options.accepted.has(email.toLowerCase()))
      .map((Email) => {
        if (options.sandbox) return { Email, MessageUUID: "", MessageID: 0, MessageHref: "" };
        const id = newMessageNumber();
        return { Email, MessageUUID: randomUUID(), MessageID: id, MessageHref: options.href(id) };
      });
  return {
    Status: "success",
    CustomID: message.customId,
    To: results(message.recipients.To),
    Cc: results(message.recipients.Cc),
    Bcc: results(message.recipients.Bcc),
  };
}
