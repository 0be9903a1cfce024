/**
 * EMAIL_TRANSPORT=outbox: renders each message exactly as the smtp transport would and stores it under
 * OUTBOX_DIR (default ./data/outbox) instead of sending it; `chainmail outbox list|show` read it back.
 * SandboxMode validates without storing. Results have Mailjet's shape; MessageHref is the .eml's file URL.
 */
import type { Config } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import type { EmailParams, EmailRequest, MessageResult } from "../../schemas/email.js";
import { renderEach } from "../mime/render.js";
import { successEntry } from "../mime/results.js";
import { batchError, cancelledError, failedOutcome, messageStatuses, notSentResult } from "../outcome.js";
import type { MailTransport, SendOutcome } from "../types.js";
import { fileUrl, listOutbox, newOutboxId, type OutboxEntry, openOutbox, recoverOnce, storeMessage } from "./store.js";

export function outboxTransport(config: Config): MailTransport {
  const dir = config.outboxDir;
  return {
    name: "outbox",
    async send(request: EmailRequest, _params: EmailParams, ctx): Promise<SendOutcome> {
      const results: MessageResult[] = [];
      let failure: { index: number; error: Error } | undefined;
      let opened: Promise<void> | undefined;
      let cancelled = false;
      for await (const r of renderEach(request)) {
        if ("errors" in r) {
          results.push({ Status: "error", Errors: r.errors });
          continue;
        }
        if (request.SandboxMode === true) {
          results.push(successEntry(r.message, { href: () => "", sandbox: true }));
          continue;
        }
        if (failure) {
          results.push(notStored(failure.error));
          continue;
        }
        if (ctx.signal?.aborted) {
          cancelled = true;
          results.push(notSentResult("the send was cancelled"));
          continue;
        }
        const id = newOutboxId();
        const entry = successEntry(r.message, { href: () => fileUrl(dir, `${id}.eml`) });
        const recipients = [...entry.To!, ...entry.Cc!, ...entry.Bcc!].map(({ Email, MessageUUID, MessageID }) => ({
          Email,
          MessageUUID,
          MessageID,
        }));
        try {
          opened ??= openOutbox(dir);
          await opened;
          await storeMessage(dir, id, r.message, recipients);
          results.push(entry);
        } catch (err) {
          failure = { index: r.index, error: err as Error };
          results.push(notStored(failure.error));
        }
      }
      const messages = messageStatuses(results);
      if (cancelled && !failure) return failedOutcome(results, cancelledError(messages, results.length));
      if (!failure) return { "messages sent": { Messages: results } };
      const reason = failure.error.message;
      const hint =
        "Check that OUTBOX_DIR is writable and has space; the messages in details.messages.not_sent can be sent again.";
      const cause = new ChainmailError(
        "STORAGE_ERROR",
        `Stored ${messages.sent.length} of ${results.length} messages in the outbox ${dir}, then writing message ${failure.index} failed: ${reason}.`,
        { hint },
      );
      const error = batchError(cause, messages, { error: cause.shortMessage, hint }, { outbox: dir });
      ctx.logger?.error({ transport: "outbox", outbox: dir, reason }, "outbox write failed");
      return failedOutcome(results, error);
    },
    // The index line is the outbox's commit: a message with no line was never stored (its partial file, left by a
    // sender that died, is removed before it is sent again).
    async lookup(customIds) {
      await recoverOnce(dir);
      const byCustomId = new Map<string, OutboxEntry>();
      for (const entry of await listOutbox(dir)) if (entry.custom_id) byCustomId.set(entry.custom_id, entry);
      return new Map(
        customIds.map((id) => {
          const entry = byCustomId.get(id);
          return [id, entry ? storedResult(dir, entry) : notSentResult("it is not in the outbox")];
        }),
      );
    },
  };
}

/** The success entry a stored message got when it was sent, rebuilt from its index line. */
function storedResult(dir: string, entry: OutboxEntry): MessageResult {
  const href = fileUrl(dir, entry.file);
  const of = (emails: string[]) =>
    emails.map((email) => {
      const r = entry.recipients.find((x) => x.Email.toLowerCase() === email.toLowerCase());
      return { Email: email, MessageUUID: r?.MessageUUID ?? "", MessageID: r?.MessageID ?? 0, MessageHref: href };
    });
  const result: MessageResult & { CustomID: string } = {
    Status: "success",
    CustomID: entry.custom_id,
    To: of(entry.to),
    Cc: of(entry.cc),
    Bcc: of(entry.bcc),
  };
  return result;
}

function notStored(error: Error): MessageResult {
  return notSentResult(`writing to the outbox failed (${error.message})`);
}
