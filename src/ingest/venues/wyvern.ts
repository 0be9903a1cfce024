/**
 * OpenSea's Wyvern exchanges (v1 0x7be8…d12b, v2 0x7f26…38e5; history before June 2022): `OrdersMatched(bytes32
 * buyHash, bytes32 sellHash, address indexed maker, address indexed taker, uint256 price, bytes32 indexed
 * metadata)` names neither the NFT nor the currency. The NFT is the one transfer (ERC-721 or ERC-1155) the match
 * made: the transfer logs of the same transaction since the previous match. The parties are the event's maker and
 * taker: the one the NFT went to is the buyer (the taker of a listing, the maker of an accepted offer), the other
 * the seller, also when the NFT was minted on the way (a lazy mint comes from 0x0, not from the seller); when the
 * NFT went to neither, its transfer's sender and receiver. The currency is the ERC-20 the buyer paid in the same
 * stretch of logs (e.g. WETH on an accepted offer), else ETH. Price = the event's price, fees included. Bundles
 * (several NFTs in one match) are not sales.
 */
import { type RawLog, topic0, topicAddress, wordBig, wordCount } from "../decode.js";
import { nftTransfers, sale, type TxContext, tokenTransfers, type Venue } from "./venue.js";

const WYVERN_V1 = "0x7be8076f4ea4a4ad08075c2508e481d6c946d12b";
export const WYVERN_V2 = "0x7f268357a8c2552623316e2562d90e642bb538e5";
const ORDERS_MATCHED = "0xc4109843e0b7d514e4c093114b863f8e7d8d9a458c372cd51bfe526b588006c9";

function sincePreviousMatch(log: RawLog, tx: TxContext): readonly RawLog[] {
  const at = tx.logs.indexOf(log);
  let start = 0;
  for (let i = at - 1; i >= 0; i--) {
    if (topic0(tx.logs[i]!) === ORDERS_MATCHED) {
      start = i + 1;
      break;
    }
  }
  return tx.logs.slice(start, at);
}

export const wyvern: Venue = {
  marketplace: "opensea",
  addresses: [WYVERN_V1, WYVERN_V2],
  topics: [ORDERS_MATCHED],
  decode(log, tx) {
    if (log.topics.length !== 4 || wordCount(log.data) < 3) return undefined;
    const segment = sincePreviousMatch(log, tx);
    const nfts = nftTransfers(segment);
    if (nfts.length !== 1) return undefined;
    const nft = nfts[0]!;
    const [maker, taker] = [topicAddress(log.topics[1]!), topicAddress(log.topics[2]!)];
    const [seller, buyer] = nft.to === taker ? [maker, taker] : nft.to === maker ? [taker, maker] : [nft.from, nft.to];
    const paid = tokenTransfers(segment).find((t) => t.from === buyer);
    return [
      sale(
        log,
        { contract: nft.contract, tokenId: nft.tokenId, quantity: nft.quantity, contractType: nft.type },
        seller,
        buyer,
        { marketplace: "opensea", currency: paid?.token ?? null, amount: wordBig(log.data, 2) },
      ),
    ];
  },
};
