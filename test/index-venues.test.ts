/**
 * The marketplace decoders on logs laid out as each venue's contract emits them (the layouts in each venue's file),
 * for the cases the real fixtures (test/index-mainnet.test.ts) do not hold: LooksRare, Sudoswap, Wyvern,
 * CryptoPunks with its accepted-bid bug, ERC-2309 and Seaport attribution. Hostile data yields no record.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CONSECUTIVE_CAP, decodeTransfer, type RawLog, TOPIC, WETH } from "../src/sources/index/decode.js";
import { CRYPTOPUNKS } from "../src/sources/index/venues/cryptopunks.js";
import { venueTable } from "../src/sources/index/venues/index.js";
import { LOOKSRARE_V1, LOOKSRARE_V2 } from "../src/sources/index/venues/looksrare.js";
import { ORDER_FULFILLED } from "../src/sources/index/venues/seaport.js";
import type { TransactionInfo } from "../src/sources/index/venues/venue.js";
import { WYVERN_V2 } from "../src/sources/index/venues/wyvern.js";
import { address, orderFulfilledData, topic, word } from "./index-helpers.js";

const table = venueTable();
const NFT = address(0x721);
const SELLER = address(0x5e11);
const BUYER = address(0xb0b);
const PAIR = address(0x9a1);
const ETH = 10n ** 18n;
const TX = `0x${"cd".repeat(32)}`;

let index = 0;
function log(at: string, topics: string[], data = ""): RawLog {
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
const erc721 = (from: string, to: string, id: number) => log(NFT, [TOPIC.transfer, topic(from), topic(to), topic(id)]);
const erc20 = (token: string, from: string, to: string, amount: bigint) =>
  log(token, [TOPIC.transfer, topic(from), topic(to)], word(amount));

/** Decodes the last log of a transaction made of `logs`, as the indexer does. */
function decodeLast(logs: RawLog[], transaction?: TransactionInfo) {
  const last = logs[logs.length - 1]!;
  const venue = table.byTopic.get(last.topics[0]!)!;
  return venue.decode(last, { logs, transaction });
}
const TOPICS = {
  lrTakerBid: "0x95fb6205e23ff6bda16a2d1dba56b9ad7c783f67c96fa149785052f47696f2be",
  lrTakerAsk: "0x68cd251d4d267c6e2034ff0088b990352b97b2002c0476587d0c4da889c11330",
  lr2TakerBid: "0x3ee3de4684413690dee6fff1a0a4f92916a1b97d1c5a83cdf24671844306b2e3",
  sudoV1Out: "0xbc479dfc6cb9c1a9d880f987ee4b30fa43dd7f06aec121db685b67d587c93c93",
  sudoV1In: "0x3614eb567740a0ee3897c0e2b11ad6a5720d2e4438f9c8accf6c95c24af3a470",
  sudoV2OutIds: "0xa13c46268c53408442d94eb370f2e476cb7f0fbe027ae5bad73ce13d4469c8b9",
  wyvern: "0xc4109843e0b7d514e4c093114b863f8e7d8d9a458c372cd51bfe526b588006c9",
  punkBought: "0x58e5d5a525e3b40bc15abaa38b5882678db1ee68befd2f60bafe3a7fd06db9e3",
  punkTransfer: "0x05af636b70da6819000c49f85b21fa82081c632069bb626f30932034099107d8",
};

const saleView = (records: ReturnType<typeof decodeLast>) =>
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

describe("LooksRare", () => {
  const v1 = (topic0: string, taker: string, maker: string, amount: bigint) =>
    log(
      LOOKSRARE_V1,
      [topic0, topic(taker), topic(maker), topic(address(0x57a7))],
      word(1) + word(2) + word(WETH) + word(NFT) + word(7) + word(1) + word(amount),
    );

  it("v1: TakerBid = the taker bought the maker's listing; TakerAsk = the taker sold into the maker's bid", () => {
    const bid = [erc721(SELLER, BUYER, 7), v1(TOPICS.lrTakerBid, BUYER, SELLER, ETH / 2n)];
    expect(saleView(decodeLast(bid))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "7",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "looksrare",
        currency: WETH,
        amount: ETH / 2n,
      },
    ]);
    const ask = [erc721(SELLER, BUYER, 7), v1(TOPICS.lrTakerAsk, SELLER, BUYER, ETH)];
    expect(saleView(decodeLast(ask))?.[0]).toMatchObject({ seller: SELLER, buyer: BUYER, amount: ETH });
  });

  it("v2: gross price = the three fee amounts, one sale per item, split evenly", () => {
    // TakerBid((hash, nonce, invalidated), bidUser, bidRecipient, strategyId, currency, collection, itemIds, amounts, feeRecipients[2], feeAmounts[3])
    const head = word(0x11) + word(0) + word(1) + word(BUYER) + word(BUYER) + word(0) + word(0) + word(NFT);
    const idsAt = 15 * 32;
    const amountsAt = idsAt + 3 * 32;
    const data =
      head +
      word(idsAt) +
      word(amountsAt) +
      word(SELLER) +
      word(0) +
      word(97n * 10n ** 16n) +
      word(0) +
      word(3n * 10n ** 16n) +
      word(2) +
      word(5) +
      word(6) +
      word(2) +
      word(1) +
      word(1);
    const records = decodeLast([log(LOOKSRARE_V2, [TOPICS.lr2TakerBid], data)]);
    expect(saleView(records)).toEqual(
      ["5", "6"].map((tokenId) => ({
        kind: "sale",
        contract: NFT,
        tokenId,
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "looksrare",
        currency: null,
        amount: ETH / 2n,
      })),
    );
    expect(records?.map((r) => r.batchIndex)).toEqual([0, 1]);
  });
});

