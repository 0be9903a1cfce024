/**
 * chainmail-nft-transactions-by-token: NFT transactions of one token, a page per input message.
 * `msg.payload` in is its input object, keyed by input port; each output port that fires sends one message whose
 * `msg.payload` is that port's value, integers beyond 2^53 as exact decimal strings.
 */
import type { NodeAPI } from "../node-red.js";
import { nftTransactionsByToken, registerRunNode } from "../shared/index.js";

export = (RED: NodeAPI) => registerRunNode(RED, "chainmail-nft-transactions-by-token", nftTransactionsByToken);
