/** Picks the mail transport the configuration names (EMAIL_TRANSPORT). Loaded on demand. */
import type { Config } from "../core/config.js";
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