describe("Sudoswap", () => {
  it("v1 ERC-20 pool: the NFTs that left the pair, priced by the tokens that entered it", () => {
    const logs = [
      erc20(WETH, BUYER, PAIR, 3n * ETH),
      erc721(PAIR, BUYER, 1),
      erc721(PAIR, BUYER, 2),
      log(PAIR, [TOPICS.sudoV1Out]),
    ];
    expect(saleView(decodeLast(logs))).toEqual(
      ["1", "2"].map((tokenId) => ({
        kind: "sale",
        contract: NFT,
        tokenId,
        seller: PAIR,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "sudoswap",
        currency: WETH,
        amount: (3n * ETH) / 2n,
      })),
    );
  });

  it("v1 ETH pool: the sale is kept, its price marked unknown (no log shows the ETH)", () => {
    const logs = [erc721(SELLER, PAIR, 4), log(PAIR, [TOPICS.sudoV1In])];
    expect(saleView(decodeLast(logs))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "4",
        seller: SELLER,
        buyer: PAIR,
        quantity: "1",
        type: "ERC721",
        marketplace: "sudoswap",
        currency: null,
        amount: null,
      },
    ]);
  });

  it("v2: the event's amount; a swap with no NFT moving from the pair is not understood", () => {
    const data = word(ETH) + word(64) + word(1) + word(9);
    expect(saleView(decodeLast([erc721(PAIR, BUYER, 9), log(PAIR, [TOPICS.sudoV2OutIds], data)]))?.[0]).toMatchObject({
      tokenId: "9",
      seller: PAIR,
      buyer: BUYER,
      currency: null,
      amount: ETH,
    });
    expect(decodeLast([log(PAIR, [TOPICS.sudoV2OutIds], data)])).toBeUndefined();
  });
});

describe("Wyvern", () => {
  const matched = (price: bigint) =>
    log(WYVERN_V2, [TOPICS.wyvern, topic(SELLER), topic(BUYER), topic(0)], word(1) + word(2) + word(price));

  it("reads the NFT and the parties from the match's transfer, the currency from what the buyer paid", () => {
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 3), matched(2n * ETH)]))?.[0]).toMatchObject({
      tokenId: "3",
      seller: SELLER,
      buyer: BUYER,
      marketplace: "opensea",
      currency: null,
      amount: 2n * ETH,
    });
    const withWeth = [erc20(WETH, BUYER, SELLER, ETH), erc721(SELLER, BUYER, 3), matched(ETH)];
    expect(saleView(decodeLast(withWeth))?.[0]).toMatchObject({ currency: WETH, amount: ETH });
  });

  it("does not take a bundle for a sale", () => {
    expect(decodeLast([erc721(SELLER, BUYER, 3), erc721(SELLER, BUYER, 4), matched(ETH)])).toBeUndefined();
  });
});

