/** Picks the mail transport the configuration names (EMAIL_TRANSPORT). Loaded on demand. */
import type { Config } from "../core/config.js";
import type { Violation } from "../core/errors.js";
import { mailjetViolations } from "./mailjet/rules.js";
import type { MailTransport } from "./types.js";

export async function resolveMailTransport(config: Config): Promise<MailTransport> {
  switch (config.emailTransport) {
    case "mailjet":
      return (await import("./mailjet/transport.js")).mailjetTransport(config);
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
