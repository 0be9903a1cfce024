/** OpenSea as a source (core/upstream-definition.ts says what a definition holds and who reads it). */
import { hostSetting } from "../../core/upstream-definition.js";
import type { SourceDefinition } from "../definition.js";
import { openseaSource } from "./source.js";

export const opensea: SourceDefinition = {
  id: "opensea",
  title: "OpenSea",
  description: "OpenSea's API v2 events (an API key from OpenSea); blocks and USD prices through an Ethereum node.",
  portable: true,
  help: ["OpenSea: OPENSEA_API_KEY (or params.api_key) and, for blocks and USD prices,", "INDEX_RPC_URL"],
  variables: [
    "OPENSEA_API_KEY",
    "OPENSEA_BASE_URL",
    "OPENSEA_TIMEOUT_MS",
    "OPENSEA_MAX_RETRIES",
    "INDEX_RPC_URL",
    "ETH_USD_FEED",
  ],
  settings: [
    hostSetting({
      key: "apiKey",
      env: "OPENSEA_API_KEY",
      title: "API Key",
      description: "The OpenSea API key (sent as the X-API-KEY header).",
      secret: true,
      nodeRed: { field: "openseaApiKey", label: "OpenSea key" },
    }),
    hostSetting({
      key: "baseUrl",
      env: "OPENSEA_BASE_URL",
      title: "Base URL",
      description: "Origin of the OpenSea-compatible API.",
      nodeRed: { field: "openseaBaseUrl", label: "OpenSea URL" },
    }),
    hostSetting({
      key: "rpcUrl",
      env: "INDEX_RPC_URL",
      title: "Ethereum RPC URL",
      description: "A JSON-RPC endpoint, for the block of each event and the ETH/USD price of each sale.",
      secret: true,
      nodeRed: { field: "rpcUrl", label: "Ethereum RPC", placeholder: "optional: blocks and USD prices" },
    }),
  ],
  n8nCredential: "chainmailOpenSeaApi",
  capabilities: { orderBook: true },
  operatorApiKey: (config) => config.opensea.apiKey,
  operatorCredentials: (config) => (config.opensea.apiKey ? ["OPENSEA_API_KEY"] : []),
  open: () => openseaSource,
};
