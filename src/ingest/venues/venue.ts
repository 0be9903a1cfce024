/**
 * What a marketplace decoder is: the exchange addresses and topics it reads, and a pure `decode` from one log (plus
 * the other logs of its transaction and, when asked for, the transaction itself) to records. One venue per file;
 * the table in index.ts maps topics to venues, so adding a venue touches its file and that table.
 */
import {
  type Activity,
  base,
  type ContractType,
  type RawLog,
  type SaleTerms,
  type Standard,
  TOPIC,
  topic0,
  topicAddress,
  ZERO_ADDRESS,
} from "../decode.js";

/** The parts of `eth_getTransactionByHash` the decoders read. */
export interface TransactionInfo {
  from: string;
  to: string | null;
  input: string;
  value: string;
}

export interface TxContext {
  /** Every log of this transaction the range read (the requested topics only), in log order. */
  logs: readonly RawLog[];
  /** The transaction, for venues that ask for it (`needsTransaction`); undefined when the node did not know it. */
  transaction?: TransactionInfo | undefined;
}

export interface Venue {
  /** The `marketplace` value of its sales (NFTPort's name where NFTPort has one). */
  marketplace: string;
  /** Exchange contracts on mainnet; `"any"` for venues whose events come from many contracts (pools). */
  addresses: readonly string[] | "any";
  topics: readonly string[];
  /** Whether decoding a log of this topic needs its transaction (sender, calldata): fetched once per tx, batched. */
  needsTransaction?: (topic: string) => boolean;
  /**
   * Records of one log: `undefined` when the log is not understood (malformed, a bundle, a swap): the indexer
   * counts those from known exchange addresses instead of dropping them silently.
   */
  decode(log: RawLog, tx: TxContext): Activity[] | undefined;
}

/** A sale record of `log`: `from` = seller, `to` = buyer. */
export function sale(
  log: RawLog,
  nft: { contract: string; tokenId: bigint; quantity: bigint; contractType: ContractType | null },
  seller: string,
  buyer: string,
  terms: SaleTerms,
  batchIndex = 0,
): Activity {
  return {
    ...base(log),
    batchIndex,
    kind: "sale",
    contract: nft.contract,
    tokenId: nft.tokenId.toString(),
    from: seller,
    to: buyer,
    quantity: nft.quantity.toString(),
    contractType: nft.contractType,
    sale: terms,
  };
}

/** `0x0` (and Seaport's item type 0) mean ETH; anything else is the ERC-20's address. */
export const currencyOf = (token: string): string | null => (token === ZERO_ADDRESS ? null : token);

/**
 * The standard of an NFT that an event does not name, from the transfer of that token in the same transaction
 * (no `eth_call` needed). Without one among the logs read, `quantity` decides: 1 → ERC721.
 */
export function standardInTx(tx: TxContext, contract: string, tokenId: bigint, quantity: bigint): Standard {
  for (const log of tx.logs) {
    if (log.address.toLowerCase() !== contract) continue;
    const topic = topic0(log);
    if (topic === TOPIC.transfer && log.topics.length === 4 && BigInt(log.topics[3]!) === tokenId) return "ERC721";
    if ((topic === TOPIC.transferSingle || topic === TOPIC.transferBatch) && log.topics.length === 4) return "ERC1155";
  }
  return quantity === 1n ? "ERC721" : "ERC1155";
}

/** The NFT transfers (ERC-721 `Transfer`, ERC-1155 `TransferSingle`) among `logs`. */
export function nftTransfers(logs: readonly RawLog[]) {
  const out: { contract: string; tokenId: bigint; quantity: bigint; from: string; to: string; type: Standard }[] = [];
  for (const log of logs) {
    const topic = topic0(log);
    const contract = log.address.toLowerCase();
    if (topic === TOPIC.transfer && log.topics.length === 4) {
      const [from, to] = [topicAddress(log.topics[1]!), topicAddress(log.topics[2]!)];
      out.push({ contract, tokenId: BigInt(log.topics[3]!), quantity: 1n, from, to, type: "ERC721" });
    } else if (topic === TOPIC.transferSingle && log.topics.length === 4 && log.data.length >= 2 + 128) {
      const [from, to] = [topicAddress(log.topics[2]!), topicAddress(log.topics[3]!)];
      const tokenId = BigInt(`0x${log.data.slice(2, 66)}`);
      out.push({ contract, tokenId, quantity: BigInt(`0x${log.data.slice(66, 130)}`), from, to, type: "ERC1155" });
    }
  }
  return out;
}

/** ERC-20 `Transfer`s (three topics) among `logs`. */
export function tokenTransfers(logs: readonly RawLog[]) {
  return logs
    .filter((log) => topic0(log) === TOPIC.transfer && log.topics.length === 3 && log.data.length >= 66)
    .map((log) => ({
      token: log.address.toLowerCase(),
      from: topicAddress(log.topics[1]!),
      to: topicAddress(log.topics[2]!),
      amount: BigInt(`0x${log.data.slice(2, 66)}`),
    }));
}

/** `total` shared by `count` items, in the smallest unit, rounded down (a bundle's price, split evenly). */
export const share = (total: bigint | null, count: number): bigint | null =>
  total === null ? null : total / BigInt(count);
