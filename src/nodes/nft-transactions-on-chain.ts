import { defineNode } from "../core/node.js";
import { OnChainQuery } from "../schemas/transactions.js";
import { fromSource, retrieverInputs, retrieverOutputs, withApiKeyDefault } from "./retriever.js";

const isInteger = (value: unknown): value is number | bigint => typeof value === "number" || typeof value === "bigint";

/** Transactions of the whole chain, optionally within a block range (the source decides the order). */
export const nftTransactionsOnChain = defineNode({
  id: "nft-transactions-on-chain",
  version: "v0",
  title: "All chain NFT transactions retriever",
  description:
    "Transfers, mints, burns and sales of every NFT on Ethereum, one page at a time: oldest first and optionally limited to a block range from NFTPort and the own index; newest first from OpenSea, which refuses a block range.",
  inputs: retrieverInputs(OnChainQuery),
  outputs: retrieverOutputs,
  successPort: "data",
  filledByOperator: ["params"],
  prepare: withApiKeyDefault,
  // Block numbers are numbers or bigints (uint64); `>` compares the two kinds exactly.
  check: ({ query }) =>
    isInteger(query.from_block) && isInteger(query.to_block) && query.from_block > query.to_block
      ? [
          {
            field: "query.from_block",
            value: query.from_block,
            rule: "<= query.to_block",
            message: `query.from_block = ${query.from_block} is invalid: must be <= query.to_block (${query.to_block})`,
          },
        ]
      : [],
  run: ({ query, params }, ctx) => fromSource(ctx, (source) => source.transactionsOnChain(query, params, ctx)),
});
