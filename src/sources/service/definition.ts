/** Another chainmail's HTTP service as a source (core/upstream-definition.ts says what a definition holds). */
import { hostSetting } from "../../core/upstream-definition.js";
import type { SourceDefinition } from "../definition.js";
import { NO_API_KEY } from "../types.js";
import { serviceSource } from "./client.js";

export const service: SourceDefinition = {
  id: "service",
  title: "chainmail service",
  description: "A `chainmail serve` elsewhere, e.g. one that reads its own index of an Ethereum node.",
  portable: true,
  help: ["another `chainmail serve`: CHAINMAIL_SERVICE_URL, CHAINMAIL_SERVICE_TOKEN"],
  variables: [
    "CHAINMAIL_SERVICE_URL",
    "CHAINMAIL_SERVICE_TOKEN",
    "CHAINMAIL_SERVICE_TIMEOUT_MS",
    "CHAINMAIL_SERVICE_MAX_RETRIES",
  ],
  settings: [
    hostSetting({
      key: "baseUrl",
      env: "CHAINMAIL_SERVICE_URL",
      title: "Base URL",
      description: "Where `chainmail serve` listens, e.g. http://127.0.0.1:8080.",
      nodeRed: { field: "serviceUrl", label: "Service URL", placeholder: "http://127.0.0.1:8080" },
    }),
    hostSetting({
      key: "token",
      env: "CHAINMAIL_SERVICE_TOKEN",
      title: "Token",
      description: "A bearer token of that service (one of its CHAINMAIL_TOKENS); empty when it asks for none.",
      secret: true,
      nodeRed: { field: "serviceToken", label: "Service token" },
    }),
  ],
  n8nCredential: "chainmailServiceApi",
  // It answers what the other service's source answers: bids and listings when that one has them.
  capabilities: { orderBook: true },
  // The other service holds its own keys: a caller gives none.
  operatorApiKey: () => NO_API_KEY,
  open: () => serviceSource,
};
