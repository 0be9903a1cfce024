/** An SMTP server as a transport (core/upstream-definition.ts says what a definition holds and who reads it). */
import type { TransportDefinition } from "../definition.js";

export const smtp: TransportDefinition = {
  id: "smtp",
  title: "SMTP",
  description: "An SMTP server (SMTP_URL, e.g. smtps://user:password@smtp.example.com:465).",
  portable: false,
  help: ["an SMTP server: SMTP_URL, e.g. smtps://user:password@smtp.example.com:465"],
  variables: ["SMTP_URL", "SMTP_TIMEOUT_MS", "SMTP_JOURNAL"],
  settings: [],
  // nodemailer loads on demand: Mailjet users never need it.
  open: async (config) => (await import("./transport.js")).smtpTransport(config),
};
