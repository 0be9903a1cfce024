/**
 * Zora: the Auction House and the v3 asks and offers modules (addresses from Zora's v3 `addresses/1.json`).
 *
 * - Auction House (0xe468…d673) `AuctionEnded(uint256 indexed auctionId, uint256 indexed tokenId, address indexed
 *   tokenContract, address tokenOwner, address curator, address winner, uint256 amount, uint256 curatorFee, address
 *   auctionCurrency)`: the owner sold to the winner; price = amount + curatorFee (the winning bid, as Dune's Zora v2
 *   trades read it; for NFTs of Zora's own media contract the shares its market pays the creator and the previous
 *   owner come off `amount` before the event). The event names WETH for auctions held in ETH: the currency is WETH
 *   only when WETH left the auction house in the same transaction, else ETH.
 * - Asks v1.0 (0xce6c…f42a), Asks v1.1 (0x6170…29a3) and Offers v1 (0x7674…eaa3) `ExchangeExecuted(address
 *   indexed userA, address indexed userB, (address tokenContract, uint256 tokenId, uint256 amount) a, (…) b)`:
 *   user A gave `a`, user B gave `b`. In the asks, A is the seller and `a` the NFT, B the buyer paying `b` (the ask
 *   price, gross); in the offers, A is the buyer paying `a` and B the seller giving `b`.
 * - Asks Core ETH (0x34aa…fcab) `AskFilled(address indexed tokenContract, uint256 indexed tokenId, address buyer,
 *   address seller, uint256 price)` and Asks Private ETH (0xfbf8…e00e) `AskFilled(address indexed tokenContract,
 *   uint256 indexed tokenId, (address seller, uint96 price, address buyer) ask)`: in ETH.
 */
import { WETH } from "../../chain/index.js";
import { type RawLog, topic0, topicAddress, wordAddress, wordBig, wordCount } from "../decode.js";
import { currencyOf, sale, standardInTx, type TxContext, tokenTransfers, type Venue } from "./venue.js";

export const ZORA_AUCTION_HOUSE = "0xe468ce99444174bd3bbbed09209577d25d1ad673";
const ZORA_ASKS_V1 = "0xce6cef2a9028e1c3b21647ae3b4251038109f42a";
export const ZORA_ASKS_V1_1 = "0x6170b3c3a54c3d8c854934cbc314ed479b2b29a3";
export const ZORA_OFFERS_V1 = "0x76744367ae5a056381868f716bdf0b13ae1aeaa3";
export const ZORA_ASKS_CORE_ETH = "0x34aa9cbb80dc0b3d82d04900c02fb81468dafcab";
export const ZORA_ASKS_PRIVATE_ETH = "0xfbf87e6c2c242d0166e2ddb60db5a94cd4dae00e";

const AUCTION_ENDED = "0x4f35fb3ea0081b3ccbe8df613cab0f9e1694d50a025e0aa09b88a86a3d07c2de";
const EXCHANGE_EXECUTED = "0x1f432c9454edd444f55492be01e3fa82aa88bfa28e120a039be204253c10c36e";
const ASK_FILLED_CORE = "0xed509339c949cdfdb11c117315bb3f74aa98886204732c065edd38979d7ccf53";
const ASK_FILLED_PRIVATE = "0x9c826e8c90f6a11429369613c862c10af42611ca3c5d4d4be035765cec439cb5";

/** Which contract emits which event (one table: a log of a known topic from another Zora contract is not a sale). */
const EMITTERS = new Map([
  [AUCTION_ENDED, ZORA_AUCTION_HOUSE],
  [ASK_FILLED_CORE, ZORA_ASKS_CORE_ETH],
  [ASK_FILLED_PRIVATE, ZORA_ASKS_PRIVATE_ETH],
]);
const EXCHANGE_MODULES = new Set([ZORA_ASKS_V1, ZORA_ASKS_V1_1, ZORA_OFFERS_V1]);

const nftOf = (tx: TxContext, contract: string, tokenId: bigint, quantity = 1n) => ({
  contract,
  tokenId,
  quantity,
  contractType: standardInTx(tx, contract, tokenId, quantity),
});

function auctionEnded(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 4 || wordCount(log.data) < 6) return undefined;
  const nft = nftOf(tx, topicAddress(log.topics[3]!), BigInt(log.topics[2]!));
  const named = wordAddress(log.data, 5);
  const paidInWeth = tokenTransfers(tx.logs).some((t) => t.token === WETH && t.from === ZORA_AUCTION_HOUSE);
  const currency = named === WETH && !paidInWeth ? null : currencyOf(named);
  const amount = wordBig(log.data, 3) + wordBig(log.data, 4);
  return [
    sale(log, nft, wordAddress(log.data, 0), wordAddress(log.data, 2), { marketplace: "zora", currency, amount }),
  ];
}

function exchangeExecuted(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 3 || wordCount(log.data) < 6) return undefined;
  const userA = topicAddress(log.topics[1]!);
  const userB = topicAddress(log.topics[2]!);
  // An offer is paid by A; an ask by B.
  const offer = log.address.toLowerCase() === ZORA_OFFERS_V1;
  const [nftAt, paidAt] = offer ? [3, 0] : [0, 3];
  const [seller, buyer] = offer ? [userB, userA] : [userA, userB];
  const nft = nftOf(tx, wordAddress(log.data, nftAt), wordBig(log.data, nftAt + 1), wordBig(log.data, nftAt + 2));
  const terms = {
    marketplace: "zora",
    currency: currencyOf(wordAddress(log.data, paidAt)),
    amount: wordBig(log.data, paidAt + 2),
  };
  return [sale(log, nft, seller, buyer, terms)];
}

function askFilled(log: RawLog, tx: TxContext, privateAsk: boolean) {
  if (log.topics.length !== 3 || wordCount(log.data) < 3) return undefined;
  const nft = nftOf(tx, topicAddress(log.topics[1]!), BigInt(log.topics[2]!));
  // Core: (buyer, seller, price); private: (seller, price, buyer).
  const [buyer, seller, price] = privateAsk
    ? [wordAddress(log.data, 2), wordAddress(log.data, 0), wordBig(log.data, 1)]
    : [wordAddress(log.data, 0), wordAddress(log.data, 1), wordBig(log.data, 2)];
  return [sale(log, nft, seller, buyer, { marketplace: "zora", currency: null, amount: price })];
}

export const zora: Venue = {
  marketplace: "zora",
  addresses: [ZORA_AUCTION_HOUSE, ...EXCHANGE_MODULES, ZORA_ASKS_CORE_ETH, ZORA_ASKS_PRIVATE_ETH],
  topics: [AUCTION_ENDED, EXCHANGE_EXECUTED, ASK_FILLED_CORE, ASK_FILLED_PRIVATE],
  decode(log, tx) {
    const topic = topic0(log) ?? "";
    const address = log.address.toLowerCase();
    if (topic === EXCHANGE_EXECUTED) return EXCHANGE_MODULES.has(address) ? exchangeExecuted(log, tx) : undefined;
    if (EMITTERS.get(topic) !== address) return undefined;
    if (topic === AUCTION_ENDED) return auctionEnded(log, tx);
    return askFilled(log, tx, topic === ASK_FILLED_PRIVATE);
  },
};
