/**
 * The config node's settings and the environment's: what every chainmail node reads its credentials and origins
 * from. One connection pool serves every node of the Node-RED process.
 */
import { dispatcherPool } from "../../../../src/core/pools/dispatcher.js";
import { NodeHttpPool } from "../../../../src/core/pools/node-http.js";
import {
  type Config,
  DETAIL_SETTINGS,
  hostConfig,
  mailTransports,
  nftSources,
  portableMailTransports,
  portableNftSources,
  type SourceEntry,
  settingsEnv,
  type TransportEntry,
  TUNING_SETTINGS,
} from "../../../../src/workflow/index.js";
import type { NodeAPI, NodeDef, RuntimeNode } from "../node-red.js";

/** One connection pool for every node of this Node-RED process (Node's own HTTP client). */
const pool = dispatcherPool(new NodeHttpPool({ connections: 16 }));

/** A node's settings: chainmail's variables, and the secrets to keep out of what it says. */
export interface NodeSettings {
  env: Record<string, string>;
  secrets: string[];
}

/** The settings a node takes from Node-RED's process environment when no config node says otherwise. */
const ENV_SETTINGS = [
  "NFT_SOURCE",
  ...portableNftSources().flatMap((s) => s.settings.map((setting) => setting.env)),
  ...portableMailTransports().flatMap((t) => t.settings.map((setting) => setting.env)),
  ...TUNING_SETTINGS,
  ...DETAIL_SETTINGS,
];

function processEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_SETTINGS) {
    const value = process.env[name];
    if (value) env[name] = value;
  }
  // NFT_SOURCE=index or index+opensea stays: the node then says on its error port how to reach the own index (a
  // chainmail service), rather than reading silently from another source.
  return env;
}

/** What the config node holds: its fields, and its credentials by the catalog's setting keys. */
export interface ChainmailConfigNode extends RuntimeNode {
  settings(): NodeSettings;
}

/** The config node's fields: the chosen source, and each setting that is no secret by its `nodeRed` name. */
export interface ConfigDef extends NodeDef {
  source?: string;
  [field: string]: unknown;
}

/** The config node's credentials: each secret setting by its `nodeRed` name (nftportApiKey, rpcUrl, …). */
export type Credentials = Record<string, string | undefined>;

/** What the config node holds of the portable sources and transports, as their definitions name it. */
const hostSettings = () =>
  [...portableNftSources(), ...portableMailTransports()].flatMap((entry) => entry.settings).filter((s) => s.nodeRed);

/** The config node's credentials, as registered with Node-RED (the editor's list is in nodes/config.html). */
export const CREDENTIALS: Record<string, { type: "password" }> = Object.fromEntries(
  hostSettings()
    .filter((setting) => setting.secret)
    .map((setting) => [setting.nodeRed!.field, { type: "password" }]),
);

/** One source's or transport's values, by its settings' keys, from the config node's fields and credentials. */
function valuesOf(entry: SourceEntry | TransportEntry, def: ConfigDef, credentials: Credentials) {
  return Object.fromEntries(
    entry.settings.map((setting) => {
      const from: Record<string, unknown> = setting.secret ? credentials : def;
      const field = setting.nodeRed?.field ?? "";
      return [setting.key, Object.hasOwn(from, field) ? from[field] : undefined];
    }),
  );
}

/** The config node's fields and credentials as chainmail's settings (the definitions' variables). */
export function configSettings(def: ConfigDef, credentials: Credentials): NodeSettings {
  const source = nftSources.find((s) => s.id === def.source && s.portable) ?? nftSources[0]!;
  const mailjet = mailTransports.find((t) => t.id === "mailjet")!;
  const service = nftSources.find((s) => s.id === "service")!;
  // A field left empty is Node-RED's environment's (NFTPORT_BASE_URL, …), else chainmail's default.
  const keepEnv = { defaults: false };
  const env = {
    // The service is also where delivery events and the suppression list are read, whatever the NFT source.
    ...settingsEnv({ settings: service.settings }, valuesOf(service, def, credentials), "NFT_SOURCE", keepEnv),
    ...settingsEnv(source, valuesOf(source, def, credentials), "NFT_SOURCE", keepEnv),
    ...settingsEnv(mailjet, valuesOf(mailjet, def, credentials), "EMAIL_TRANSPORT", keepEnv),
  };
  const secrets = Object.values(credentials).filter((v): v is string => typeof v === "string" && v.length > 0);
  return { env, secrets };
}

/** A node's settings: the environment's, overridden by its config node's (if it names one). */
export function settingsOf(RED: NodeAPI, configId: string | undefined): NodeSettings {
  const configNode = configId ? (RED.nodes.getNode(configId) as ChainmailConfigNode | null) : null;
  const own = configNode?.settings() ?? { env: {}, secrets: [] };
  return { env: { ...processEnv(), ...own.env }, secrets: own.secrets };
}

/** chainmail's configuration from a node's variables, over the shared pool. */
export const configOf = (env: Record<string, string>): Config => hostConfig(env, pool);
