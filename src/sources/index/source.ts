/** The own index as an NFT source (issue 5). Until it lands, selecting it is a clear configuration error. */
import type { Config } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import type { NftSource } from "../types.js";

export async function indexSource(_config: Config): Promise<NftSource> {
  throw new ChainmailError("INTERNAL", "NFT_SOURCE=index is not available in this build.", {
    hint: "Use NFT_SOURCE=nftport.",
  });
}
