/**
 * The NFT sources as a workflow host offers them: a title, whether it can run inside a workflow package (no native
 * module, no local database), and the settings it asks its user for, each named by the variable the core reads. A
 * host turns what its user entered into that env-like record (`settingsEnv`) and builds its config from it, so a
 * new source appears in every host by its entry here.
 */
import type { NftSourceName } from "../core/config.js";

export interface Setting {
  /** The host's field name (an n8n credential property, a Node-RED config node field). */
  key: string;
  /** The variable the core reads it from. */
  env: string;
  title: string;
  description: string;
  /** Kept in the host's credential store, never in a flow or workflow file, never shown back. */
  secret?: boolean;
  default?: string;
}

export interface SourceEntry {
  id: NftSourceName;
  title: string;
  description: string;
  /** Runs inside a Node-RED or n8n package (nothing native, nothing on local disk). */
  portable: boolean;
  settings: readonly Setting[];
}

export const nftSources: readonly SourceEntry[] = [
  {
    id: "nftport",
    title: "NFTPort",
    description: "NFTPort's API v0 (an API key from nftport.xyz).",
    portable: true,
    settings: [
      {
        key: "apiKey",
        env: "NFTPORT_API_KEY",
        title: "API Key",
        description: "The NFTPort API key (sent as the Authorization header, as NFTPort expects it).",
        secret: true,
      },
      {
        key: "baseUrl",
        env: "NFTPORT_BASE_URL",
        title: "Base URL",
        description: "Origin of the NFTPort-compatible API.",
        default: "https://api.nftport.xyz",
      },
    ],
  },
  {
    id: "service",
    title: "chainmail service",
    description: "A `chainmail serve` elsewhere, e.g. one that reads its own index of an Ethereum node.",
    portable: true,
    settings: [
      {
        key: "baseUrl",
        env: "CHAINMAIL_SERVICE_URL",
        title: "Base URL",
        description: "Where `chainmail serve` listens, e.g. http://127.0.0.1:8080.",
        default: "",
      },
      {
        key: "token",
        env: "CHAINMAIL_SERVICE_TOKEN",
        title: "Token",
        description: "A bearer token of that service (one of its CHAINMAIL_TOKENS); empty when it asks for none.",
        secret: true,
      },
    ],
  },
  {
    id: "opensea",
    title: "OpenSea",
    description: "OpenSea's API v2 events (an API key from OpenSea); blocks and USD prices through an Ethereum node.",
    portable: true,
    settings: [
      {
        key: "apiKey",
        env: "OPENSEA_API_KEY",
        title: "API Key",
        description: "The OpenSea API key (sent as the X-API-KEY header).",
        secret: true,
      },
      {
        key: "baseUrl",
        env: "OPENSEA_BASE_URL",
        title: "Base URL",
        description: "Origin of the OpenSea-compatible API.",
        default: "https://api.opensea.io",
      },
      {
        key: "rpcUrl",
        env: "INDEX_RPC_URL",
        title: "Ethereum RPC URL",
        description: "A JSON-RPC endpoint, for the block of each event and the ETH/USD price of each sale.",
        secret: true,
      },
    ],
  },
  {
    id: "index",
    title: "Own index",
    description: "chainmail's own index of an Ethereum JSON-RPC node, in SQLite or PostgreSQL.",
    portable: false,
    settings: [
      {
        key: "database",
        env: "INDEX_DB",
        title: "Database",
        description: "An SQLite file path or a postgres:// URL.",
        default: "./data/index.sqlite",
      },
    ],
  },
];

/** The sources a workflow package offers. */
export const portableNftSources = (): readonly SourceEntry[] => nftSources.filter((source) => source.portable);

/**
 * The env-like record of one choice: NFT_SOURCE and each setting's variable, from `values` by key (a setting left
 * empty takes its default, or stays unset; with `defaults: false` it stays unset, for a host whose environment
 * fills it in).
 */
export function settingsEnv(
  entry: Pick<SourceEntry, "settings"> & { id?: string },
  values: Readonly<Record<string, unknown>>,
  variable = "NFT_SOURCE",
  options: { defaults?: boolean } = {},
): Record<string, string> {
  const env: Record<string, string> = entry.id ? { [variable]: entry.id } : {};
  for (const setting of entry.settings) {
    const given = Object.hasOwn(values, setting.key) ? values[setting.key] : undefined;
    const fallback = options.defaults === false ? undefined : setting.default;
    const value = typeof given === "string" && given.trim() !== "" ? given.trim() : fallback;
    if (value) env[setting.env] = value;
  }
  return env;
}
