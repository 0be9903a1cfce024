/**
 * Data for the local OpenSea server: the real answers saved in test/fixtures/opensea (see SOURCES.md there), read
 * exactly, and a few events derived from them for what no saved answer shows (ERC-1155 quantities and token ids
 * beyond 2^53, a contract without a collection).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJson } from "../../src/core/json.js";
import type { OpenSeaDataset, OpenSeaEvent } from "./opensea.js";

export const OPENSEA_FIXTURES = join(import.meta.dirname, "..", "fixtures", "opensea");

export const BAYC = "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d";
export const GLYPHBOTS = "0xb6c2c2d2999c1b532e089a7ad4cb7f8c91cf5075";
/** A contract OpenSea knows without a collection (its contract endpoint answers `collection: null`). */
export const NO_COLLECTION = "0x4444444444444444444444444444444444444444";
/** An ERC-1155 contract whose events are derived from real ones (see `erc1155Events`). */
export const MULTI = "0x5555555555555555555555555555555555555555";
export const HUGE_TOKEN = "79400006447981872162108805936960249632419041130515543620398493819452073705492";
export const HUGE_QUANTITY = 2n ** 63n + 12345n;

/** A saved answer, exactly (integers beyond 2^53 kept). */
export function fixture(name: string): { asset_events: OpenSeaEvent[]; next?: string | null } {
  return parseJson(readFileSync(join(OPENSEA_FIXTURES, name), "utf8")) as { asset_events: OpenSeaEvent[] };
}

export const BAYC_FILES = [
  "bayc-listing-events.json",
  "bayc-offer-events.json",
  "bayc-trait-offer-events.json",
  "bayc-collection-offer-events.json",
  "bayc-sale-events.json",
  "bayc-transfer-events.json",
];

export const baycEvents = (): OpenSeaEvent[] => BAYC_FILES.flatMap((f) => fixture(f).asset_events);
export const glyphbotsEvents = (): OpenSeaEvent[] => [
  ...fixture("glyphbots-events-by-collection.json").asset_events,
  ...fixture("glyphbots-events-by-nft.json").asset_events,
];

/** Real BAYC events moved to an ERC-1155 contract with a 77-digit token id and a quantity beyond 2^53. */
export function erc1155Events(): OpenSeaEvent[] {
  const pick = (file: string) => fixture(file).asset_events[0]!;
  const move = (event: OpenSeaEvent, key: "nft" | "asset") => ({
    ...event,
    quantity: HUGE_QUANTITY,
    [key]: { ...(event[key] as object), contract: MULTI, identifier: HUGE_TOKEN, token_standard: "erc1155" },
  });
  return [
    move(pick("bayc-listing-events.json"), "asset"),
    move(pick("bayc-sale-events.json"), "nft"),
    move(pick("bayc-transfer-events.json"), "nft"),
  ];
}

export function openseaDataset(): OpenSeaDataset {
  return {
    contracts: new Map([
      [BAYC, { collection: "boredapeyachtclub", contract_standard: "erc721", name: "BoredApeYachtClub" }],
      [GLYPHBOTS, { collection: "glyphbots", contract_standard: "erc721", name: "GlyphBots" }],
      [NO_COLLECTION, { collection: null, contract_standard: "erc721", name: "Standalone" }],
      [MULTI, { collection: "multi-1155", contract_standard: "erc1155", name: "Multi" }],
    ]),
    collections: new Map([
      ["boredapeyachtclub", baycEvents()],
      ["glyphbots", glyphbotsEvents()],
      ["multi-1155", erc1155Events()],
    ]),
    // Events of other chains (Polygon, Base): the general endpoint serves every chain.
    other: fixture("events-by-account.json").asset_events,
  };
}
