/**
 * Logs → records on their own (src/ingest/log-decoder.ts, record.ts, pricing.ts): an `eth_getLogs` answer
 * decoded without a node, priced through a real SQLite index (its token and feed-answer tables), each record built
 * in one shape and stamped with its block's time.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RawLog, TOPIC } from "../../src/ingest/decode.js";
import { LogDecoder } from "../../src/ingest/log-decoder.js";
import { Pricing } from "../../src/ingest/pricing.js";
import { MAINNET_SEAPORTS, venueTable } from "../../src/ingest/venues/index.js";
import { ORDER_FULFILLED } from "../../src/ingest/venues/seaport.js";
import { recordOf, stampTimes } from "../../src/sources/own-index/record.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { address, orderFulfilledData, topic } from "../support/index-helpers.js";

const NFT = address(0xa1);
const OTHER_NFT = address(0xa2);
const FEED = address(0xfeed);
const SELLER = address(0x5e11);
const BUYER = address(0xb0b);
const SEAPORT = MAINNET_SEAPORTS[0]!;
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

let dir: string;
let store: IndexStore;
/** Addresses whose `decimals()` the pricing asked the "node" for. */
const asked: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-decoder-"));
  store = await IndexStore.open(join(dir, "index.sqlite"));
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A decoder as the indexer builds one, over the whole chain or `contracts`, with the ETH/USD feed at FEED. */
async function decoder(contracts?: string[]) {
  const pricing = new Pricing(FEED, new Set(), store, async (token) => {
    asked.push(token);
    return token === FEED ? 8 : undefined;
  });
  await pricing.start();
  return new LogDecoder({
    venues: venueTable(MAINNET_SEAPORTS),
    contracts: contracts ? new Set(contracts) : undefined,
    feed: FEED,
    loadTransactions: async () => {},
    transaction: () => undefined,
    priceOf: (sale, answer) => pricing.priceOf(sale, answer),
  });
}

function log(block: number, index: number, tx: number, at: string, topics: string[], data = "0x"): RawLog {
  return {
    address: at,
    topics,
    data,
    blockNumber: `0x${block.toString(16)}`,
    blockHash: hash(block),
    transactionHash: hash(1_000 + tx),
    logIndex: `0x${index.toString(16)}`,
  };
}

const mint = (block: number, index: number, tx: number, token: number) =>
  log(block, index, tx, NFT, [TOPIC.transfer, topic(0), topic(SELLER), topic(token)]);
const sale = (block: number, index: number, tx: number, token: number, wei: bigint) =>
  log(
    block,
    index,
    tx,
    SEAPORT,
    [ORDER_FULFILLED, topic(SELLER), topic(0)],
    `0x${orderFulfilledData(BUYER, [{ itemType: 2, token: NFT, identifier: token, amount: 1 }], [{ itemType: 0, token: address(0), identifier: 0, amount: wei, recipient: SELLER }])}`,
  );
const feedAnswer = (block: number, index: number, tx: number, usd: bigint) =>
  log(block, index, tx, FEED, [TOPIC.answerUpdated, topic(usd), topic(1)], `0x${"0".repeat(64)}`);

/** An answer of one block: the mint, a sale before the feed's answer, the answer ($2,000), a sale after it. */
const answer = (): RawLog[] => [
  mint(5, 0, 1, 7),
  sale(6, 0, 2, 7, 10n ** 18n),
  feedAnswer(6, 1, 3, 2_000n * 10n ** 8n),
  sale(7, 0, 4, 7, 15n * 10n ** 17n),
  // An ERC-20 Transfer (three topics) on the same topic gives no record.
  log(7, 1, 5, OTHER_NFT, [TOPIC.transfer, topic(BUYER), topic(SELLER)], `0x${"0".repeat(63)}1`),
];

