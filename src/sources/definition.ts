/** What one NFT source is (core/upstream-definition.ts), with what only a source has. */
import type { Config } from "../core/config.js";
import type { UpstreamDefinition } from "../core/upstream-definition.js";
import type { NftSource } from "./types.js";

export interface SourceDefinition extends UpstreamDefinition {
  /** What it can answer beyond transfers, mints, burns and sales. */
  capabilities: {
    /** Bids and listings (`type: bid`, `list`): an order book, not only what the chain shows. */
    orderBook: boolean;
  };
  /**
   * The operator's key that stands in for `params.api_key` when a caller gives none (its variable, e.g.
   * NFTPORT_API_KEY); `NO_API_KEY` when it needs none.
   */
  operatorApiKey(config: Config): string | undefined;
  /** Its retrievers for one configuration (its code may load only here, on demand). */
  open(config: Config): NftSource | Promise<NftSource>;
  /** Closes what `open` left open (connections), when it keeps any. */
  close?(): Promise<void>;
}
