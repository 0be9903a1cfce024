/**
 * Foundation's NFTMarket (0xcda7…0b6f), every sale in ETH. Each event states the three shares of the price:
 * Foundation's fee, the creator's royalty and the seller's revenue (a primary sale pays the creator, who is the
 * seller, and leaves the seller's share 0); the gross price is their sum, as Dune's Foundation trades read it.
 *
 * - `ReserveAuctionFinalized(uint256 indexed auctionId, address indexed seller, address indexed bidder, uint256 fee,
 *   uint256 creatorRev, uint256 sellerRev)`: an auction settled; the winning bidder buys. The event names the
 *   auction, not the NFT: the NFT is the one the market sends the bidder in the same transaction, since the
 *   previous settlement (it held the NFT in escrow during the auction). A settlement that keeps the NFT in escrow
 *   names none and is not understood.
 * - `BuyPriceAccepted(address indexed nftContract, uint256 indexed tokenId, address indexed seller, address buyer,
 *   uint256 fee, uint256 creatorRev, uint256 sellerRev)`: buy now.
 * - `OfferAccepted(address indexed nftContract, uint256 indexed tokenId, address indexed buyer, address seller,
 *   uint256 fee, uint256 creatorRev, uint256 sellerRev)`: an offer (made in FETH, Foundation's ETH held 1:1) taken.
 * - `PrivateSaleFinalized(address indexed nftContract, uint256 indexed tokenId, address indexed seller, address
 *   buyer, uint256 fee, uint256 creatorRev, uint256 sellerRev, uint256 deadline)`: a private sale.
 */
import { type RawLog, topic0, topicAddress, wordAddress, wordBig, wordCount } from "../decode.js";
import { nftTransfers, sale, standardInTx, type TxContext, type Venue } from "./venue.js";

export const FOUNDATION_MARKET = "0xcda72070e455bb31c7690a170224ce43623d0b6f";

const RESERVE_AUCTION_FINALIZED = "0x2edb0e99c6ac35be6731dab554c1d1fa1b7beb675090dbb09fb14e615aca1c4a";
const BUY_PRICE_ACCEPTED = "0xd28c0a7dd63bc853a4e36306655da9f8c0b29ff9d0605bb976ae420e46a99930";
const OFFER_ACCEPTED = "0x1cb8adb37d6d35e94cd0695ca39895b84371864713f5ca7eada52af9ff23744b";
const PRIVATE_SALE_FINALIZED = "0x6c623fa5e13aaaf28288f807e5b4f9ec6fb7ef812568e00317c552663bea918f";

/** Fee + creator's revenue + seller's revenue: the three words from `at`. */
const gross = (data: string, at: number) => wordBig(data, at) + wordBig(data, at + 1) + wordBig(data, at + 2);

/** The logs of `tx` before `log` and after the previous settlement (a batch may settle several auctions). */
function sincePreviousSettlement(log: RawLog, tx: TxContext): readonly RawLog[] {
  const at = tx.logs.indexOf(log);
  let start = at;
  while (start > 0 && topic0(tx.logs[start - 1]!) !== RESERVE_AUCTION_FINALIZED) start--;
  return tx.logs.slice(start, at);
}

function auction(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 4 || wordCount(log.data) < 3) return undefined;
  const seller = topicAddress(log.topics[2]!);
  const bidder = topicAddress(log.topics[3]!);
  const sent = nftTransfers(sincePreviousSettlement(log, tx)).filter(
    (t) => t.from === FOUNDATION_MARKET && t.to === bidder,
  );
  const nft = sent.length === 1 ? sent[0]! : undefined;
  if (!nft) return undefined;
  const { contract, tokenId, quantity, type } = nft;
  return [
    sale(log, { contract, tokenId, quantity, contractType: type }, seller, bidder, {
      marketplace: "foundation",
      currency: null,
      amount: gross(log.data, 0),
    }),
  ];
}

/** The three events that name the NFT; `buyerInData` says whether topic 3 is the seller (else the buyer). */
function named(log: RawLog, tx: TxContext, buyerInData: boolean) {
  if (log.topics.length !== 4 || wordCount(log.data) < 4) return undefined;
  const contract = topicAddress(log.topics[1]!);
  const tokenId = BigInt(log.topics[2]!);
  const indexed = topicAddress(log.topics[3]!);
  const other = wordAddress(log.data, 0);
  const [seller, buyer] = buyerInData ? [indexed, other] : [other, indexed];
  const nft = { contract, tokenId, quantity: 1n, contractType: standardInTx(tx, contract, tokenId, 1n) };
  return [sale(log, nft, seller, buyer, { marketplace: "foundation", currency: null, amount: gross(log.data, 1) })];
}

export const foundation: Venue = {
  marketplace: "foundation",
  addresses: [FOUNDATION_MARKET],
  topics: [RESERVE_AUCTION_FINALIZED, BUY_PRICE_ACCEPTED, OFFER_ACCEPTED, PRIVATE_SALE_FINALIZED],
  decode(log, tx) {
    if (log.address.toLowerCase() !== FOUNDATION_MARKET) return undefined;
    const topic = topic0(log);
    if (topic === RESERVE_AUCTION_FINALIZED) return auction(log, tx);
    if (topic === OFFER_ACCEPTED) return named(log, tx, false);
    return named(log, tx, true);
  },
};
