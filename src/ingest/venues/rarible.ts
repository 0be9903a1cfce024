/**
 * Rarible. Price = the amount of the payment asset the orders exchanged: the orders' price, as Rarible's own
 * indexer and Dune's Rarible trades report it. Royalties, the seller's origin fees and protocol fee are paid out of
 * it; what the buyer pays on top of it (the buyer's origin fees and protocol fee) is not in it.
 *
 * - ExchangeV2 (0x9757…8cd6), `Match(bytes32 leftHash, bytes32 rightHash, address leftMaker, address rightMaker,
 *   uint256 newLeftFill, uint256 newRightFill, (bytes4 assetClass, bytes data) leftAsset, (…) rightAsset)` until
 *   September 2022: the left order gives `leftAsset` (`newRightFill` of it) for `rightAsset` (`newLeftFill`). The
 *   side giving an NFT class sells. Asset classes: ETH, ERC20 (data: token), ERC721 and ERC1155 (data: token,
 *   token id), their lazy-mint classes ERC721_LAZY and ERC1155_LAZY (data: token, then the mint data whose first
 *   word is the token id; NFTPort's `ERC721_lazy` / `ERC1155_lazy`), and GEN_ART (data: token, token id).
 * - ExchangeV2 since, `Match(bytes32 leftHash, bytes32 rightHash, uint256 newLeftFill, uint256 newRightFill)`,
 *   emitted before the assets move: the two amounts only (the left order gives `newRightFill`, takes
 *   `newLeftFill`). The NFT is the one token that moved after it (before the exchange's next `Match`): its last
 *   transfer's sender sells, its receiver buys, and the amount that is not the NFT's is the price. Minted on the
 *   way, it was a lazy mint (`ERC721_lazy` / `ERC1155_lazy`). The currency is the ERC-20 the buyer sent in that
 *   stretch, else ETH.
 * - The v1 exchanges (0xcd4e…5b06, 0x09ea…9e30) `Buy(address indexed sellToken, uint256 indexed sellTokenId, uint256
 *   sellValue, address owner, address buyToken, uint256 buyTokenId, uint256 buyValue, address buyer, uint256
 *   amount, uint256 salt)`: the owner's order sells `sellValue` of the sell asset for `buyValue` of the buy asset,
 *   the taker took `amount` of the sell asset. The side whose token moved as an NFT in the transaction is the NFT.
 *   A listing: the owner sells `amount` NFTs to `buyer` for buyValue × amount / sellValue. An accepted bid: the
 *   NFT's sender sells buyValue × amount / sellValue NFTs to the owner for `amount`.
 */
import {
  type ContractType,
  fits,
  type RawLog,
  topic0,
  topicAddress,
  word,
  wordAddress,
  wordBig,
  wordCount,
  wordNumber,
  ZERO_ADDRESS,
} from "../decode.js";
import { currencyOf, nftTransfers, sale, standardInTx, type TxContext, tokenTransfers, type Venue } from "./venue.js";

export const RARIBLE_V2 = "0x9757f2d2b135150bbeb65308d4a91804107cd8d6";
export const RARIBLE_V1 = ["0xcd4ec7b66fbc029c116ba9ffb3e59351c20b5b06", "0x09eab21c40743b2364b94345419138ef80f39e30"];

const MATCH = "0x956cd63ee4cdcd81fda5f0ec7c6c36dceda99e1b412f4a650a5d26055dc3c450";
const MATCH_LEGACY = "0x268820db288a211986b26a8fda86b1e0046281b21206936bb0e61c67b5c79ef4";
const BUY_V1 = "0xdddcdb07e460849cf04a4445b7af9faf01b7f5c7ba75deaf969ac5ed830312c3";

