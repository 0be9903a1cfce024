/** Mailjet as a transport (core/upstream-definition.ts says what a definition holds and who reads it). */
import { hostSetting } from "../../core/upstream-definition.js";
import type { TransportDefinition } from "../definition.js";
import { mailjetViolations } from "./rules.js";
import { mailjetTransport } from "./transport.js";

export const mailjet: TransportDefinition = {
  id: "mailjet",
  title: "Mailjet",
  description: "Mailjet's Send API v3.1 (an API key and its secret key).",
  portable: true,
  help: ["Mailjet, the default: MAILJET_API_KEY and MAILJET_SECRET_KEY (or params)"],
  variables: [
    "MAILJET_API_KEY",
    "MAILJET_SECRET_KEY",
    "MAILJET_BASE_URL",
    "MAILJET_CONCURRENCY",
    "MAILJET_TIMEOUT_MS",
    "MAILJET_MAX_RETRIES",
  ],
  settings: [
    hostSetting({
      key: "apiKey",
      env: "MAILJET_API_KEY",
      title: "API Key",
      description: "The Mailjet API key (the user of HTTP Basic).",
      secret: true,
      nodeRed: { field: "mailjetApiKey", label: "Mailjet key" },
    }),
    hostSetting({
      key: "secretKey",
      env: "MAILJET_SECRET_KEY",
      title: "Secret Key",
      description: "The Mailjet secret key (the password of HTTP Basic).",
      secret: true,
      nodeRed: { field: "mailjetSecretKey", label: "Mailjet secret" },
    }),
    hostSetting({
      key: "baseUrl",
      env: "MAILJET_BASE_URL",
      title: "Base URL",
      description: "Origin of the Mailjet-compatible API.",
      nodeRed: { field: "mailjetBaseUrl", label: "Mailjet URL" },
    }),
  ],
  n8nCredential: "chainmailMailjetApi",
  operatorParams: ({ mailjet: { userId, password } }) =>
    userId && password ? { "user id": userId, password } : undefined,
  operatorCredentials: ({ mailjet }) => [
    ...(mailjet.userId ? ["MAILJET_API_KEY"] : []),
    ...(mailjet.password ? ["MAILJET_SECRET_KEY"] : []),
  ],
  // Loaded with the list, not on demand: see transports/index.ts.
  open: (config) => mailjetTransport(config),
  violations: mailjetViolations,
};
