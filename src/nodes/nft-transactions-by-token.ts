import { defineNode } from "../core/node.js";
import { ByTokenQuery } from "../schemas/transactions.js";
import { fromSource, retrieverInputs, retrieverOutputs, withApiKeyDefault } from "./retriever.js";

/** Transactions of one token, newest first. An empty history is an empty page. */
export const nftTransactionsByToken = defineNode({
  id: "nft-transactions-by-token",
  version: "v0",
  title: "NFT transactions retriever",
  description:
    "Transfers, mints, burns and sales of one NFT (contract address and token id) on Ethereum, newest first, one page at a time.",
  inputs: retrieverInputs(ByTokenQuery),
  outputs: retrieverOutputs,
  successPort: "data",
  filledByOperator: ["params"],
  prepare: withApiKeyDefault,
  run: ({ query, params }, ctx) => fromSource(ctx, (source) => source.transactionsByToken(query, params, ctx)),
});
