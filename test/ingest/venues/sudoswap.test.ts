/**
 * Sudoswap's decoder on logs laid out as its pairs emit them: the NFTs that moved into or out of the emitting pair
 * since its previous swap, priced by the event (v2) or by the ERC-20 that moved the other way (v1; an ETH pool's
 * price is unknown), shared evenly; malformed swaps are not understood.
 */
import { describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { TOPIC } from "../../../src/ingest/decode.js";
import { sudoswap } from "../../../src/ingest/venues/sudoswap.js";
import { address, topic, word } from "../../support/index-helpers.js";
import { BUYER, decodeLast, ETH, erc20, erc721, log, NFT, PAIR, SELLER, saleView } from "../../support/venue-logs.js";

const TOPICS = {
  sudoV1Out: "0xbc479dfc6cb9c1a9d880f987ee4b30fa43dd7f06aec121db685b67d587c93c93",
  sudoV1In: "0x3614eb567740a0ee3897c0e2b11ad6a5720d2e4438f9c8accf6c95c24af3a470",
  sudoV2OutIds: "0xa13c46268c53408442d94eb370f2e476cb7f0fbe027ae5bad73ce13d4469c8b9",
  sudoV2InIds: "0x7a0e7e58d91fd23a96b0008604db1b2d1cee4aae434e3aad9a20fdd7c0995f89",
  sudoV2OutCount: "0xd9c2402e1a067734ae78dab98f06d5b28e8a2d2c6370ec0e6ff8cc2749d050f1",
};

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

describe("Sudoswap pairs", () => {
  it("reads swaps from any address (every pair is its own contract) under the marketplace sudoswap", () => {
    expect(sudoswap.addresses).toBe("any");
    const elsewhere = address(0x9a2);
    const logs = [erc721(elsewhere, BUYER, 8), log(elsewhere, [TOPICS.sudoV1Out])];
    expect(saleView(decodeLast(logs))?.[0]).toMatchObject({ seller: elsewhere, buyer: BUYER, marketplace: "sudoswap" });
  });

  it("reads a v2 sale into the pair as the NFT's sender selling to the pair, in the ERC-20 that left the pair", () => {
    const data = word(ETH / 2n) + word(64) + word(1) + word(5);
    const logs = [erc721(SELLER, PAIR, 5), erc20(WETH, PAIR, SELLER, ETH / 2n), log(PAIR, [TOPICS.sudoV2InIds], data)];
    expect(saleView(decodeLast(logs))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "5",
        seller: SELLER,
        buyer: PAIR,
        quantity: "1",
        type: "ERC721",
        marketplace: "sudoswap",
        currency: WETH,
        amount: ETH / 2n,
      },
    ]);
  });

  it("reads a v2 swap by count like one by ids: one sale per NFT, the event's amount shared, in order", () => {
    const single = log(NFT, [TOPIC.transferSingle, topic(PAIR), topic(PAIR), topic(BUYER)], word(3) + word(4));
    const logs = [erc721(PAIR, BUYER, 1), single, log(PAIR, [TOPICS.sudoV2OutCount], word(3n * ETH) + word(2))];
    const records = decodeLast(logs);
    expect(saleView(records)).toEqual([
      expect.objectContaining({ tokenId: "1", quantity: "1", type: "ERC721", amount: (3n * ETH) / 2n }),
      expect.objectContaining({ tokenId: "3", quantity: "4", type: "ERC1155", amount: (3n * ETH) / 2n }),
    ]);
    expect(records?.map((r) => r.batchIndex)).toEqual([0, 1]);
  });

  it("takes only the NFTs moved since the same pair's previous swap, another pair's swap between them included", () => {
    const first = log(PAIR, [TOPICS.sudoV1Out]);
    const logs = [erc721(PAIR, BUYER, 1), first, erc721(PAIR, BUYER, 2), log(PAIR, [TOPICS.sudoV1Out])];
    expect(saleView(decodeLast(logs))?.map((s) => s.tokenId)).toEqual(["2"]);
    expect(saleView(sudoswap.decode(first, { logs }))?.map((s) => s.tokenId)).toEqual(["1"]);
    const other = address(0x9a2);
    const across = [
      erc721(PAIR, BUYER, 1),
      log(other, [TOPICS.sudoV1Out]),
      erc721(PAIR, BUYER, 2),
      log(PAIR, [TOPICS.sudoV1Out]),
    ];
    expect(saleView(decodeLast(across))?.map((s) => s.tokenId)).toEqual(["1", "2"]);
  });

  it("does not understand a swap with data where v1 has none, a short v2 event, extra topics or an id list out of its data", () => {
    const out = erc721(PAIR, BUYER, 1);
    expect(decodeLast([out, log(PAIR, [TOPICS.sudoV1Out], word(1))])).toBeUndefined();
    expect(decodeLast([out, log(PAIR, [TOPICS.sudoV2OutCount], word(ETH))])).toBeUndefined();
    expect(decodeLast([out, log(PAIR, [TOPICS.sudoV1Out, topic(1)])])).toBeUndefined();
    expect(decodeLast([out, log(PAIR, [TOPICS.sudoV2OutIds], word(ETH) + word(64 * 32))])).toBeUndefined();
  });
});
