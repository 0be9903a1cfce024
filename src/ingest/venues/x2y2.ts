/**
 * X2Y2 `EvInventory(bytes32 indexed itemHash, address maker, address taker, uint256 orderSalt, uint256 settleSalt,
 * uint256 intent, uint256 delegateType, uint256 deadline, address currency, bytes dataMask, (uint256 price, bytes
 * data) item, SettleDetail detail)` (Messari's reading). intent 1: the maker listed (seller) and the taker bought;
 * intent 3: the maker bid (buyer) and the taker accepted. `item.data` is the ABI list of (token, tokenId) pairs
 * (delegateType 1, ERC-721) or (token, tokenId, amount) (delegateType 2, ERC-1155). Price = `detail.price`, the
 * amount settled, fees included; several items share it evenly.
 */
import { fits, wordAddress, wordBig, wordCount, wordNumber } from "../decode.js";
import { currencyOf, sale, share, type Venue } from "./venue.js";

const X2Y2 = "0x74312363e45dcaba76c59ec49a7aa8a65a67eed3";
const EV_INVENTORY = "0x3cbb63f144840e5b1b0a38a7c19211d2e89de4d7c5faf8b2d3c1776c302d1d33";

export const x2y2: Venue = {
  marketplace: "x2y2",
  addresses: [X2Y2],
  topics: [EV_INVENTORY],
  decode(log) {
    const data = log.data;
    if (log.topics.length !== 2 || wordCount(data) < 11) return undefined;
    const [maker, taker] = [wordAddress(data, 0), wordAddress(data, 1)];
    const intent = wordNumber(data, 4);
    const delegateType = wordNumber(data, 5);
    if ((intent !== 1 && intent !== 3) || (delegateType !== 1 && delegateType !== 2)) return undefined;
    const [seller, buyer] = intent === 1 ? [maker, taker] : [taker, maker];
    const itemAt = wordNumber(data, 9) / 32;
    const detailAt = wordNumber(data, 10) / 32;
    if (!fits(data, detailAt, 0, 0) || !fits(data, itemAt, 1, 0)) return undefined;
    const price = wordBig(data, detailAt + 3);
    // item.data: bytes whose content is abi.encode(Pair[]): offset word, length, then the pairs.
    const bytesAt = itemAt + wordNumber(data, itemAt + 1) / 32;
    const pairSize = delegateType === 1 ? 2 : 3;
    const list = bytesAt + 1; // the bytes' content starts after its length word
    if (!fits(data, list, 0, 0)) return undefined;
    const pairsAt = list + wordNumber(data, list) / 32;
    const count = wordNumber(data, pairsAt);
    if (count === 0 || !fits(data, pairsAt, count, pairSize)) return undefined;
    const terms = { marketplace: "x2y2", currency: currencyOf(wordAddress(data, 7)), amount: share(price, count) };
    return Array.from({ length: count }, (_, i) => {
      const w = pairsAt + 1 + i * pairSize;
      const nft = {
        contract: wordAddress(data, w),
        tokenId: wordBig(data, w + 1),
        quantity: delegateType === 1 ? 1n : wordBig(data, w + 2),
        contractType: delegateType === 1 ? ("ERC721" as const) : ("ERC1155" as const),
      };
      return sale(log, nft, seller, buyer, terms, i);
    });
  },
};