describe("CryptoPunks", () => {
  const punkTransfer3 = (from: string, to: string) =>
    log(CRYPTOPUNKS, [TOPIC.transfer, topic(from), topic(to)], word(1));
  const bought = (punk: number, value: bigint, from: string, to: string) =>
    log(CRYPTOPUNKS, [TOPICS.punkBought, topic(punk), topic(from), topic(to)], word(value));

  it("a purchase: a sale without contract type, and the punk's transfer at the contract's Transfer log", () => {
    const logs = [punkTransfer3(SELLER, BUYER), bought(7804, 4200n * ETH, SELLER, BUYER)];
    const records = decodeLast(logs)!;
    expect(saleView(records)).toEqual([
      {
        kind: "transfer",
        contract: CRYPTOPUNKS,
        tokenId: "7804",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
      },
      {
        kind: "sale",
        contract: CRYPTOPUNKS,
        tokenId: "7804",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
        marketplace: "cryptopunks",
        currency: null,
        amount: 4200n * ETH,
      },
    ]);
    expect(records[0]!.logIndex).toBe(Number(logs[0]!.logIndex));
  });

  it("an accepted bid (logged with price 0 and buyer 0x0): buyer from the Transfer, price from acceptBidForPunk", () => {
    const logs = [punkTransfer3(SELLER, BUYER), bought(9354, 0n, SELLER, address(0))];
    const call = `0x23165b75${word(9354)}${word(3n * 10n ** 17n)}`;
    const tx = { from: SELLER, to: CRYPTOPUNKS, input: call, value: "0x0" };
    expect(saleView(decodeLast(logs, tx))?.[1]).toMatchObject({
      seller: SELLER,
      buyer: BUYER,
      amount: 3n * 10n ** 17n,
    });
    // Through another contract the call is not readable: the price stays unknown, the buyer is still repaired.
    const viaContract = { ...tx, to: address(0xc0de), input: "0x12345678" };
    expect(saleView(decodeLast(logs, viaContract))?.[1]).toMatchObject({ buyer: BUYER, amount: null });
  });

  it("a PunkTransfer is a transfer record", () => {
    const transfer = log(CRYPTOPUNKS, [TOPICS.punkTransfer, topic(SELLER), topic(BUYER)], word(42));
    expect(saleView(decodeLast([transfer]))).toEqual([
      {
        kind: "transfer",
        contract: CRYPTOPUNKS,
        tokenId: "42",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: null,
      },
    ]);
  });
});

describe("ERC-2309 ConsecutiveTransfer", () => {
  const consecutive = (first: bigint, last: bigint) =>
    log(NFT, [TOPIC.consecutiveTransfer, topic(first), topic(0), topic(BUYER)], word(last));

  it("becomes one mint per token, in order", () => {
    const records = decodeTransfer(consecutive(10n, 12n));
    expect(records.map((r) => [r.kind, r.tokenId, r.to, r.batchIndex])).toEqual([
      ["mint", "10", BUYER, 0],
      ["mint", "11", BUYER, 1],
      ["mint", "12", BUYER, 2],
    ]);
  });

  it(`stops at ${CONSECUTIVE_CAP} tokens per event and reports the rest as skipped`, () => {
    let skipped = 0;
    expect(decodeTransfer(consecutive(0n, BigInt(CONSECUTIVE_CAP - 1)), () => skipped++)).toHaveLength(CONSECUTIVE_CAP);
    expect(decodeTransfer(consecutive(0n, BigInt(CONSECUTIVE_CAP)), () => skipped++)).toEqual([]);
    expect(decodeTransfer(consecutive(0n, 2n ** 256n - 1n), () => skipped++)).toEqual([]);
    expect(skipped).toBe(2);
  });
});

describe("Seaport attribution", () => {
  const fill = (zone: string, feeTo: string) =>
    log(
      "0x0000000000000068f116a894984e2db1123eb395",
      [ORDER_FULFILLED, topic(SELLER), topic(zone)],
      orderFulfilledData(
        BUYER,
        [{ itemType: 2, token: NFT, identifier: 1, amount: 1 }],
        [
          { itemType: 0, token: address(0), identifier: 0, amount: 9n, recipient: SELLER },
          { itemType: 0, token: address(0), identifier: 0, amount: 1n, recipient: feeTo },
        ],
      ),
    );

  it("opensea for OpenSea's fee wallets or zones, seaport otherwise", () => {
    const market = (l: RawLog) => decodeLast([l])?.[0]?.sale?.marketplace;
    expect(market(fill(address(0), "0x0000a26b00c1f0df003000390027140000faa719"))).toBe("opensea");
    expect(market(fill("0x000056f7000000ece9003ca63978907a00ffd100", address(0xfee)))).toBe("opensea");
    expect(market(fill(address(0), address(0xfee)))).toBe("seaport");
  });
});

describe("every venue on hostile data", () => {
  it("never throws, and yields records only with sane fields", () => {
    const topics = [...table.byTopic.keys()];
    fc.assert(
      fc.property(
        fc.constantFrom(...topics),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        (topic0, words, topicCount) => {
          const venue = table.byTopic.get(topic0)!;
          const at = venue.addresses === "any" ? PAIR : venue.addresses[0]!;
          const l = log(
            at,
            [topic0, ...Array.from({ length: topicCount - 1 }, (_, i) => topic(words[i] ?? 0n))],
            words.map(word).join(""),
          );
          const records = venue.decode(l, {
            logs: [erc721(PAIR, BUYER, 1), l],
            transaction: { from: BUYER, to: at, input: "0x", value: "0x0" },
          });
          for (const r of records ?? []) {
            expect(r.contract).toMatch(/^0x[0-9a-f]{40}$/);
            expect(r.tokenId).toMatch(/^\d+$/);
            expect(r.from).toMatch(/^0x[0-9a-f]{40}$/);
            expect(r.to).toMatch(/^0x[0-9a-f]{40}$/);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