describe("the log decoder", () => {
  it("decodes transfers and sales into rows of one shape, a sale before the feed's first answer left for the commit", async () => {
    const decoded = await (await decoder()).decode(() => [answer()]);
    expect(decoded.logs).toBe(5);
    expect(decoded.records.map((r) => [r.block_number, r.kind, r.price, r.price_usd])).toEqual([
      [5, "mint", null, null],
      [6, "sale", "1", null],
      [7, "sale", "1.5", "3000"],
    ]);
    expect(decoded.answers).toEqual([{ block: 6, log: 1, answer: 2_000n * 10n ** 8n }]);
    expect(decoded.unpriced).toHaveLength(1);
    expect(decoded.unpriced[0]!.row).toBe(decoded.records[1]);
    expect(decoded.blocks).toEqual(
      new Map([
        [5, hash(5)],
        [6, hash(6)],
        [7, hash(7)],
      ]),
    );
    expect(decoded.mixed).toBe(false);
    // Every row has the same columns, whatever its kind.
    const columns = Object.keys(decoded.records[0]!).sort();
    for (const row of decoded.records) expect(Object.keys(row).sort()).toEqual(columns);
  });

  it("decodes an answer out of chain order as the same answer in order", async () => {
    const inOrder = await (await decoder()).decode(() => [answer()]);
    const reversed = await (await decoder()).decode(() => [answer().reverse()]);
    expect(reversed.records).toEqual(inOrder.records);
    expect(reversed.answers).toEqual(inOrder.answers);
  });

  it("keeps only the watched contracts' records, counts removed logs without records, and sees a block with two hashes", async () => {
    const removed = { ...mint(8, 2, 8, 11), removed: true };
    const otherHash = { ...mint(8, 1, 7, 10), blockHash: hash(99) };
    const decoded = await (await decoder([OTHER_NFT])).decode(() => [
      [...answer(), mint(8, 0, 6, 9), otherHash, removed],
    ]);
    expect(decoded.records).toEqual([]);
    expect(decoded.logs).toBe(8);
    expect(decoded.mixed).toBe(true);
  });

  it("prices a pending sale at the commit with the answer in force before its range, and reads a token's decimals once", async () => {
    const pricing = new Pricing(FEED, new Set(), store, async (token) => {
      asked.push(token);
      return token === FEED ? 8 : undefined;
    });
    await pricing.start();
    await store.commitRange({
      records: [],
      blocks: [],
      answers: [{ block: 3, log: 0, answer: 1_000n * 10n ** 8n }],
      lastBlock: 4,
    });
    const decoded = await (await decoder()).decode(() => [answer()]);
    await pricing.priceBefore(5, decoded.unpriced);
    expect(decoded.records[1]!.price_usd).toBe("1000");
    const before = asked.length;
    const token = address(0x70c);
    const a = await pricing.priceOf({ marketplace: "seaport", currency: token, amount: 123n }, undefined);
    const b = await pricing.priceOf({ marketplace: "seaport", currency: token, amount: 123n }, undefined);
    // No decimals() answer: 18 assumed, kept in the index; a token not worth one ETH gets no USD price.
    expect([a, b]).toEqual([
      { price: "0.000000000000000123", usd: null },
      { price: "0.000000000000000123", usd: null },
    ]);
    expect(await store.tokenDecimals(token)).toBe(18);
    expect(asked.length).toBe(before + 1);
  });
});

describe("the record", () => {
  it("takes its block's timestamp from the range's headers", () => {
    const header = (n: number, time: number) => ({
      number: `0x${n.toString(16)}`,
      hash: hash(n),
      parentHash: hash(n - 1),
      timestamp: `0x${time.toString(16)}`,
    });
    const activity = {
      blockNumber: 5,
      logIndex: 0,
      batchIndex: 0,
      kind: "mint" as const,
      contract: NFT,
      tokenId: "7",
      from: address(0),
      to: SELLER,
      quantity: "1",
      txHash: hash(1),
      blockHash: hash(5),
      contractType: "ERC721" as const,
    };
    const rows = [recordOf(activity), recordOf({ ...activity, blockNumber: 6 })];
    expect(rows.map((r) => r.timestamp)).toEqual([0, 0]);
    // Block 5's logs carried no timestamp (its header tells); block 6's did.
    stampTimes(
      rows,
      new Map([
        [5, null],
        [6, 1_700_000_013],
      ]),
      new Map([
        [5, header(5, 1_700_000_000)],
        [6, header(6, 1_700_000_012)],
      ]),
    );
    expect(rows.map((r) => r.timestamp)).toEqual([1_700_000_000, 1_700_000_013]);
    expect(rows[0]).toMatchObject({ marketplace: null, currency: null, price: null, price_usd: null });
  });
});
