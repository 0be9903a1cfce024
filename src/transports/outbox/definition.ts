/** .eml files on disk as a transport (core/upstream-definition.ts says what a definition holds and who reads it). */
import { schemaDefault } from "../../core/upstream-definition.js";
import type { TransportDefinition } from "../definition.js";
import { NO_LOGIN } from "../types.js";

export const outbox: TransportDefinition = {
  id: "outbox",
  title: "Outbox",
  description: "Messages stored as .eml files in OUTBOX_DIR, nothing sent (`chainmail outbox` reads them back).",
  portable: false,
  help: [`.eml files in OUTBOX_DIR (default ${schemaDefault("OUTBOX_DIR")}), nothing sent`],
  variables: ["OUTBOX_DIR"],
  settings: [],
  // Nothing is sent: a caller gives no login.
  operatorParams: () => NO_LOGIN,
  // nodemailer's renderer loads on demand: Mailjet users never need it.
  open: async (config) => (await import("./transport.js")).outboxTransport(config),
};
