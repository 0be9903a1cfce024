/**
 * Picks the mail transport the configuration names (EMAIL_TRANSPORT). The default one, Mailjet, is loaded with this
 * module: its few files import nothing that is not loaded already. Loaded on demand, it was still being read after
 * a 10,000-message batch had been checked, whose validation holds the thread, so the first call waited 20-50 ms
 * for it. smtp and outbox load nodemailer and stay on demand.
 */
import type { Config } from "../core/config.js";
import type { Violation } from "../core/errors.js";
import { mailjetViolations } from "./mailjet/rules.js";
import { mailjetTransport } from "./mailjet/transport.js";
import type { MailTransport } from "./types.js";

export async function resolveMailTransport(config: Config): Promise<MailTransport> {
  switch (config.emailTransport) {
    case "mailjet":
      return mailjetTransport(config);
    case "smtp":
      return (await import("./smtp/transport.js")).smtpTransport(config);
    case "outbox":
      return (await import("./outbox/transport.js")).outboxTransport(config);
  }
}

/** Input rules of the configured transport alone, on top of the message rules every transport shares. */
export function transportViolations(config: Config, params: unknown, request: unknown): Violation[] {
  return config.emailTransport === "mailjet" ? mailjetViolations(params, request) : [];
}
