/**
 * The mail transports: the one list every consumer reads (see sources/catalog.ts). Each transport is one definition
 * in its own folder; a new transport is its folder and a line here.
 */
import { EMAIL_TRANSPORTS } from "../core/env.js";
import { inChoiceOrder } from "../core/upstream-definition.js";
import type { TransportDefinition } from "./definition.js";
import { mailjet } from "./mailjet/definition.js";
import { outbox } from "./outbox/definition.js";
import { smtp } from "./smtp/definition.js";

export type { TransportDefinition } from "./definition.js";
/** A transport as the workflow hosts knew it (the same object). */
export type TransportEntry = TransportDefinition;

const transports: TransportDefinition[] = [mailjet, smtp, outbox];

/** Every transport, in the list's order. */
export const mailTransports: readonly TransportDefinition[] = transports;

/** Adds a transport to the list until the returned function is called (for tests, as `addNftSource`). */
export function addMailTransport(definition: TransportDefinition): () => void {
  transports.push(definition);
  return () => {
    const at = transports.indexOf(definition);
    if (at !== -1) transports.splice(at, 1);
  };
}

/** The transports a workflow package offers. */
export const portableMailTransports = (): readonly TransportDefinition[] =>
  mailTransports.filter((transport) => transport.portable);

/** Every value of EMAIL_TRANSPORT with what it means, in the settings schema's order (then any added one). */
export const mailTransportChoices = (): TransportDefinition[] => inChoiceOrder(mailTransports, EMAIL_TRANSPORTS);
