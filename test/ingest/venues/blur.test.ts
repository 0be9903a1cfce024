/**
 * Blur's decoder on logs laid out as its exchanges emit them: v1's `OrdersMatched` (both orders: the sell order's
 * trader sells, in its payment token), v2's packed `Execution721*` events and its unpacked `Execution` (one side of
 * the trade; the transaction's sender is the other: side 0 the trader sold for ETH, side 1 the trader bought in Blur
 * Pool). Events from the other version's address, without the transaction, or with unknown sides are not understood.
 */
import { describe, expect, it } from "vitest";
import { BLUR_POOL } from "../../../src/chain/tokens.js";
import { TOPIC } from "../../../src/ingest/decode.js";
import { blur } from "../../../src/ingest/venues/blur.js";
import type { TransactionInfo } from "../../../src/ingest/venues/venue.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, decodeLast, ETH, erc721, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const BLUR_V1 = "0x000000000000ad05ccc4f10045630fb830b95127";
const BLUR_V2 = "0xb2ecfe4e4d61f8790bbb9de2d1259b9e2410cea5";
const TOPICS = {
  ordersMatched: "0x61cbb2a3dee0b6064c2e681aadd61677fb4ef319f0b547508d495626f5a62f64",
  execution721Packed: "0x1d5e12b51dee5e4d34434576c3fb99714a85f57b0fd546ada4b0bddd736d12b2",
  execution721TakerFeePacked: "0x0fcf17fac114131b10f37b183c6a60f905911e52802caeeb3e6ea210398b81ab",
  execution721MakerFeePacked: "0x7dc5c0699ac8dd5250cbe368a2fc3b4a2daadb120ad07f6cccea29f83482686e",
  execution: "0xf2f66294df6fae7ac681cbe2f6d91c6904485929679dce263e8f6539b7d5c559",
};
const TAKER = address(0x7a4e);
const sentBy = (from: string): TransactionInfo => ({ from, to: BLUR_V2, input: "0x", value: "0x0" });

/** A v1 order's 13 head words: trader, side, matchingPolicy, collection, tokenId, amount, paymentToken, price, …. */
const order = (trader: string, side: number, tokenId: number, amount: number, paymentToken: string, price: bigint) =>
  word(trader) +
  word(side) +
  word(0) +
  word(NFT) +
  word(tokenId) +
  word(amount) +
  word(paymentToken) +
  word(price) +
  word(0).repeat(5);
/** `OrdersMatched(maker, taker, sell, sellHash, buy, buyHash)`: the data holds offset(sell), sellHash, offset(buy), buyHash. */
const ordersMatched = (sell: string, buy: string, at = BLUR_V1, sellOffset = 4 * 32) =>
  log(
    at,
    [TOPICS.ordersMatched, topic(SELLER), topic(BUYER)],
    word(sellOffset) + word(0x5e) + word((4 + 13) * 32) + word(0xb0) + sell + buy,
  );

/** The packed words: tokenId << 168 | listingIndex << 160 | trader, and side << 248 | price << 160 | collection. */
const packed = (topic0: string, trader: string, tokenId: bigint, side: bigint, price: bigint, at = BLUR_V2) =>
  log(
    at,
    [topic0],
    word(0x0123) +
      word((tokenId << 168n) | (3n << 160n) | BigInt(trader)) +
      word((side << 248n) | (price << 160n) | BigInt(NFT)),
  );

/** `Execution(Transfer(trader, id, amount, collection, assetType), orderHash, listingIndex, price, makerFee(2), fees(4), orderType)`. */
const execution = (trader: string, id: number, amount: number, assetType: number, price: bigint, orderType: number) =>
  log(
    BLUR_V2,
    [TOPICS.execution],
    word(trader) +
      word(id) +
      word(amount) +
      word(NFT) +
      word(assetType) +
      word(0x0e) +
      word(0) +
      word(price) +
      word(0).repeat(6) +
      word(orderType),
  );

