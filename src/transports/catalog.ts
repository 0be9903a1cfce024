/** The mail transports as a workflow host offers them (see sources/catalog.ts for how a host uses an entry). */
import type { SourceEntry } from "../sources/catalog.js";

export interface TransportEntry extends Omit<SourceEntry, "id"> {
  id: "mailjet" | "smtp" | "outbox";
}

export const mailTransports: readonly TransportEntry[] = [
  {
    id: "mailjet",
    title: "Mailjet",
    description: "Mailjet's Send API v3.1 (an API key and its secret key).",
    portable: true,
    settings: [
      {
        key: "apiKey",
        env: "MAILJET_API_KEY",
        title: "API Key",
        description: "The Mailjet API key (the user of HTTP Basic).",
        secret: true,
      },
      {
        key: "secretKey",
        env: "MAILJET_SECRET_KEY",
        title: "Secret Key",
        description: "The Mailjet secret key (the password of HTTP Basic).",
        secret: true,
      },
      {
        key: "baseUrl",
        env: "MAILJET_BASE_URL",
        title: "Base URL",
        description: "Origin of the Mailjet-compatible API.",
        default: "https://api.mailjet.com",
      },
    ],
  },
];
