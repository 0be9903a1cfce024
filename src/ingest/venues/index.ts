/**
 * The marketplace decoders and the table the indexer reads: topic → venue. Adding a venue is one file beside this
 * one and one entry in `venues`.
 */
import { blur } from "./blur.js";
import { cryptopunks } from "./cryptopunks.js";
import { foundation } from "./foundation.js";
import { looksrare } from "./looksrare.js";
import { rarible } from "./rarible.js";
import { MAINNET_SEAPORTS, seaport } from "./seaport.js";
import { sudoswap } from "./sudoswap.js";
import { superrare } from "./superrare.js";
import type { Venue } from "./venue.js";
import { wyvern } from "./wyvern.js";
import { x2y2 } from "./x2y2.js";
import { zora } from "./zora.js";

export type { TransactionInfo, TxContext, Venue } from "./venue.js";
export { MAINNET_SEAPORTS };

export interface VenueTable {
  /** Topic → the venue that reads it. */
  byTopic: Map<string, Venue>;
  /** Every topic, for the `eth_getLogs` filter. */
  topics: string[];
  /** Exchange addresses: their logs that no venue understood are counted, not dropped silently. */
  exchanges: Set<string>;
}

/** The table of every venue; `seaports` replaces the mainnet Seaport addresses (the configured ones included). */
export function venueTable(seaports: readonly string[] = MAINNET_SEAPORTS): VenueTable {
  const venues: Venue[] = [
    seaport(seaports),
    blur,
    looksrare,
    x2y2,
    cryptopunks,
    sudoswap,
    wyvern,
    rarible,
    foundation,
    zora,
    superrare,
  ];
  const byTopic = new Map<string, Venue>();
  const exchanges = new Set<string>();
  for (const venue of venues) {
    for (const topic of venue.topics) {
      // One venue per topic: a second would silently take the first one's logs.
      if (byTopic.has(topic)) throw new Error(`topic ${topic} is claimed by two venues`);
      byTopic.set(topic, venue);
    }
    if (venue.addresses !== "any") for (const address of venue.addresses) exchanges.add(address);
  }
  return { byTopic, topics: [...byTopic.keys()], exchanges };
}
