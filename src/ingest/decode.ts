/**
 * Log decoders shared by the index: ERC-721 `Transfer` (four topics; three-topic logs are ERC-20 and ignored),
 * ERC-1155 `TransferSingle`/`TransferBatch` (one record per token), ERC-2309 `ConsecutiveTransfer` (one record per
 * token, capped), Chainlink-style `AnswerUpdated`, and the ABI word readers the marketplace decoders in venues/
 * use. Pure functions over raw logs.
 */

import type { Activity, ContractType, Kind, SaleTerms } from "../sources/own-index/index.js";

export const TOPIC = {
  transfer: "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
  transferSingle: "0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
  transferBatch: "0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
  /** ERC-2309 `ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId, address indexed from, address indexed to)` */
  consecutiveTransfer: "0xdeaa91b6123d068f5821d0fb0678463d1a8a6079fe8af5de3ce5e896dcf9133d",
  /** `AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)` */
  answerUpdated: "0x0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f",
} as const;

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
/** ERC-2309 ranges larger than this are not expanded (reported as skipped): a hostile log could claim 2^256 tokens. */
export const CONSECUTIVE_CAP = 10_000;

/** The record types are the store's (record.ts); the decoders name them from here. */
export type { Activity, ContractType, Kind, SaleTerms };

export interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
  /** The block's timestamp, where the node gives it on each log (anvil, geth ≥ 1.16, erigon, besu). */
  blockTimestamp?: unknown;
}

/** The standard a transfer log shows. */
export type Standard = "ERC721" | "ERC1155";

// ---- ABI words: `data` is 0x-prefixed hex, a word is 64 hex digits ----

export const word = (data: string, index: number): string => data.slice(2 + index * 64, 2 + (index + 1) * 64);
export const wordBig = (data: string, index: number): bigint => BigInt(`0x${word(data, index) || "0"}`);
/** A small word (offset, length, enum) as a number; huge values become unsafe integers that `fits` refuses. */
export const wordNumber = (data: string, index: number): number => Number(wordBig(data, index));
export const topicAddress = (topic: string): string => `0x${topic.slice(26).toLowerCase()}`;
export const wordAddress = (data: string, index: number): string => `0x${word(data, index).slice(24).toLowerCase()}`;
export const wordCount = (data: string): number => Math.floor((data.length - 2) / 64);
export const topic0 = (log: RawLog): string | undefined => log.topics[0]?.toLowerCase();

/** Whether an array of `count` items of `size` words, its length word at word `at`, lies inside `data`. */
export function fits(data: string, at: number, count: number, size: number): boolean {
  return Number.isInteger(at) && at >= 0 && Number.isSafeInteger(count) && at + 1 + count * size <= wordCount(data);
}

/** The dynamic `uint256[]` whose offset (in bytes from `start`) is at word `head`; undefined when it does not fit. */
export function readUintArray(data: string, head: number, start = 0): bigint[] | undefined {
  const at = start + wordNumber(data, head) / 32;
  const count = wordNumber(data, at);
  if (!fits(data, at, count, 1)) return undefined;
  return Array.from({ length: count }, (_, i) => wordBig(data, at + 1 + i));
}

/** Chain position and hashes of a log, lower case. */
export function base(log: RawLog) {
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
export function transferRecord(
  log: RawLog,
  contractType: Activity["contractType"],
  from: string,
  to: string,
  tokenId: bigint,
  quantity: bigint,
  batchIndex = 0,
): Activity {
  // Written out rather than spread from base(): this runs once per record, and a spread copies through a
  // temporary object.
  return {
    blockNumber: Number.parseInt(log.blockNumber, 16),
    logIndex: Number.parseInt(log.logIndex, 16),
    batchIndex,
    kind: transferKind(from, to),
    contract: log.address.toLowerCase(),
    tokenId: tokenId.toString(),
    from,
    to,
    quantity: quantity === 1n ? "1" : quantity.toString(),
    txHash: log.transactionHash.toLowerCase(),
    blockHash: log.blockHash.toLowerCase(),
    contractType,
  };
}

/**
 * ERC-721 `Transfer` / ERC-1155 `TransferSingle` / `TransferBatch` / ERC-2309 `ConsecutiveTransfer` → records (none
 * for anything else). `skipped` is told of a consecutive range beyond CONSECUTIVE_CAP, which yields no record.
 */
export function decodeTransfer(log: RawLog, skipped?: () => void): Activity[] {
  const topic = topic0(log);
  if (topic === TOPIC.consecutiveTransfer) return decodeConsecutive(log, skipped);
  if (topic === TOPIC.transfer) {
    // Same topic as ERC-20 Transfer; only the indexed token id (a fourth topic) makes it ERC-721.
    if (log.topics.length !== 4) return [];
    const [from, to] = [topicAddress(log.topics[1]!), topicAddress(log.topics[2]!)];
    return [transferRecord(log, "ERC721", from, to, BigInt(log.topics[3]!), 1n)];
  }
  if ((topic !== TOPIC.transferSingle && topic !== TOPIC.transferBatch) || log.topics.length !== 4) return [];
  // ERC-1155: topic 1 is the operator.
  const [from, to] = [topicAddress(log.topics[2]!), topicAddress(log.topics[3]!)];
  if (topic === TOPIC.transferSingle) {
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

/** ERC-2309: tokens `fromTokenId..toTokenId` move at once; one record each, `batchIndex` = offset in the range. */
function decodeConsecutive(log: RawLog, skipped?: () => void): Activity[] {
  if (log.topics.length !== 4 || wordCount(log.data) < 1) return [];
  const first = BigInt(log.topics[1]!);
  const last = wordBig(log.data, 0);
  if (last < first) return [];
  if (last - first >= BigInt(CONSECUTIVE_CAP)) {
    skipped?.();
    return [];
  }
  const [from, to] = [topicAddress(log.topics[2]!), topicAddress(log.topics[3]!)];
  return Array.from({ length: Number(last - first) + 1 }, (_, i) =>
    transferRecord(log, "ERC721", from, to, first + BigInt(i), 1n, i),
  );
}

/** Chainlink-style `AnswerUpdated`: the signed answer (int256 in topic 1). */
export function decodeAnswer(log: RawLog): bigint | undefined {
  if (log.topics[0]?.toLowerCase() !== TOPIC.answerUpdated || log.topics.length < 2) return undefined;
  return BigInt.asIntN(256, BigInt(log.topics[1]!));
}

/** Exact decimal string of `amount / 10^decimals`, without trailing zeros: 975000000000000000n, 18 → "0.975". */
export { decimalText as formatUnits } from "../core/exact-decimals.js";
