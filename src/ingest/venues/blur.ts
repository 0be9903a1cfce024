/**
 * Blur. v1 (`OrdersMatched` on 0x…ad05…5127) carries both orders: seller = the sell order's trader, buyer = the buy
 * order's trader, price = the sell order's price in its payment token (ETH, WETH or Blur Pool).
 *
 * v2 (0xb2ec…cea5) packs one side of the trade into two words (Dune's rule, no call traces):
 * `tokenIdListingIndexTrader = tokenId << 168 | listingIndex << 160 | trader` and
 * `collectionPriceSide = side << 248 | price << 160 | collection`. Side 0: the trader listed (seller) and the
 * taker, the transaction's sender, bought with ETH; side 1: the trader bid (buyer) in Blur Pool and the sender
 * sold. `Execution` (unpacked, ERC-1155 too) names the order type the same way. A sweep is one event per item.
 */
import { BLUR_POOL } from "../../chain/index.js";
import { type RawLog, topic0, wordAddress, wordBig, wordCount, wordNumber } from "../decode.js";
import { currencyOf, sale, standardInTx, type TxContext, type Venue } from "./venue.js";

const BLUR_V1 = "0x000000000000ad05ccc4f10045630fb830b95127";
const BLUR_V2 = "0xb2ecfe4e4d61f8790bbb9de2d1259b9e2410cea5";

const ORDERS_MATCHED = "0x61cbb2a3dee0b6064c2e681aadd61677fb4ef319f0b547508d495626f5a62f64";
const EXECUTION_721_PACKED = "0x1d5e12b51dee5e4d34434576c3fb99714a85f57b0fd546ada4b0bddd736d12b2";
const EXECUTION_721_TAKER_FEE_PACKED = "0x0fcf17fac114131b10f37b183c6a60f905911e52802caeeb3e6ea210398b81ab";
const EXECUTION_721_MAKER_FEE_PACKED = "0x7dc5c0699ac8dd5250cbe368a2fc3b4a2daadb120ad07f6cccea29f83482686e";
const EXECUTION = "0xf2f66294df6fae7ac681cbe2f6d91c6904485929679dce263e8f6539b7d5c559";
const PACKED = new Set([EXECUTION_721_PACKED, EXECUTION_721_TAKER_FEE_PACKED, EXECUTION_721_MAKER_FEE_PACKED]);

const ADDRESS_MASK = (1n << 160n) - 1n;
const PRICE_MASK = (1n << 88n) - 1n;
const asAddress = (value: bigint) => `0x${(value & ADDRESS_MASK).toString(16).padStart(40, "0")}`;

/** Order tuple: trader, side, matchingPolicy, collection, tokenId, amount, paymentToken, price, … (13 words). */
function order(data: string, at: number) {
  return {
    trader: wordAddress(data, at),
    side: wordNumber(data, at + 1),
    collection: wordAddress(data, at + 3),
    tokenId: wordBig(data, at + 4),
    amount: wordBig(data, at + 5),
    paymentToken: wordAddress(data, at + 6),
    price: wordBig(data, at + 7),
  };
}

function decodeV1(log: RawLog, tx: TxContext) {
  // data: offset(sell), sellHash, offset(buy), buyHash; each order is 13 head words.
  const sellAt = wordNumber(log.data, 0) / 32;
  const buyAt = wordNumber(log.data, 2) / 32;
  const words = wordCount(log.data);
  if (!Number.isInteger(sellAt) || !Number.isInteger(buyAt) || Math.max(sellAt, buyAt) + 13 > words) return undefined;
  const sell = order(log.data, sellAt);
  const buy = order(log.data, buyAt);
  if (sell.side !== 1 || buy.side !== 0) return undefined;
  const quantity = sell.amount === 0n ? 1n : sell.amount;
  const contractType = standardInTx(tx, sell.collection, sell.tokenId, quantity);
  return [
    sale(log, { contract: sell.collection, tokenId: sell.tokenId, quantity, contractType }, sell.trader, buy.trader, {
      marketplace: "blur",
      currency: currencyOf(sell.paymentToken),
      amount: sell.price,
    }),
  ];
}

function decodeV2(log: RawLog, tx: TxContext) {
  const taker = tx.transaction?.from.toLowerCase();
  const topic = topic0(log)!;
  if (PACKED.has(topic)) {
    if (wordCount(log.data) < 3) return undefined;
    const tokenIdListingIndexTrader = wordBig(log.data, 1);
    const collectionPriceSide = wordBig(log.data, 2);
    const trader = asAddress(tokenIdListingIndexTrader);
    const side = Number(collectionPriceSide >> 248n);
    if (side > 1 || !taker) return undefined;
    const nft = {
      contract: asAddress(collectionPriceSide),
      tokenId: tokenIdListingIndexTrader >> 168n,
      quantity: 1n,
      contractType: "ERC721" as const,
    };
    const price = (collectionPriceSide >> 160n) & PRICE_MASK;
    return [bySide(log, nft, side, trader, taker, price)];
  }
  // Execution(Transfer(trader, id, amount, collection, assetType), orderHash, listingIndex, price, makerFee(2),
  // fees(4), orderType): 15 words.
  if (wordCount(log.data) < 15 || !taker) return undefined;
  const assetType = wordNumber(log.data, 4);
  const orderType = wordNumber(log.data, 14);
  if (assetType > 1 || orderType > 1) return undefined;
  const nft = {
    contract: wordAddress(log.data, 3),
    tokenId: wordBig(log.data, 1),
    quantity: wordBig(log.data, 2),
    contractType: assetType === 0 ? ("ERC721" as const) : ("ERC1155" as const),
  };
  return [bySide(log, nft, orderType, wordAddress(log.data, 0), taker, wordBig(log.data, 7))];
}

/** Side 0: the order's trader sold to the taker for ETH; side 1: the trader bought from the taker in Blur Pool. */
function bySide(
  log: RawLog,
  nft: Parameters<typeof sale>[1],
  side: number,
  trader: string,
  taker: string,
  price: bigint,
) {
  const [seller, buyer] = side === 0 ? [trader, taker] : [taker, trader];
  return sale(log, nft, seller, buyer, { marketplace: "blur", currency: side === 0 ? null : BLUR_POOL, amount: price });
}

export const blur: Venue = {
  marketplace: "blur",
  addresses: [BLUR_V1, BLUR_V2],
  topics: [ORDERS_MATCHED, ...PACKED, EXECUTION],
  needsTransaction: (topic) => topic !== ORDERS_MATCHED,
  decode(log, tx) {
    const address = log.address.toLowerCase();
    if (topic0(log) === ORDERS_MATCHED) return address === BLUR_V1 ? decodeV1(log, tx) : undefined;
    return address === BLUR_V2 ? decodeV2(log, tx) : undefined;
  },
};
