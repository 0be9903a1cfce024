/** NFTPort as a source (core/upstream-definition.ts says what a definition holds and who reads it). */
import { hostSetting } from "../../core/upstream-definition.js";
import type { SourceDefinition } from "../definition.js";
import { nftportSource } from "./client.js";

export const nftport: SourceDefinition = {
  id: "nftport",
  title: "NFTPort",
  description: "NFTPort's API v0 (an API key from nftport.xyz).",
  portable: true,
  help: ["NFTPort, the default: NFTPORT_API_KEY (or params.api_key in each input)"],
  variables: ["NFTPORT_API_KEY", "NFTPORT_BASE_URL", "NFTPORT_TIMEOUT_MS", "NFTPORT_MAX_RETRIES"],
  settings: [
    hostSetting({
      key: "apiKey",
      env: "NFTPORT_API_KEY",
      title: "API Key",
      description: "The NFTPort API key (sent as the Authorization header, as NFTPort expects it).",
      secret: true,
      nodeRed: { field: "nftportApiKey", label: "NFTPort key" },
    }),
    hostSetting({
      key: "baseUrl",
      env: "NFTPORT_BASE_URL",
      title: "Base URL",
      description: "Origin of the NFTPort-compatible API.",
      nodeRed: { field: "nftportBaseUrl", label: "NFTPort URL" },
    }),
  ],
  n8nCredential: "chainmailNftPortApi",
  capabilities: { orderBook: true },
  operatorApiKey: (config) => config.nftport.apiKey,
  operatorCredentials: (config) => (config.nftport.apiKey ? ["NFTPORT_API_KEY"] : []),
  open: () => nftportSource,
};
