/** Picks the NFT source the configuration names (NFT_SOURCE). */
import type { Config } from "../core/config.js";
import type { ByContractQuery } from "../schemas/transactions.js";
import { mergeNewestFirst } from "./merge.js";
import { nftportSource } from "./nftport/client.js";
import { MAX_PAGE_SIZE as OPENSEA_MAX_PAGE_SIZE, openseaSource } from "./opensea/source.js";
import { serviceSource } from "./service/client.js";
import type { NftSource } from "./types.js";

/** The own index's module, once a run has used it: what `closeNftSources` has to close. */
let indexModule: Promise<typeof import("./own-index/index.js")> | undefined;

export async function resolveNftSource(config: Config): Promise<NftSource> {
  switch (config.nftSource) {
    case "nftport":
      return nftportSource;
    case "service":
      return serviceSource;
    case "opensea":
      return openseaSource;
    case "index":
    case "index+opensea": {
      // Loaded on demand: the index brings a native SQLite driver that NFTPort and OpenSea users never need.
      indexModule ??= import("./own-index/index.js");
      const index = await (await indexModule).indexSource(config);
      return config.nftSource === "index" ? index : indexWithOpenSea(index, openseaSource);
    }
  }
}

const ON_CHAIN_TYPES = ["transfer", "mint", "burn", "sale"];
const ORDER_BOOK_TYPES = ["bid", "list"];
/** The own index serves pages of up to 1000 records. */
const INDEX_MAX_PAGE_SIZE = 1000;

/**
 * The own index for what the chain shows, OpenSea for the order book (bids and listings), by contract merged into
 * one stream newest first (merge.ts). By token and on the whole chain the kinds are on-chain only: the index alone.
 */
export function indexWithOpenSea(index: NftSource, opensea: NftSource): NftSource {
  return {
    name: "the local index and OpenSea",
    needsApiKey: true,
    transactionsByContract(query, params, ctx) {
      const types = query.type ?? ["all"];
      const all = types.includes("all");
      const onChain = all ? ["all"] : types.filter((t) => ON_CHAIN_TYPES.includes(t));
      const orderBook = all ? ORDER_BOOK_TYPES : types.filter((t) => ORDER_BOOK_TYPES.includes(t));
      if (orderBook.length === 0) return index.transactionsByContract(query, params, ctx);
      if (onChain.length === 0) return opensea.transactionsByContract(query, params, ctx);
      const part = (type: string[]) => (continuation: string | undefined, page_size: number) =>
        ({ contract_address: query.contract_address, type, continuation, page_size }) as ByContractQuery;
      const indexPage = part(onChain);
      const openseaPage = part(orderBook);
      const fingerprint = JSON.stringify([
        "index+opensea",
        "by-contract",
        query.contract_address.toLowerCase(),
        [...types].sort(),
      ]);
      return mergeNewestFirst(
        [
          {
            maxPageSize: INDEX_MAX_PAGE_SIZE,
            page: (continuation, size) => index.transactionsByContract(indexPage(continuation, size), params, ctx),
          },
          {
            maxPageSize: OPENSEA_MAX_PAGE_SIZE,
            // Without the walk: the merge may read one OpenSea page again (a position inside it), which a walk
            // would take for a loop; the merge hands out each record once itself.
            page: (continuation, size) =>
              opensea.transactionsByContract(openseaPage(continuation, size), params, { ...ctx, walk: undefined }),
          },
        ],
        query,
        fingerprint,
      );
    },
    transactionsByToken: (query, params, ctx) => index.transactionsByToken(query, params, ctx),
    transactionsOnChain: (query, params, ctx) => index.transactionsOnChain(query, params, ctx),
  };
}

/** Closes the databases the sources opened (the own index's connections); the next run opens them again. */
export async function closeNftSources(): Promise<void> {
  if (indexModule) await (await indexModule).closeIndexSources();
}
