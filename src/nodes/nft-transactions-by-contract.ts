import { defineNode } from "../core/node.js";
import { ByContractQuery } from "../schemas/transactions.js";
import { fromSource, retrieverInputs, retrieverOutputs, withApiKeyDefault } from "./retriever.js";

/** Transactions and order-book activity of one contract, newest first. */
export const nftTransactionsByContract = defineNode({
  id: "nft-transactions-by-contract",
  version: "v0",
  title: "NFT transactions by contract retriever",
  description:
    "Transfers, mints, burns, sales, bids and listings of one NFT contract on Ethereum, newest first, one page at a time.",
  inputs: retrieverInputs(ByContractQuery),
  outputs: retrieverOutputs,
  successPort: "data",
  filledByOperator: ["params"],
  prepare: withApiKeyDefault,
  run: ({ query, params }, ctx) => fromSource(ctx, (source) => source.transactionsByContract(query, params, ctx)),
});
