/**
 * What a source of NFT records or a mail transport is, as one object: what it is called and what it needs (the CLI's
 * help, the OpenAPI document, the docs' tables and the workflow packages read it), the settings a host asks its user
 * for, and where its code is opened. The lists of them are sources/catalog.ts and transports/catalog.ts; each
 * definition lives in its own folder (`sources/<id>/definition.ts`, `transports/<id>/definition.ts`).
 *
 * The rule, default and description of each variable stay in the one settings schema (core/env.ts): `core` imports
 * nothing but `schemas`, and every variable must be checked at start whichever source is chosen. A definition names
 * its variables; a host setting's default is read from that schema, so it is written once.
 */
import type { TSchema } from "@sinclair/typebox";
import type { Config } from "./config.js";
import { EnvSchema } from "./env.js";

/** One value a workflow host asks its user for, and the variable the core reads it from. */
export interface Setting {
  /** The host's field name (an n8n credential property). */
  key: string;
  /** The variable the core reads it from. */
  env: string;
  title: string;
  description: string;
  /** Kept in the host's credential store, never in a flow or workflow file, never shown back. */
  secret?: boolean;
  /**
   * The Node-RED config node's field (a credential when `secret`) holding it, its label in the editor, and what an
   * empty field shows (else its default). The field's name is the package's API.
   */
  nodeRed?: { field: string; label: string; placeholder?: string };
  /** What an empty field stands for: the settings schema's default of `env` (see `hostSetting`). */
  default?: string;
}

export interface UpstreamDefinition<Id extends string = string> {
  /** Its value of NFT_SOURCE or EMAIL_TRANSPORT. */
  id: Id;
  title: string;
  /** One sentence: what it is and what it asks for (the workflow hosts' option, the OpenAPI document, the docs). */
  description: string;
  /** Runs inside a Node-RED or n8n package (nothing native, nothing on local disk). */
  portable: boolean;
  /** What `chainmail --help` says after `NFT_SOURCE=<id>` (or `EMAIL_TRANSPORT=<id>`), one entry a line. */
  help: readonly string[];
  /** Every variable it reads (the settings' and the others'), each an entry of the settings schema. */
  variables: readonly string[];
  /** What a workflow host asks its user for. */
  settings: readonly Setting[];
  /** The n8n credential that holds its settings in the n8n package (its name is the package's API). */
  n8nCredential?: string;
  /**
   * Its variables that hold an operator's credentials and are set: what the service would spend on a caller's
   * behalf, so that it asks for CHAINMAIL_TOKENS (server/settings.ts). None when it holds none.
   */
  operatorCredentials?(config: Config): string[];
}

/** The settings schema's default of a variable as text, when it has one. */
export function schemaDefault(variable: string): string | undefined {
  const schema = (EnvSchema.properties as Record<string, TSchema | undefined>)[variable];
  return schema?.default === undefined ? undefined : String(schema.default);
}

/** A host setting whose default is its variable's in the settings schema (none when the schema has none). */
export function hostSetting(setting: Omit<Setting, "default">): Setting {
  const fallback = schemaDefault(setting.env);
  return fallback === undefined ? setting : { ...setting, default: fallback };
}

/**
 * The env-like record of one choice: the choosing variable (NFT_SOURCE, EMAIL_TRANSPORT) and each setting's
 * variable, from `values` by key (a setting left empty takes its default, or stays unset; with `defaults: false`
 * it stays unset, for a host whose environment fills it in).
 */
export function settingsEnv(
  entry: Pick<UpstreamDefinition, "settings"> & { id?: string },
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

/**
 * `definitions` in the order of `order` (a list of ids), any id not in it after them in their own order: the order
 * the CLI's help and the workflow hosts show them in.
 */
export function inChoiceOrder<T extends { id: string }>(definitions: readonly T[], order: readonly string[]): T[] {
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  return definitions
    .map((definition, at) => ({ definition, at }))
    .sort((a, b) => rank(a.definition.id) - rank(b.definition.id) || a.at - b.at)
    .map(({ definition }) => definition);
}
