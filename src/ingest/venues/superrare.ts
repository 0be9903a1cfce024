/**
 * SuperRare, its contracts in order of age (the events Dune's SuperRare trades read). Price = the sale's amount as
 * the event states it (royalties and SuperRare's commission are paid out of it). The markets after the original
 * token's also charge the buyer SuperRare's marketplace fee (3 %) on top, which their events do not state: it is
 * not in the price.
 *
 * - SuperRare v1 (0x41a3…850d, the original token, its own market): `Sold(address indexed buyer, address indexed
 *   seller, uint256 amount, uint256 indexed tokenId)` and `AcceptBid(address indexed bidder, address indexed seller,
 *   uint256 amount, uint256 indexed tokenId)`; the NFT is a token of that contract. ETH.
 * - SuperRareMarketAuction (0x2947…baa7) and its v2 (0x65b4…5e2c): `Sold(address indexed originContract, address
 *   indexed buyer, address indexed seller, uint256 amount, uint256 tokenId)` and `AcceptBid(address indexed
 *   originContract, address indexed bidder, address indexed seller, uint256 amount, uint256 tokenId)`. ETH.
 * - SuperRareAuctionHouse (0x8c9f…e656): `AuctionSettled(address indexed contractAddress, address indexed bidder,
 *   address seller, uint256 indexed tokenId, uint256 amount)`. ETH.
 * - SuperRare Bazaar (0x6d7c…7a42): `Sold(address indexed originContract, address indexed buyer, address indexed
 *   seller, address currencyAddress, uint256 amount, uint256 tokenId)`, `AcceptOffer(address indexed
 *   originContract, address indexed bidder, address indexed seller, address currencyAddress, uint256 amount,
 *   uint256 tokenId, address[] splitAddresses, uint8[] splitRatios)` and `AuctionSettled(address indexed
 *   contractAddress, address indexed bidder, address seller, uint256 indexed tokenId, address currencyAddress,
 *   uint256 amount)`: ETH or the ERC-20 named.
 *
 * Both auction houses also log `AuctionSettled` for an auction that ended without a bid (bidder 0x0, amount 0, the
 * NFT back with its owner): no sale.
 */
import { type RawLog, topic0, topicAddress, word, wordCount, ZERO_ADDRESS } from "../decode.js";
import { currencyOf, sale, standardInTx, type TxContext, type Venue } from "./venue.js";

export const SUPERRARE_V1 = "0x41a322b28d0ff354040e2cbc676f0320d8c8850d";
export const SUPERRARE_MARKET_AUCTION = "0x2947f98c42597966a0ec25e92843c09ac17fbaa7";
export const SUPERRARE_MARKET_AUCTION_V2 = "0x65b49f7aee40347f5a90b714be4ef086f3fe5e2c";
export const SUPERRARE_AUCTION_HOUSE = "0x8c9f364bf7a56ed058fc63ef81c6cf09c833e656";
export const SUPERRARE_BAZAAR = "0x6d7c44773c52d396f43c2d511b81aa168e9a7a42";

const V1_SOLD = "0x16dd16959a056953a63cf14bf427881e762e54f03d86b864efea8238dd3b822f";
const V1_ACCEPT_BID = "0xd6deddb2e105b46d4644d24aac8c58493a0f107e7973b2fe8d8fa7931a2912be";
const MARKET_SOLD = "0x5764dbcef91eb6f946584f4ea671217c686fa7e858ce4f9f42d08422b86556a9";
const MARKET_ACCEPT_BID = "0x2a9d06eec42acd217a17785dbec90b8b4f01a93ecd8c127edd36bfccf239f8b6";
const HOUSE_AUCTION_SETTLED = "0xea6d16c6bfcad11577aef5cc6728231c9f069ac78393828f8ca96847405902a9";
const BAZAAR_SOLD = "0x6f9e7bc841408072f4a49e469f90e1a634b85251803662bc8e5c220b28782472";
const BAZAAR_ACCEPT_OFFER = "0x97c3d2068ce177bc33d84acecc45eededcf298c4a9d4340ae03d4afbb3993f7b";
const BAZAAR_AUCTION_SETTLED = "0xef4e2262a841641690bb931801dc0d1923e6b417cd217f91f8049d8aa9f5f086";

