/** Picks the NFT source the configuration names (NFT_SOURCE). */
import type { Config } from "../core/config.js";
import { nftportSource } from "./nftport/client.js";
import type { NftSource } from "./types.js";

export async function resolveNftSource(config: Config): Promise<NftSource> {
  switch (config.nftSource) {
    case "nftport":
      return nftportSource;
    case "index": {
      // Loaded on demand: the index brings a native SQLite driver that NFTPort users never need.
      const { indexSource } = await import("./index/source.js");
      return indexSource(config);
    }
  }
}
