/**
 * Log decoders: ERC-721 `Transfer` (four topics; three-topic logs are ERC-20 and ignored), ERC-1155
 * `TransferSingle`/`TransferBatch` (one record per token), Seaport `OrderFulfilled` (basic sales only, per the
 * rule Reservoir and Messari use) and Chainlink-style `AnswerUpdated`. Pure functions over raw logs.
 */

export const TOPIC = {
  transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  transferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  transferBatch: "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
  orderFulfilled: "0x9d9af8e38d66c62e2c12f0225249fd9d721c54b83f48d9352c97c6cacdcb6f31",
  /** `AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)` */
  answerUpdated: "0x0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f",
} as const;

/** Seaport 1.1, 1.4, 1.5 and 1.6 on Ethereum mainnet; other deployments are configured. */
export const MAINNET_SEAPORTS = [
  "0x00000000006c3852cbef3e08e8df289169ede581",
  "0x00000000000001ad428e4906ae43d8f9852d0dd6",
  "0x00000000000000adc04c56bf30ac9d3c0aaf14dc",
  "0x0000000000000068f116a894984e2db1123eb395",
];

/** ERC-20 tokens worth one ETH each (WETH, Blur Pool): their sales get a `price_usd` from the ETH/USD feed. */
export const MAINNET_ETH_TOKENS = [
  "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2",
  "0x0000000000a39bb272e79075ade125fd351887ac",
];

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";

export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

export type Kind = "transfer" | "mint" | "burn" | "sale";

/** One record of the index, before its block's timestamp and USD price are known. */
export interface Activity {
  blockNumber: number;
  logIndex: number;
  batchIndex: number;
  kind: Kind;
  contract: string;
  tokenId: string;
  from: string;
  to: string;
  /** Decimal string: ERC-1155 quantities exceed 2^53. */
  quantity: string;
  txHash: string;
  blockHash: string;
  contractType: "ERC721" | "ERC1155";
  sale?: SaleTerms;
}

export interface SaleTerms {
  marketplace: string;
  /** `null` for ETH, else the ERC-20 token address. */
  currency: string | null;
  /** Gross amount paid, fees included, in the currency's smallest unit. */
  amount: bigint;
}

const word = (data: string, index: number): string => data.slice(2 + index * 64, 2 + (index + 1) * 64);
const wordBig = (data: string, index: number): bigint => BigInt(`0x${word(data, index) || "0"}`);
const wordNumber = (data: string, index: number): number => Number(wordBig(data, index));
const topicAddress = (topic: string): string => `0x${topic.slice(26).toLowerCase()}`;
const wordAddress = (data: string, index: number): string => `0x${word(data, index).slice(24).toLowerCase()}`;

function base(log: RawLog) {
  return {
    blockNumber: Number.parseInt(log.blockNumber, 16),
    logIndex: Number.parseInt(log.logIndex, 16),
    txHash: log.transactionHash.toLowerCase(),
    blockHash: log.blockHash.toLowerCase(),
  };
}

function transferKind(from: string, to: string): Kind {
  if (from === ZERO_ADDRESS) return "mint";
  if (to === ZERO_ADDRESS) return "burn";
  return "transfer";
}

/** One record of a transfer log; `batchIndex` is the position in an ERC-1155 `TransferBatch`, else 0. */
function transferRecord(
  log: RawLog,
  contractType: Activity["contractType"],
  from: string,
  to: string,
  tokenId: bigint,
  quantity: bigint,
  batchIndex = 0,
): Activity {
  return {
    ...base(log),
    batchIndex,
    kind: transferKind(from, to),
    contract: log.address.toLowerCase(),
    tokenId: tokenId.toString(),
    from,
    to,
    quantity: quantity.toString(),
    contractType,
  };
}

/** ERC-721 `Transfer` / ERC-1155 `TransferSingle` / `TransferBatch` → records (none for anything else). */
export function decodeTransfer(log: RawLog): Activity[] {
  const topic0 = log.topics[0]?.toLowerCase();
  if (topic0 === TOPIC.transfer) {
    // Same topic as ERC-20 Transfer; only the indexed token id (a fourth topic) makes it ERC-721.
    if (log.topics.length !== 4) return [];
    const [from, to] = [topicAddress(log.topics[1]!), topicAddress(log.topics[2]!)];
    return [transferRecord(log, "ERC721", from, to, BigInt(log.topics[3]!), 1n)];
  }
  if ((topic0 !== TOPIC.transferSingle && topic0 !== TOPIC.transferBatch) || log.topics.length !== 4) return [];
  // ERC-1155: topic 1 is the operator.
  const [from, to] = [topicAddress(log.topics[2]!), topicAddress(log.topics[3]!)];
  if (topic0 === TOPIC.transferSingle) {
    return [transferRecord(log, "ERC1155", from, to, wordBig(log.data, 0), wordBig(log.data, 1))];
  }
  const idsAt = wordNumber(log.data, 0) / 32;
  const valuesAt = wordNumber(log.data, 1) / 32;
  const count = wordNumber(log.data, idsAt);
  // Any contract can emit this topic: refuse data whose arrays do not fit in it.
  if (!fits(log.data, idsAt, count, 1) || !fits(log.data, valuesAt, count, 1)) return [];
  if (wordNumber(log.data, valuesAt) !== count) return [];
  return Array.from({ length: count }, (_, i) =>
    transferRecord(log, "ERC1155", from, to, wordBig(log.data, idsAt + 1 + i), wordBig(log.data, valuesAt + 1 + i), i),
  );
}