/** bytes4(keccak256(name)) of Rarible's asset classes. */
const CLASS = {
  eth: "aaaebeba",
  erc20: "8ae85d84",
  erc721: "73ad2146",
  erc1155: "973bb640",
  erc721Lazy: "d8f960c1",
  erc1155Lazy: "1cdfaa40",
  genArt: "a8c6716e",
} as const;
/** NFT classes → the contract type of the record (`undefined`: from the token's transfer). */
const NFT_CLASSES = new Map<string, ContractType | undefined>([
  [CLASS.erc721, "ERC721"],
  [CLASS.erc1155, "ERC1155"],
  [CLASS.erc721Lazy, "ERC721_lazy"],
  [CLASS.erc1155Lazy, "ERC1155_lazy"],
  [CLASS.genArt, undefined],
]);

interface Asset {
  assetClass: string;
  token: string;
  tokenId: bigint;
}

/** `(bytes4 assetClass, bytes data)` at word `at`, its data read as its class lays it out. */
function readAsset(data: string, at: number): Asset | undefined {
  if (!fits(data, at, 2, 1)) return undefined;
  const assetClass = word(data, at).slice(0, 8);
  const bytesAt = at + wordNumber(data, at + 1) / 32;
  if (!fits(data, bytesAt, 0, 0)) return undefined;
  const length = wordNumber(data, bytesAt);
  const content = bytesAt + 1;
  if (!Number.isSafeInteger(length) || content + Math.ceil(length / 32) > wordCount(data)) return undefined;
  if (assetClass === CLASS.eth) return { assetClass, token: ZERO_ADDRESS, tokenId: 0n };
  if (length < 32) return undefined;
  const token = wordAddress(data, content);
  if (assetClass === CLASS.erc20) return { assetClass, token, tokenId: 0n };
  if (length < 64) return undefined;
  if (assetClass !== CLASS.erc721Lazy && assetClass !== CLASS.erc1155Lazy) {
    return { assetClass, token, tokenId: wordBig(data, content + 1) };
  }
  // abi.encode(token, mintData): the mint data's offset, then its first word, the token id.
  const mintAt = content + wordNumber(data, content + 1) / 32;
  if (!Number.isInteger(mintAt) || !fits(data, mintAt, 0, 0) || mintAt >= content + Math.ceil(length / 32)) {
    return undefined;
  }
  return { assetClass, token, tokenId: wordBig(data, mintAt) };
}

function legacyMatch(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 1 || wordCount(log.data) < 8) return undefined;
  const left = readAsset(log.data, wordNumber(log.data, 6) / 32);
  const right = readAsset(log.data, wordNumber(log.data, 7) / 32);
  if (!left || !right) return undefined;
  const [leftMaker, rightMaker] = [wordAddress(log.data, 2), wordAddress(log.data, 3)];
  const [newLeftFill, newRightFill] = [wordBig(log.data, 4), wordBig(log.data, 5)];
  const leftSells = NFT_CLASSES.has(left.assetClass);
  if (leftSells === NFT_CLASSES.has(right.assetClass)) return undefined; // NFT for NFT, or no NFT
  const [nft, paid] = leftSells ? [left, right] : [right, left];
  if (paid.assetClass !== CLASS.eth && paid.assetClass !== CLASS.erc20) return undefined;
  const quantity = leftSells ? newRightFill : newLeftFill;
  const contractType = NFT_CLASSES.get(nft.assetClass) ?? standardInTx(tx, nft.token, nft.tokenId, quantity);
  return [
    sale(
      log,
      { contract: nft.token, tokenId: nft.tokenId, quantity, contractType },
      leftSells ? leftMaker : rightMaker,
      leftSells ? rightMaker : leftMaker,
      { marketplace: "rarible", currency: currencyOf(paid.token), amount: leftSells ? newLeftFill : newRightFill },
    ),
  ];
}

