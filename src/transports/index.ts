/**
 * Picks the mail transport the configuration names (EMAIL_TRANSPORT) from the list of transports (catalog.ts). The
 * default one, Mailjet, is loaded with this module: its few files import nothing that is not loaded already. Loaded on demand, it was still being read after
 * a 10,000-message batch had been checked, whose validation holds the thread, so the first call waited 20-50 ms
 * for it. smtp and outbox load nodemailer and stay on demand.
 */
import type { Config } from "../core/config.js";
import type { Violation } from "../core/errors.js";
import type { EmailParams } from "../schemas/email.js";
import { mailTransports } from "./catalog.js";
import type { TransportDefinition } from "./definition.js";
import type { MailTransport } from "./types.js";

function definitionOf(config: Config): TransportDefinition {
  const definition = mailTransports.find((transport) => transport.id === config.emailTransport);
  // The settings schema admits only known values: this is a transport added to the schema and not to the list.
  if (!definition)
    throw new Error(`EMAIL_TRANSPORT=${config.emailTransport} has no definition in transports/catalog.ts`);
  return definition;
}

export async function resolveMailTransport(config: Config): Promise<MailTransport> {
  return definitionOf(config).open(config);
}

/** The operator's login for a caller who gives no `params`, from the configured transport's definition. */
export function operatorParams(config: Config): EmailParams | undefined {
  return definitionOf(config).operatorParams(config);
}

/** Input rules of the configured transport alone, on top of the message rules every transport shares. */
export function transportViolations(config: Config, params: unknown, request: unknown): Violation[] {
  return definitionOf(config).violations?.(params, request) ?? [];
}
