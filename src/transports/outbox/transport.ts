/**
 * EMAIL_TRANSPORT=outbox: renders each message exactly as the smtp transport would and stores it under
 * OUTBOX_DIR (default ./data/outbox) instead of sending it; `chainmail outbox list|show` read it back.
 * SandboxMode validates without storing. Results have Mailjet's shape; MessageHref is the .eml's file URL.
 */
import type { Config } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import type { RunContext } from "../../core/node.js";
import type { EmailParams, EmailRequest, MessageResult } from "../../schemas/email.js";
import { type RenderedMessage, renderEach } from "../mime/render.js";
import { successEntry } from "../mime/results.js";
import { batchError, cancelledError, failedOutcome, messageStatuses, notSentResult } from "../outcome.js";
import type { MailTransport, SendOutcome } from "../types.js";
import { fileUrl, listOutbox, newOutboxId, type OutboxEntry, openOutbox, recoverOnce, storeMessage } from "./store.js";

export function outboxTransport(config: Config): MailTransport {
  const dir = config.outboxDir;
  return {
    name: "outbox",
    async send(request: EmailRequest, _params: EmailParams, ctx): Promise<SendOutcome> {
      const batch = new OutboxBatch(dir, ctx);
      for await (const r of renderEach(request)) {
        if ("errors" in r) batch.results.push({ Status: "error", Errors: r.errors });
        else if (request.SandboxMode === true)
          batch.results.push(successEntry(r.message, { href: () => "", sandbox: true }));
        else await batch.store(r.message);
      }
      return batch.outcome();
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

/** One batch written to the outbox: after a failed write nothing more is stored. */
class OutboxBatch {
  readonly results: MessageResult[] = [];
  private failure: { index: number; error: Error } | undefined;
  private opened: Promise<void> | undefined;
  private cancelled = false;

  constructor(
    private readonly dir: string,
    private readonly ctx: RunContext,
  ) {}

  async store(message: RenderedMessage): Promise<void> {
    if (this.failure) return void this.results.push(notStored(this.failure.error));
    if (this.ctx.signal?.aborted) {
      this.cancelled = true;
      return void this.results.push(notSentResult("the send was cancelled"));
    }
    const id = newOutboxId();
    const entry = successEntry(message, { href: () => fileUrl(this.dir, `${id}.eml`) });
    const recipients = [...entry.To!, ...entry.Cc!, ...entry.Bcc!].map(({ Email, MessageUUID, MessageID }) => ({
      Email,
      MessageUUID,
      MessageID,
    }));
    try {
      this.opened ??= openOutbox(this.dir);
      await this.opened;
      await storeMessage(this.dir, id, message, recipients);
      this.results.push(entry);
    } catch (err) {
      this.failure = { index: message.index, error: err as Error };
      this.results.push(notStored(this.failure.error));
    }
  }

  outcome(): SendOutcome {
    const { results, failure, dir } = this;
    const messages = messageStatuses(results);
    if (this.cancelled && !failure) return failedOutcome(results, cancelledError(messages, results.length));
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
    this.ctx.logger?.error({ transport: "outbox", outbox: dir, reason }, "outbox write failed");
    return failedOutcome(results, error);
  }
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