describe("Blur v1 OrdersMatched", () => {
  it("reads the sell order's trader selling to the buy order's trader, at the sell order's price in its token", () => {
    const matched = ordersMatched(order(SELLER, 1, 7, 0, BLUR_POOL, ETH), order(BUYER, 0, 7, 0, BLUR_POOL, ETH));
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 7), matched]))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "7",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "blur",
        currency: BLUR_POOL,
        amount: ETH,
      },
    ]);
    const inEth = ordersMatched(order(SELLER, 1, 7, 0, address(0), ETH / 2n), order(BUYER, 0, 7, 0, address(0), 1n));
    expect(saleView(decodeLast([inEth]))?.[0]).toMatchObject({ currency: null, amount: ETH / 2n });
  });

  it("names the standard from the transaction's ERC-1155 transfer of the collection, else from the amount", () => {
    const single = log(NFT, [TOPIC.transferSingle, topic(SELLER), topic(SELLER), topic(BUYER)], word(7) + word(1));
    const one = ordersMatched(order(SELLER, 1, 7, 1, address(0), ETH), order(BUYER, 0, 7, 1, address(0), ETH));
    expect(saleView(decodeLast([single, one]))?.[0]).toMatchObject({ quantity: "1", type: "ERC1155" });
    const five = ordersMatched(order(SELLER, 1, 7, 5, address(0), ETH), order(BUYER, 0, 7, 5, address(0), ETH));
    expect(saleView(decodeLast([five]))?.[0]).toMatchObject({ quantity: "5", type: "ERC1155" });
  });

  it("does not understand orders on the wrong sides, offsets off a word or out of the data, or v2's address", () => {
    const sell = order(SELLER, 1, 7, 0, address(0), ETH);
    const buy = order(BUYER, 0, 7, 0, address(0), ETH);
    expect(decodeLast([ordersMatched(buy, sell)])).toBeUndefined();
    expect(decodeLast([ordersMatched(sell, buy, BLUR_V1, 4 * 32 + 1)])).toBeUndefined();
    expect(decodeLast([ordersMatched(sell, buy, BLUR_V1, 40 * 32)])).toBeUndefined();
    expect(decodeLast([ordersMatched(sell, buy, BLUR_V2)])).toBeUndefined();
    expect(decodeLast([ordersMatched(sell, buy)])).toHaveLength(1);
  });
});

describe("Blur v2", () => {
  it("asks for the transaction of its v2 events only", () => {
    expect(blur.needsTransaction?.(TOPICS.ordersMatched)).toBe(false);
    for (const t of [TOPICS.execution721Packed, TOPICS.execution721TakerFeePacked, TOPICS.execution]) {
      expect(blur.needsTransaction?.(t)).toBe(true);
    }
  });

  it("reads a packed side 0 as the trader selling to the sender for ETH, side 1 as the trader buying in Blur Pool", () => {
    const listing = packed(TOPICS.execution721TakerFeePacked, SELLER, 2n ** 80n + 1n, 0n, ETH);
    expect(saleView(decodeLast([listing], sentBy(TAKER)))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: (2n ** 80n + 1n).toString(),
        seller: SELLER,
        buyer: TAKER,
        quantity: "1",
        type: "ERC721",
        marketplace: "blur",
        currency: null,
        amount: ETH,
      },
    ]);
    const bid = packed(TOPICS.execution721MakerFeePacked, BUYER, 9n, 1n, 2n ** 88n - 1n);
    expect(saleView(decodeLast([bid], sentBy(TAKER)))?.[0]).toMatchObject({
      tokenId: "9",
      seller: TAKER,
      buyer: BUYER,
      currency: BLUR_POOL,
      amount: 2n ** 88n - 1n,
    });
  });

  it("reads the unpacked Execution: ERC-1155 with its amount, and the order type as the side", () => {
    expect(saleView(decodeLast([execution(BUYER, 4, 3, 1, ETH, 1)], sentBy(TAKER)))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "4",
        seller: TAKER,
        buyer: BUYER,
        quantity: "3",
        type: "ERC1155",
        marketplace: "blur",
        currency: BLUR_POOL,
        amount: ETH,
      },
    ]);
    expect(saleView(decodeLast([execution(SELLER, 4, 1, 0, ETH, 0)], sentBy(TAKER)))?.[0]).toMatchObject({
      seller: SELLER,
      buyer: TAKER,
      type: "ERC721",
      currency: null,
    });
  });

  it("does not understand v2 events without their transaction, with an unknown side or asset, or from v1's address", () => {
    const listing = packed(TOPICS.execution721Packed, SELLER, 1n, 0n, ETH);
    expect(decodeLast([listing], sentBy(TAKER))).toHaveLength(1);
    expect(decodeLast([listing])).toBeUndefined();
    expect(decodeLast([packed(TOPICS.execution721Packed, SELLER, 1n, 2n, ETH)], sentBy(TAKER))).toBeUndefined();
    expect(
      decodeLast([packed(TOPICS.execution721Packed, SELLER, 1n, 0n, ETH, BLUR_V1)], sentBy(TAKER)),
    ).toBeUndefined();
    expect(decodeLast([execution(SELLER, 4, 1, 2, ETH, 0)], sentBy(TAKER))).toBeUndefined();
    expect(decodeLast([execution(SELLER, 4, 1, 0, ETH, 2)], sentBy(TAKER))).toBeUndefined();
    expect(decodeLast([execution(SELLER, 4, 1, 0, ETH, 0)])).toBeUndefined();
  });
});
