/** Picks the NFT source the configuration names (NFT_SOURCE) from the list of sources (catalog.ts). */
import type { Config } from "../core/config.js";
import type { ByContractQuery } from "../schemas/transactions.js";
import { indexWithOpenSeaCombination, nftSources } from "./catalog.js";
import { mergeNewestFirst } from "./merge.js";
import { MAX_PAGE_SIZE as OPENSEA_MAX_PAGE_SIZE } from "./opensea/source.js";
import type { NftSource } from "./types.js";

/** The source of a value of NFT_SOURCE: its definition's (catalog.ts), or the index with OpenSea's order book. */
export async function resolveNftSource(config: Config): Promise<NftSource> {
  const name: string = config.nftSource;
  if (name === indexWithOpenSeaCombination.id) {
    const index = await sourceNamed("index", config);
    return indexWithOpenSea(index, await sourceNamed("opensea", config));
  }
  return sourceNamed(name, config);
}

/** The operator's key standing in for a caller's `params.api_key` with the configured source (its definition's). */
export function operatorApiKey(config: Config): string | undefined {
  const name: string = config.nftSource;
  if (name === indexWithOpenSeaCombination.id) return indexWithOpenSeaCombination.operatorApiKey(config);
  return nftSources.find((source) => source.id === name)?.operatorApiKey(config);
}

async function sourceNamed(name: string, config: Config): Promise<NftSource> {
  const definition = nftSources.find((source) => source.id === name);
  // The settings schema admits only known values: this is a source added to the schema and not to the list.
  if (!definition) throw new Error(`NFT_SOURCE=${name} has no definition in sources/catalog.ts`);
  return definition.open(config);
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
  for (const source of nftSources) await source.close?.();
}
