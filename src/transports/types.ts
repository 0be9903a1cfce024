/**
 * Where `email-send` delivers. Every transport takes the same validated request and answers with the same
 * per-message results, in input order, so a user can switch providers without touching a workflow.
 */
import type { ErrorPayload } from "../core/errors.js";
import type { RunContext } from "../core/node.js";
import type { RawResponse } from "../schemas/common.js";
import type { EmailParams, EmailRequest, MessageResult, MessagesSent } from "../schemas/email.js";

export interface SendOutcome {
  /** One result per input message, in input order; present whenever anything was attempted. */
  "messages sent"?: MessagesSent;
  /** The upstream's raw answer (the last one, when the batch took several calls). */
  response?: RawResponse;
  /** A failure of the whole request or of part of the batch; `details.messages` says which messages (outcome.ts). */
  error?: ErrorPayload;
}

export interface MailTransport {
  readonly name: string;
  send(request: EmailRequest, params: EmailParams, ctx: RunContext): Promise<SendOutcome>;
  /**
   * What became of messages handed over earlier, by their CustomID (recovery after a crash between a send and
   * its bookkeeping): for each id the result the send gave, or a `chainmail-not-sent` entry when the transport
   * can tell it never went out, or `chainmail-delivery-unknown` when it cannot tell. Throws when it cannot look.
   */
  lookup(customIds: readonly string[], params: EmailParams, ctx: RunContext): Promise<Map<string, MessageResult>>;
}

/**
 * The `params` the email-send node fills in for the smtp and outbox transports when the caller gave none (the
 * `params` port requires both fields): smtp then logs in with SMTP_URL's login, outbox needs none.
 */
export const NO_LOGIN = { "user id": "-", password: "-" } as const satisfies EmailParams;

export function isNoLogin(params: Partial<EmailParams>): boolean {
  return params["user id"] === NO_LOGIN["user id"] && params.password === NO_LOGIN.password;
}
