/**
 * X2Y2's decoder on `EvInventory` logs laid out as the exchange emits them: intent 1 the maker sold, intent 3 the
 * maker bought; the items of `item.data` (ERC-721 pairs or ERC-1155 triples) share `detail.price` evenly, in the
 * currency named. Other intents or delegate types, and offsets out of the data, are not understood.
 */
import { describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { x2y2 } from "../../../src/ingest/venues/x2y2.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, decodeLast, ETH, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const X2Y2 = "0x74312363e45dcaba76c59ec49a7aa8a65a67eed3";
const EV_INVENTORY = "0x3cbb63f144840e5b1b0a38a7c19211d2e89de4d7c5faf8b2d3c1776c302d1d33";

interface Inventory {
  maker: string;
  taker: string;
  intent: number;
  delegateType: number;
  currency: string;
  price: bigint;
  /** (token id, amount) per item; the amount is written for ERC-1155 (delegate type 2) only. */
  items: [number, number][];
  /** Overrides the offset of `detail` (bytes from the start of the data). */
  detailAt?: number;
}

/**
 * The data: 11 head words (maker, taker, orderSalt, settleSalt, intent, delegateType, deadline, currency, and the
 * offsets of dataMask, item and detail), dataMask (empty bytes), item (price, offset of its bytes, the bytes:
 * length, then abi.encode(Pair[]): offset, count, pairs), detail (op, orderIdx, itemIdx, price, …).
 */
function inventory(i: Inventory) {
  const size = i.delegateType === 2 ? 3 : 2;
  const pairs = i.items.map(([id, amount]) => word(NFT) + word(id) + (size === 3 ? word(amount) : "")).join("");
  const content = word(32) + word(i.items.length) + pairs;
  const item = word(0) + word(64) + word(content.length / 2) + content;
  const itemAt = 12 * 32;
  const detailAt = i.detailAt ?? itemAt + item.length / 2;
  const head =
    word(i.maker) +
    word(i.taker) +
    word(1) +
    word(2) +
    word(i.intent) +
    word(i.delegateType) +
    word(1_700_000_000) +
    word(i.currency) +
    word(11 * 32) +
    word(itemAt) +
    word(detailAt);
  const detail = word(1) + word(0) + word(0) + word(i.price) + word(0x17).repeat(7);
  return log(X2Y2, [EV_INVENTORY, topic(0x1a)], head + word(0) + item + detail);
}
const listing: Inventory = {
  maker: SELLER,
  taker: BUYER,
  intent: 1,
  delegateType: 1,
  currency: address(0),
  price: ETH,
  items: [[7, 1]],
};

describe("X2Y2 EvInventory", () => {
  it("reads intent 1 as the maker selling to the taker, at detail's price, ETH for the zero currency", () => {
    expect(x2y2.addresses).toEqual([X2Y2]);
    expect(saleView(decodeLast([inventory(listing)]))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "7",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "x2y2",
        currency: null,
        amount: ETH,
      },
    ]);
  });

  it("reads intent 3 as the taker selling into the maker's bid, in the currency named", () => {
    const bid = inventory({ ...listing, maker: BUYER, taker: SELLER, intent: 3, currency: WETH });
    expect(saleView(decodeLast([bid]))?.[0]).toMatchObject({ seller: SELLER, buyer: BUYER, currency: WETH });
  });

  it("reads ERC-1155 items with their amounts, one sale per item sharing the price, in order", () => {
    const records = decodeLast([
      inventory({
        ...listing,
        delegateType: 2,
        price: 3n * ETH,
        items: [
          [5, 2],
          [6, 10],
        ],
      }),
    ]);
    expect(saleView(records)).toEqual([
      expect.objectContaining({ tokenId: "5", quantity: "2", type: "ERC1155", amount: (3n * ETH) / 2n }),
      expect.objectContaining({ tokenId: "6", quantity: "10", type: "ERC1155", amount: (3n * ETH) / 2n }),
    ]);
    expect(records?.map((r) => r.batchIndex)).toEqual([0, 1]);
  });

  it("does not understand other intents or delegate types, no items, offsets out of the data, or a missing item hash", () => {
    expect(decodeLast([inventory({ ...listing, intent: 2 })])).toBeUndefined();
    expect(decodeLast([inventory({ ...listing, delegateType: 3 })])).toBeUndefined();
    expect(decodeLast([inventory({ ...listing, items: [] })])).toBeUndefined();
    expect(decodeLast([inventory({ ...listing, detailAt: 2 ** 40 })])).toBeUndefined();
    const withoutHash = { ...inventory(listing), topics: [EV_INVENTORY] };
    expect(decodeLast([withoutHash])).toBeUndefined();
  });
});
