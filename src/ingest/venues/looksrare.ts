/**
 * LooksRare. v1 (0x5972…ce3a) `TakerAsk`/`TakerBid(bytes32 orderHash, uint256 orderNonce, address indexed taker,
 * address indexed maker, address indexed strategy, address currency, address collection, uint256 tokenId,
 * uint256 amount, uint256 price)`: in TakerBid the taker buys from the maker's listing, in TakerAsk the taker sells
 * into the maker's bid. Price = the event's price, fees included.
 *
 * v2 (0x0000…2377) `TakerAsk((orderHash, orderNonce, isNonceInvalidated), askUser, bidUser, strategyId, currency,
 * collection, itemIds[], amounts[], feeRecipients[2], feeAmounts[3])` and `TakerBid(…, bidUser, bidRecipient, …)`:
 * gross price = the three fee amounts together (seller's proceeds, creator fee, protocol fee). In TakerBid the
 * seller is feeRecipients[0] and the buyer bidRecipient; in TakerAsk the seller is askUser and the buyer bidUser.
 * An order of several items is one sale per item, the price split evenly.
 */
import { type RawLog, readUintArray, topic0, topicAddress, wordAddress, wordBig, wordCount } from "../decode.js";
import { currencyOf, sale, share, standardInTx, type TxContext, type Venue } from "./venue.js";

export const LOOKSRARE_V1 = "0x59728544b08ab483533076417fbbb2fd0b17ce3a";
export const LOOKSRARE_V2 = "0x0000000000e655fae4d56241588680f86e3b2377";

const V1_TAKER_ASK = "0x68cd251d4d267c6e2034ff0088b990352b97b2002c0476587d0c4da889c11330";
const V1_TAKER_BID = "0x95fb6205e23ff6bda16a2d1dba56b9ad7c783f67c96fa149785052f47696f2be";
const V2_TAKER_ASK = "0x9aaa45d6db2ef74ead0751ea9113263d1dec1b50cea05f0ca2002cb8063564a4";
const V2_TAKER_BID = "0x3ee3de4684413690dee6fff1a0a4f92916a1b97d1c5a83cdf24671844306b2e3";

function decodeV1(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 4 || wordCount(log.data) < 7) return undefined;
  const taker = topicAddress(log.topics[1]!);
  const maker = topicAddress(log.topics[2]!);
  const [seller, buyer] = topic0(log) === V1_TAKER_BID ? [maker, taker] : [taker, maker];
  const contract = wordAddress(log.data, 3);
  const tokenId = wordBig(log.data, 4);
  const quantity = wordBig(log.data, 5);
  const nft = { contract, tokenId, quantity, contractType: standardInTx(tx, contract, tokenId, quantity) };
  return [
    sale(log, nft, seller, buyer, {
      marketplace: "looksrare",
      currency: currencyOf(wordAddress(log.data, 2)),
      amount: wordBig(log.data, 6),
    }),
  ];
}

function decodeV2(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 1 || wordCount(log.data) < 15) return undefined;
  const ids = readUintArray(log.data, 8);
  const amounts = readUintArray(log.data, 9);
  if (!ids || !amounts || ids.length === 0 || ids.length !== amounts.length) return undefined;
  const [seller, buyer] =
    topic0(log) === V2_TAKER_BID
      ? [wordAddress(log.data, 10), wordAddress(log.data, 4)]
      : [wordAddress(log.data, 3), wordAddress(log.data, 4)];
  const gross = wordBig(log.data, 12) + wordBig(log.data, 13) + wordBig(log.data, 14);
  const contract = wordAddress(log.data, 7);
  const terms = {
    marketplace: "looksrare",
    currency: currencyOf(wordAddress(log.data, 6)),
    amount: share(gross, ids.length),
  };
  return ids.map((tokenId, i) => {
    const quantity = amounts[i]!;
    const nft = { contract, tokenId, quantity, contractType: standardInTx(tx, contract, tokenId, quantity) };
    return sale(log, nft, seller, buyer, terms, i);
  });
}

export const looksrare: Venue = {
  marketplace: "looksrare",
  addresses: [LOOKSRARE_V1, LOOKSRARE_V2],
  topics: [V1_TAKER_ASK, V1_TAKER_BID, V2_TAKER_ASK, V2_TAKER_BID],
  decode(log, tx) {
    const v1 = topic0(log) === V1_TAKER_ASK || topic0(log) === V1_TAKER_BID;
    const address = log.address.toLowerCase();
    if (v1) return address === LOOKSRARE_V1 ? decodeV1(log, tx) : undefined;
    return address === LOOKSRARE_V2 ? decodeV2(log, tx) : undefined;
  },
};