/** The logs after `log` in its transaction, up to the exchange's next event of the same topic. */
function untilNext(log: RawLog, tx: TxContext): readonly RawLog[] {
  const from = tx.logs.indexOf(log) + 1;
  let end = from;
  const exchange = log.address.toLowerCase();
  while (
    end < tx.logs.length &&
    !(topic0(tx.logs[end]!) === MATCH && tx.logs[end]!.address.toLowerCase() === exchange)
  ) {
    end++;
  }
  return tx.logs.slice(from, end);
}

function match(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 1 || wordCount(log.data) < 4) return undefined;
  const newLeftFill = wordBig(log.data, 2);
  const newRightFill = wordBig(log.data, 3);
  const stretch = untilNext(log, tx);
  const moved = nftTransfers(stretch);
  const last = moved[moved.length - 1];
  if (!last || moved.some((t) => t.contract !== last.contract || t.tokenId !== last.tokenId)) return undefined;
  // The NFT's amount is one of the two; the other is the price.
  let price: bigint;
  if (last.quantity === newRightFill) price = newLeftFill;
  else if (last.quantity === newLeftFill) price = newRightFill;
  else return undefined;
  const lazy = moved.some((t) => t.from === ZERO_ADDRESS) && last.from !== ZERO_ADDRESS;
  const contractType: ContractType = lazy ? `${last.type}_lazy` : last.type;
  const paid = tokenTransfers(stretch).find((t) => t.from === last.to);
  const nft = { contract: last.contract, tokenId: last.tokenId, quantity: last.quantity, contractType };
  return [sale(log, nft, last.from, last.to, { marketplace: "rarible", currency: paid?.token ?? null, amount: price })];
}

/** The logs of `tx` before `log`, after the previous `Buy`. */
function sincePreviousBuy(log: RawLog, tx: TxContext): readonly RawLog[] {
  const at = tx.logs.indexOf(log);
  let start = at;
  while (start > 0 && topic0(tx.logs[start - 1]!) !== BUY_V1) start--;
  return tx.logs.slice(start, at);
}

function buyV1(log: RawLog, tx: TxContext) {
  if (log.topics.length !== 3 || wordCount(log.data) < 8) return undefined;
  const sellToken = topicAddress(log.topics[1]!);
  const sellTokenId = BigInt(log.topics[2]!);
  const [sellValue, owner, buyToken, buyTokenId] = [
    wordBig(log.data, 0),
    wordAddress(log.data, 1),
    wordAddress(log.data, 2),
    wordBig(log.data, 3),
  ];
  const [buyValue, buyer, amount] = [wordBig(log.data, 4), wordAddress(log.data, 5), wordBig(log.data, 6)];
  if (sellValue === 0n) return undefined;
  const moved = nftTransfers(sincePreviousBuy(log, tx));
  const listed = moved.find((t) => t.contract === sellToken && t.tokenId === sellTokenId);
  const bid = moved.find((t) => t.contract === buyToken && t.tokenId === buyTokenId);
  const other = (buyValue * amount) / sellValue;
  if (listed) {
    const nft = { contract: sellToken, tokenId: sellTokenId, quantity: amount, contractType: listed.type };
    return [sale(log, nft, owner, buyer, { marketplace: "rarible", currency: currencyOf(buyToken), amount: other })];
  }
  if (bid) {
    const nft = { contract: buyToken, tokenId: buyTokenId, quantity: other, contractType: bid.type };
    return [sale(log, nft, bid.from, owner, { marketplace: "rarible", currency: currencyOf(sellToken), amount })];
  }
  return undefined;
}

export const rarible: Venue = {
  marketplace: "rarible",
  addresses: [RARIBLE_V2, ...RARIBLE_V1],
  topics: [MATCH, MATCH_LEGACY, BUY_V1],
  decode(log, tx) {
    const topic = topic0(log);
    const address = log.address.toLowerCase();
    if (topic === BUY_V1) return RARIBLE_V1.includes(address) ? buyV1(log, tx) : undefined;
    if (address !== RARIBLE_V2) return undefined;
    return topic === MATCH ? match(log, tx) : legacyMatch(log, tx);
  },
};