/** Where a field sits: topic `tN` or data word `dN`; `self` = the emitting contract. */
type Slot = `t${1 | 2 | 3}` | `d${0 | 1 | 2}`;
interface Layout {
  from: readonly string[];
  contract: Slot | "self";
  tokenId: Slot;
  buyer: Slot;
  seller: Slot;
  /** ETH when absent. */
  currency?: Slot;
  amount: Slot;
}

const MARKETS = [SUPERRARE_MARKET_AUCTION, SUPERRARE_MARKET_AUCTION_V2];
const v1: Layout = { from: [SUPERRARE_V1], contract: "self", tokenId: "t3", buyer: "t1", seller: "t2", amount: "d0" };
const market: Layout = { from: MARKETS, contract: "t1", tokenId: "d1", buyer: "t2", seller: "t3", amount: "d0" };
const bazaar: Layout = {
  from: [SUPERRARE_BAZAAR],
  contract: "t1",
  tokenId: "d2",
  buyer: "t2",
  seller: "t3",
  currency: "d0",
  amount: "d1",
};

const LAYOUTS = new Map<string, Layout>([
  [V1_SOLD, v1],
  [V1_ACCEPT_BID, v1],
  [MARKET_SOLD, market],
  [MARKET_ACCEPT_BID, market],
  [
    HOUSE_AUCTION_SETTLED,
    { from: [SUPERRARE_AUCTION_HOUSE], contract: "t1", tokenId: "t3", buyer: "t2", seller: "d0", amount: "d1" },
  ],
  [BAZAAR_SOLD, bazaar],
  [BAZAAR_ACCEPT_OFFER, bazaar],
  [BAZAAR_AUCTION_SETTLED, { ...bazaar, tokenId: "t3", seller: "d0", currency: "d1", amount: "d2" }],
]);

/** How many data words a layout reads. */
const wordsRead = (layout: Layout): number =>
  Math.max(
    0,
    ...Object.values(layout).map((slot) => (typeof slot === "string" && slot[0] === "d" ? Number(slot[1]) + 1 : 0)),
  );

const at = (log: RawLog, slot: Slot): string =>
  slot[0] === "t" ? log.topics[Number(slot[1])]! : `0x${word(log.data, Number(slot[1]))}`;
const addressAt = (log: RawLog, slot: Slot) => topicAddress(at(log, slot));
const numberAt = (log: RawLog, slot: Slot) => BigInt(at(log, slot));

function decode(log: RawLog, tx: TxContext) {
  const layout = LAYOUTS.get(topic0(log) ?? "");
  if (!layout?.from.includes(log.address.toLowerCase())) return undefined;
  if (log.topics.length !== 4 || wordCount(log.data) < wordsRead(layout)) return undefined;
  const buyer = addressAt(log, layout.buyer);
  // An auction settled without a bid logs the bidder 0x0 and amount 0: the NFT went back, nothing was sold.
  if (buyer === ZERO_ADDRESS) return [];
  const contract = layout.contract === "self" ? log.address.toLowerCase() : addressAt(log, layout.contract);
  const tokenId = numberAt(log, layout.tokenId);
  const nft = { contract, tokenId, quantity: 1n, contractType: standardInTx(tx, contract, tokenId, 1n) };
  return [
    sale(log, nft, addressAt(log, layout.seller), buyer, {
      marketplace: "superrare",
      currency: layout.currency ? currencyOf(addressAt(log, layout.currency)) : null,
      amount: numberAt(log, layout.amount),
    }),
  ];
}

export const superrare: Venue = {
  marketplace: "superrare",
  addresses: [
    SUPERRARE_V1,
    SUPERRARE_MARKET_AUCTION,
    SUPERRARE_MARKET_AUCTION_V2,
    SUPERRARE_AUCTION_HOUSE,
    SUPERRARE_BAZAAR,
  ],
  topics: [...LAYOUTS.keys()],
  decode,
};
