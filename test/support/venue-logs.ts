/**
 * Logs laid out as a venue's contract emits them, for the decoder tests in test/ingest/venues/ that need no chain:
 * one transaction's logs (the same hash, log indexes counting up), ERC-721 and ERC-20 transfers among them, and the
 * decoding the indexer does (the last log through the venue table, with the transaction's other logs).
 */
import { type RawLog, TOPIC } from "../../src/ingest/decode.js";
import { venueTable } from "../../src/ingest/venues/index.js";
import type { TransactionInfo } from "../../src/ingest/venues/venue.js";
import { address, topic, word } from "./index-helpers.js";

export const table = venueTable();
export const NFT = address(0x721);
export const SELLER = address(0x5e11);
export const BUYER = address(0xb0b);
export const PAIR = address(0x9a1);
export const ETH = 10n ** 18n;
export const TX = `0x${"cd".repeat(32)}`;

let index = 0;
/** A log of transaction TX at `at`; each one made takes the next log index. */
export function log(at: string, topics: string[], data = ""): RawLog {
  return {
    address: at,
    topics,
    data: `0x${data}`,
    blockNumber: "0x10",
    blockHash: `0x${"ab".repeat(32)}`,
    transactionHash: TX,
    logIndex: `0x${(index++).toString(16)}`,
  };
}
export const erc721 = (from: string, to: string, id: number) =>
  log(NFT, [TOPIC.transfer, topic(from), topic(to), topic(id)]);
export const erc20 = (token: string, from: string, to: string, amount: bigint) =>
  log(token, [TOPIC.transfer, topic(from), topic(to)], word(amount));

/** Decodes the last log of a transaction made of `logs`, as the indexer does. */
export function decodeLast(logs: RawLog[], transaction?: TransactionInfo) {
  const last = logs[logs.length - 1]!;
  const venue = table.byTopic.get(last.topics[0]!)!;
  return venue.decode(last, { logs, transaction });
}

/** The fields of decoded records a sale is judged by. */
export const saleView = (records: ReturnType<typeof decodeLast>) =>
  records?.map((r) => ({
    kind: r.kind,
    contract: r.contract,
    tokenId: r.tokenId,
    seller: r.from,
    buyer: r.to,
    quantity: r.quantity,
    type: r.contractType,
    ...(r.sale ? { marketplace: r.sale.marketplace, currency: r.sale.currency, amount: r.sale.amount } : {}),
  }));
