/** The outbox mail transport (placeholder until its issue lands). */
import type { Config } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import type { MailTransport } from "../types.js";

export function outboxTransport(_config: Config): MailTransport {
  throw new ChainmailError("INTERNAL", "EMAIL_TRANSPORT=outbox is not available in this build.");
}
