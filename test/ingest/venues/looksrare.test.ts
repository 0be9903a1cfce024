/**
 * LooksRare's decoder on logs laid out as its exchanges emit them: v1's `TakerBid` / `TakerAsk` (who bought from
 * whom), v2's gross price from the fee amounts and one sale per item. v2's real exchange on anvil is in
 * looksrare.v2.test.ts.
 */
import { describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { LOOKSRARE_V1, LOOKSRARE_V2 } from "../../../src/ingest/venues/looksrare.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, decodeLast, ETH, erc721, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const TOPICS = {
  lrTakerBid: "0x95fb6205e23ff6bda16a2d1dba56b9ad7c783f67c96fa149785052f47696f2be",
  lrTakerAsk: "0x68cd251d4d267c6e2034ff0088b990352b97b2002c0476587d0c4da889c11330",
  lr2TakerBid: "0x3ee3de4684413690dee6fff1a0a4f92916a1b97d1c5a83cdf24671844306b2e3",
};

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
