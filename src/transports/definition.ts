/** What one mail transport is (core/upstream-definition.ts), with what only a transport has. */
import type { Config } from "../core/config.js";
import type { Violation } from "../core/errors.js";
import type { UpstreamDefinition } from "../core/upstream-definition.js";
import type { EmailParams } from "../schemas/email.js";
import type { MailTransport } from "./types.js";

export interface TransportDefinition extends UpstreamDefinition {
  /** Its transport for one configuration (its code may load only here, on demand). */
  open(config: Config): MailTransport | Promise<MailTransport>;
  /**
   * The operator's login `email-send` uses when a caller gives no `params` (`NO_LOGIN`: it needs none from a
   * caller); undefined when the operator set none.
   */
  operatorParams(config: Config): EmailParams | undefined;
  /** Input rules of its own, on top of the message rules every transport shares. */
  violations?(params: unknown, request: unknown): Violation[];
}
