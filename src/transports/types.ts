/**
 * Where `email-send` delivers. Every transport takes the same validated request and answers with the same
 * per-message results, in input order, so a user can switch providers without touching a workflow.
 */
import type { ErrorPayload } from "../core/errors.js";
import type { RunContext } from "../core/node.js";
import type { RawResponse } from "../schemas/common.js";
import type { EmailParams, EmailRequest, MessagesSent } from "../schemas/email.js";

export interface SendOutcome {
  /** One result per input message, in input order; present whenever anything was attempted. */
  "messages sent"?: MessagesSent;
  /** The upstream's raw answer (the last one, when the batch took several calls). */
  response?: RawResponse;
  /** A failure of the whole request, or of part of a split batch (`details` says which chunks). */
  error?: ErrorPayload;
}

export interface MailTransport {
  readonly name: string;
  send(request: EmailRequest, params: EmailParams, ctx: RunContext): Promise<SendOutcome>;
}
