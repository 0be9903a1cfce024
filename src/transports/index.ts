/** Picks the mail transport the configuration names (EMAIL_TRANSPORT). Loaded on demand. */
import type { Config } from "../core/config.js";
import type { Violation } from "../core/errors.js";
import { mailjetViolations } from "./mailjet/rules.js";
import type { MailTransport } from "./types.js";

export async function resolveMailTransport(config: Config): Promise<MailTransport> {
  switch (config.emailTransport) {
    case "mailjet":
      return (await loadMailjet()).mailjetTransport(config);
    case "smtp":
      return (await import("./smtp/transport.js")).smtpTransport(config);
    case "outbox":
      return (await import("./outbox/transport.js")).outboxTransport(config);
  }
}

let mailjet: Promise<typeof import("./mailjet/transport.js")> | undefined;
const loadMailjet = () => {
  mailjet ??= import("./mailjet/transport.js");
  return mailjet;
};

/**
 * Starts loading the configured transport's module while the node validates its input (10,000 messages take
 * tens of milliseconds), so that its files are read by then: the default one only, the others load their own
 * dependencies (nodemailer) and are left to the send.
 */
export function preloadMailTransport(config: Config): void {
  if (config.emailTransport === "mailjet") loadMailjet().catch(() => {});
}

/** Input rules of the configured transport alone, on top of the message rules every transport shares. */
export function transportViolations(config: Config, params: unknown, request: unknown): Violation[] {
  return config.emailTransport === "mailjet" ? mailjetViolations(params, request) : [];
}