interface Item {
  itemType: number;
  token: string;
  identifier: bigint;
  amount: bigint;
  recipient?: string;
}

const isCurrency = (item: Item) => item.itemType === 0 || item.itemType === 1;
const isNft = (item: Item) => item.itemType >= 2 && item.itemType <= 5;
const sameAsset = (a: Item, b: Item) => a.itemType === b.itemType && a.token === b.token;
const contractTypeOf = (item: Item): "ERC721" | "ERC1155" =>
  item.itemType === 2 || item.itemType === 4 ? "ERC721" : "ERC1155";

/** Whether an array of `count` items of `size` words, its length word at word `at`, lies inside `data`. */
function fits(data: string, at: number, count: number, size: number): boolean {
  const words = (data.length - 2) / 64;
  return Number.isInteger(at) && at >= 0 && Number.isSafeInteger(count) && at + 1 + count * size <= words;
}

function readItems(data: string, at: number, withRecipient: boolean): Item[] {
  const count = wordNumber(data, at);
  const size = withRecipient ? 5 : 4;
  if (!fits(data, at, count, size)) return [];
  const items: Item[] = [];
  for (let i = 0; i < count; i++) {
    const w = at + 1 + i * size;
    items.push({
      itemType: wordNumber(data, w),
      token: wordAddress(data, w + 1),
      identifier: wordBig(data, w + 2),
      amount: wordBig(data, w + 3),
      ...(withRecipient ? { recipient: wordAddress(data, w + 4) } : {}),
    });
  }
  return items;
}

/**
 * Seaport `OrderFulfilled(bytes32 orderHash, address indexed offerer, address indexed zone, address recipient,
 * SpentItem[] offer, ReceivedItem[] consideration)` → one sale, or none when it is not a basic sale.
 *
 * Listing filled (offer = one NFT): price = sum of every consideration item in the payment currency (gross, fees
 * and royalties included); seller = offerer, buyer = recipient (or the recipient of a consideration item that is
 * the NFT itself, the matchOrders override). Bid filled (offer = one currency item, consideration[0] = the NFT):
 * price = the offered amount; buyer = offerer, seller = recipient. Bundles and swaps are skipped.
 */
export function decodeSale(log: RawLog): Activity | undefined {
  if (log.topics[0]?.toLowerCase() !== TOPIC.orderFulfilled || log.topics.length !== 3) return undefined;
  const offerer = topicAddress(log.topics[1]!);
  const recipient = wordAddress(log.data, 1);
  const offer = readItems(log.data, wordNumber(log.data, 2) / 32, false);
  const consideration = readItems(log.data, wordNumber(log.data, 3) / 32, true);
  const [offered] = offer;
  if (offer.length !== 1 || !offered || consideration.length === 0) return undefined;

  let nft: Item;
  let currency: Item;
  let amount = 0n;
  let buyer: string;
  let seller: string;
  if (isNft(offered)) {
    nft = offered;
    currency = consideration[0]!;
    if (!isCurrency(currency)) return undefined;
    buyer = recipient;
    seller = offerer;
    for (const item of consideration) {
      if (sameAsset(item, currency)) amount += item.amount;
      else if (sameAsset(item, nft) && item.identifier === nft.identifier) buyer = item.recipient ?? buyer;
      else return undefined;
    }
  } else if (isCurrency(offered)) {
    currency = offered;
    nft = consideration[0]!;
    if (!isNft(nft)) return undefined;
    if (!consideration.slice(1).every((item) => sameAsset(item, currency))) return undefined;
    amount = offered.amount;
    buyer = offerer;
    seller = recipient;
  } else {
    return undefined;
  }
  return {
    ...base(log),
    batchIndex: 0,
    kind: "sale",
    contract: nft.token,
    tokenId: nft.identifier.toString(),
    from: seller,
    to: buyer,
    quantity: nft.amount.toString(),
    contractType: contractTypeOf(nft),
    sale: { marketplace: "opensea", currency: currency.itemType === 0 ? null : currency.token, amount },
  };
}

/** Chainlink-style `AnswerUpdated`: the signed answer (int256 in topic 1). */
export function decodeAnswer(log: RawLog): bigint | undefined {
  if (log.topics[0]?.toLowerCase() !== TOPIC.answerUpdated || log.topics.length < 2) return undefined;
  return BigInt.asIntN(256, BigInt(log.topics[1]!));
}

/** Exact decimal string of `amount / 10^decimals`, without trailing zeros: 975000000000000000n, 18 → "0.975". */
export function formatUnits(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}
