/** An SMTP server as a transport (core/upstream-definition.ts says what a definition holds and who reads it). */
import type { TransportDefinition } from "../definition.js";
import { NO_LOGIN } from "../types.js";

function urlHasLogin(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username !== "" || parsed.password !== "";
  } catch {
    // Not a URL we can read: assume it may carry credentials, the safe side.
    return true;
  }
}

export const smtp: TransportDefinition = {
  id: "smtp",
  title: "SMTP",
  description: "An SMTP server (SMTP_URL, e.g. smtps://user:password@smtp.example.com:465).",
  portable: false,
  help: ["an SMTP server: SMTP_URL, e.g. smtps://user:password@smtp.example.com:465"],
  variables: ["SMTP_URL", "SMTP_TIMEOUT_MS", "SMTP_JOURNAL"],
  settings: [],
  // It logs in with SMTP_URL's login: a caller gives none.
  operatorParams: () => NO_LOGIN,
  operatorCredentials: ({ smtpUrl }) => (smtpUrl && urlHasLogin(smtpUrl) ? ["SMTP_URL"] : []),
  // nodemailer loads on demand: Mailjet users never need it.
  open: async (config) => (await import("./transport.js")).smtpTransport(config),
};
