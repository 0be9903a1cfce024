/**
 * The NFT sources: the one list every consumer reads (the source a configuration opens, `chainmail --help`, the
 * OpenAPI document, the docs' tables, the workflow packages' options and credentials). Each source is one
 * definition in its own folder (core/upstream-definition.ts says what one holds); a new source is its folder and a
 * line here. A host turns what its user entered into the env-like record the core reads (`settingsEnv`).
 */
import { inChoiceOrder, type UpstreamDefinition } from "../core/upstream-definition.js";
import type { SourceDefinition } from "./definition.js";
import { nftport } from "./nftport/definition.js";
import { opensea } from "./opensea/definition.js";
import { index } from "./own-index-definition.js";
import { service } from "./service/definition.js";
import { NO_API_KEY } from "./types.js";

export { type Setting, settingsEnv } from "../core/upstream-definition.js";
export type { SourceDefinition } from "./definition.js";
/** A source as the workflow hosts knew it (the same object). */
export type SourceEntry = SourceDefinition;

const sources: SourceDefinition[] = [nftport, service, opensea, index];

/** Every source, in the list's order. */
export const nftSources: readonly SourceDefinition[] = sources;

/**
 * Adds a source to the list for as long as the returned function is not called: how a test proves that whatever
 * reads the list offers a new source. Nothing in chainmail calls it.
 */
export function addNftSource(definition: SourceDefinition): () => void {
  sources.push(definition);
  return () => {
    const at = sources.indexOf(definition);
    if (at !== -1) sources.splice(at, 1);
  };
}

/** The sources a workflow package offers. */
export const portableNftSources = (): readonly SourceDefinition[] => nftSources.filter((source) => source.portable);

/** A value of NFT_SOURCE that combines two sources rather than being one. */
export type SourceCombination = Pick<UpstreamDefinition, "id" | "title" | "description" | "help" | "variables"> &
  Pick<SourceDefinition, "operatorApiKey">;

/** The own index for what the chain shows, OpenSea for bids and listings (sources/index.ts merges them). */
export const indexWithOpenSeaCombination: SourceCombination = {
  id: "index+opensea",
  title: "Own index with OpenSea",
  description: "The own index for what the chain shows, OpenSea's API v2 for bids and listings, merged newest first.",
  help: ["the own index, bids and listings from OpenSea: INDEX_DB, OPENSEA_API_KEY"],
  variables: [...index.variables, ...opensea.variables],
  // Needed only for what OpenSea answers (bids and listings), and that part says so when it is missing.
  operatorApiKey: (config) => config.opensea.apiKey ?? NO_API_KEY,
};

/**
 * The order the help and the workflow hosts show the values of NFT_SOURCE in (the familiar APIs first, the
 * service last); a value not in it comes after them.
 */
const SHOWN_ORDER: readonly string[] = ["nftport", "opensea", "index", "index+opensea", "service"];

/** Every value of NFT_SOURCE with what it means, in the order they are shown. */
export const nftSourceChoices = (): (SourceDefinition | SourceCombination)[] =>
  inChoiceOrder([...nftSources, indexWithOpenSeaCombination], SHOWN_ORDER);

/** The sources a workflow package offers, in the order they are shown. */
export const workflowSources = (): SourceDefinition[] => inChoiceOrder(portableNftSources(), SHOWN_ORDER);
