/**
 * OpenSea's Wyvern decoder on logs laid out as the exchange emits them: the one NFT transfer since the previous
 * match, the parties from the event's maker and taker (or the transfer when it went to neither), the currency from
 * what the buyer paid, the event's price; bundles and malformed events are not sales.
 */
import { describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { TOPIC } from "../../../src/ingest/decode.js";
import { WYVERN_V2, wyvern } from "../../../src/ingest/venues/wyvern.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, decodeLast, ETH, erc20, erc721, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const TOPICS = {
  wyvern: "0xc4109843e0b7d514e4c093114b863f8e7d8d9a458c372cd51bfe526b588006c9",
};

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

describe("Wyvern matches", () => {
  const match = (maker: string, taker: string, price: bigint) =>
    log(WYVERN_V2, [TOPICS.wyvern, topic(maker), topic(taker), topic(0)], word(1) + word(2) + word(price));

  it("reads an accepted offer (the NFT went to the maker) as the taker selling to the maker", () => {
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 3), match(BUYER, SELLER, ETH)]))?.[0]).toMatchObject({
      seller: SELLER,
      buyer: BUYER,
    });
  });

  it("names the maker the seller of a lazy mint (the NFT came from 0x0), and the transfer's parties when the NFT went to neither", () => {
    const minted = [erc721(address(0), BUYER, 3), match(SELLER, BUYER, ETH)];
    expect(saleView(decodeLast(minted))?.[0]).toMatchObject({ seller: SELLER, buyer: BUYER });
    const [from, to] = [address(0xf00), address(0x700)];
    expect(saleView(decodeLast([erc721(from, to, 3), match(SELLER, BUYER, ETH)]))?.[0]).toMatchObject({
      seller: from,
      buyer: to,
    });
  });

  it("reads an ERC-1155 transfer's quantity and standard", () => {
    const single = log(NFT, [TOPIC.transferSingle, topic(SELLER), topic(SELLER), topic(BUYER)], word(6) + word(5));
    expect(saleView(decodeLast([single, match(SELLER, BUYER, ETH)]))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "6",
        seller: SELLER,
        buyer: BUYER,
        quantity: "5",
        type: "ERC1155",
        marketplace: "opensea",
        currency: null,
        amount: ETH,
      },
    ]);
  });

  it("takes only the transfers since the previous match, and a token only the buyer paid as the currency", () => {
    const first = match(SELLER, BUYER, ETH);
    const logs = [erc721(SELLER, BUYER, 3), first, erc721(SELLER, BUYER, 4), match(SELLER, BUYER, 2n * ETH)];
    expect(saleView(decodeLast(logs))?.[0]).toMatchObject({ tokenId: "4", amount: 2n * ETH });
    expect(saleView(wyvern.decode(first, { logs }))?.[0]).toMatchObject({ tokenId: "3", amount: ETH });
    const notTheBuyer = [erc20(WETH, SELLER, BUYER, ETH), erc721(SELLER, BUYER, 3), match(SELLER, BUYER, ETH)];
    expect(saleView(decodeLast(notTheBuyer))?.[0]).toMatchObject({ currency: null });
  });

  it("does not understand a match without its indexed metadata, with short data, or without an NFT", () => {
    const nft = erc721(SELLER, BUYER, 3);
    const short = log(WYVERN_V2, [TOPICS.wyvern, topic(SELLER), topic(BUYER)], word(1) + word(2) + word(ETH));
    expect(decodeLast([nft, short])).toBeUndefined();
    const brief = log(WYVERN_V2, [TOPICS.wyvern, topic(SELLER), topic(BUYER), topic(0)], word(1) + word(2));
    expect(decodeLast([nft, brief])).toBeUndefined();
    expect(decodeLast([match(SELLER, BUYER, ETH)])).toBeUndefined();
  });
});
