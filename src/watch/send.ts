/**
 * The email side of the watch: journalled messages go out through the `email-send` node, and each one's result
 * decides its journal state. After a crash, messages whose send may have happened are looked up in the
 * transport (outbox index, SMTP journal, Mailjet's message history) instead of being sent again.
 */
import type { Config } from "../core/config.js";
import type { ErrorPayload } from "../core/errors.js";
import { type Logger, runNode } from "../core/node.js";
import { emailSend } from "../nodes/index.js";
import type { EmailParams, MessageResult } from "../schemas/email.js";
import { resolveMailTransport, operatorParams as transportOperatorParams } from "../transports/index.js";
import {
  deliveryUnknownResult,
  errorEntry,
  type MessageStatuses,
  messageStatuses,
  notSentResult,
} from "../transports/outcome.js";
import { NO_LOGIN } from "../transports/types.js";
import type { Mail, MailResult } from "./store.js";

export interface SendContext {
  config: Config;
  signal?: AbortSignal | undefined;
  logger?: Logger | undefined;
}

/**
 * A message's journal state from its result, by the rule every transport follows: reached the provider → sent;
 * may have → unknown (never resent automatically); surely not, and safe to send as is (StatusCode >= 500,
 * Mailjet's own safe-retry rule) → retry; refused for what it is → failed.
 */
export function stateOf(result: MessageResult): MailResult["state"] {
  const { sent, unknown } = messageStatuses([result]);
  if (sent.length) return "sent";
  if (unknown.length) return "unknown";
  return result.Errors?.length && result.Errors.every((e) => e.StatusCode >= 500) ? "retry" : "failed";
}

/** Sends the messages in one `email-send` run; one result per mail, in order. */
export async function sendMails(mails: readonly Mail[], ctx: SendContext): Promise<MailResult[]> {
  const out = await runNode(emailSend, { request: { Messages: mails.map((m) => m.message) } }, ctx);
  const results = out["messages sent"]?.Messages;
  if (results?.length === mails.length) {
    return mails.map((mail, i) => ({ customId: mail.customId, state: stateOf(results[i]!), result: results[i]! }));
  }
  return mails.map((mail, i) => wholeFailure(mail, i, out.error!));
}

/** A send that failed as a whole: `details.messages` says which messages may have gone out. */
function wholeFailure(mail: Mail, index: number, error: ErrorPayload): MailResult {
  if (error.details.code === "invalid_input") {
    const result: MessageResult = {
      Status: "error",
      Errors: [errorEntry("invalid_input", `email-send refused the message: ${error.error}`, [])],
    };
    return { customId: mail.customId, state: "failed", result };
  }
  const statuses = error.details.messages as MessageStatuses | undefined;
  if (statuses?.unknown.includes(index)) {
    return { customId: mail.customId, state: "unknown", result: deliveryUnknownResult(error.error) };
  }
  return { customId: mail.customId, state: "retry", result: notSentResult(error.error) };
}

/** The credentials the operator configured, as email-send would use them without `params`. */
function operatorParams(config: Config): EmailParams {
  return transportOperatorParams(config) ?? NO_LOGIN;
}

/** What became of messages journalled before a crash, asked of the transport. Throws when it cannot look. */
export async function resolveMails(mails: readonly Mail[], ctx: SendContext): Promise<MailResult[]> {
  const transport = await resolveMailTransport(ctx.config);
  const found = await transport.lookup(
    mails.map((m) => m.customId),
    operatorParams(ctx.config),
    ctx,
  );
  return mails.map((mail) => {
    const result = found.get(mail.customId) ?? deliveryUnknownResult("the transport did not say");
    return { customId: mail.customId, state: stateOf(result), result };
  });
}
