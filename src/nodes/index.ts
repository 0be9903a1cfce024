/** The node registry: every node chainmail offers, by id. */
import type { AnyNode } from "../core/node.js";
import { emailSend } from "./email-send.js";
import { nftTransactionsByContract } from "./nft-transactions-by-contract.js";
import { nftTransactionsByToken } from "./nft-transactions-by-token.js";
import { nftTransactionsOnChain } from "./nft-transactions-on-chain.js";

export { emailSend, nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain };

const byId = {
  [nftTransactionsByContract.id]: nftTransactionsByContract,
  [nftTransactionsOnChain.id]: nftTransactionsOnChain,
  [nftTransactionsByToken.id]: nftTransactionsByToken,
  [emailSend.id]: emailSend,
};

/** Each node by its id, as types: what `runNode("nft-transactions-by-token", …)` types its input and output by. */
export type NodesById = typeof byId;
export type NodeId = keyof NodesById;
/** The three retrievers: the nodes `pages` and `records` walk. */
export type RetrieverId = Exclude<NodeId, typeof emailSend.id>;

export const nodes: Readonly<Record<string, AnyNode>> = Object.freeze(byId);

/** The node with this id, or undefined. */
export function getNode(id: string): AnyNode | undefined {
  return Object.hasOwn(nodes, id) ? nodes[id] : undefined;
}
