/**
 * The marketplace decoders on logs laid out as each venue's contract emits them (the layouts in each venue's file),
 * for the cases neither the real fixtures (test/ingest/mainnet.test.ts) nor the venues' contracts on anvil
 * (test/ingest/venues/<venue>.test.ts) hold, and edge cases of those: LooksRare, Sudoswap, Wyvern, CryptoPunks with its
 * accepted-bid bug, ERC-2309, Seaport attribution by exchange, Rarible (NFT for NFT, two tokens after a `Match`),
 * Foundation's private sales, SuperRare's Bazaar and Zora's Auction House in WETH. Hostile data yields no record.
 */
import fc from "fast-check";
import { encodeAbiParameters, type Hex } from "viem";
import { describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { CONSECUTIVE_CAP, decodeTransfer, type RawLog, TOPIC } from "../../../src/ingest/decode.js";
import { CRYPTOPUNKS } from "../../../src/ingest/venues/cryptopunks.js";
import { FOUNDATION_MARKET } from "../../../src/ingest/venues/foundation.js";
import { venueTable } from "../../../src/ingest/venues/index.js";
import { LOOKSRARE_V1, LOOKSRARE_V2 } from "../../../src/ingest/venues/looksrare.js";
import { RARIBLE_V1, RARIBLE_V2 } from "../../../src/ingest/venues/rarible.js";
import { ORDER_FULFILLED, SEAPORT_VENUES } from "../../../src/ingest/venues/seaport.js";
import { SUPERRARE_BAZAAR, SUPERRARE_MARKET_AUCTION } from "../../../src/ingest/venues/superrare.js";
import type { TransactionInfo } from "../../../src/ingest/venues/venue.js";
import { WYVERN_V2 } from "../../../src/ingest/venues/wyvern.js";
import { ZORA_AUCTION_HOUSE } from "../../../src/ingest/venues/zora.js";
import { address, orderFulfilledData, topic, word } from "../../support/index-helpers.js";

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

  it("a marketplace's own copy of Seaport names every fill there, whatever its zone or wallets", () => {
    for (const rule of SEAPORT_VENUES.filter((r) => r.by === "exchange")) {
      const there = { ...fill(address(0), "0x0000a26b00c1f0df003000390027140000faa719"), address: rule.address };
      expect(decodeLast([there])?.[0]?.sale?.marketplace).toBe(rule.marketplace);
    }
  });
});

describe("Rarible", () => {
  const id4 = (hex: string) => `0x${hex}` as Hex;
  const CLASS = { eth: "aaaebeba", erc20: "8ae85d84", erc721: "73ad2146", erc1155: "973bb640", lazy721: "d8f960c1" };
  const asset = (assetClass: string, data: Hex = "0x") => ({ assetClass: id4(assetClass), data });
  const tokenData = (token: string, id: bigint) =>
    encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [token as Hex, id]);
  const ASSET_TYPE = {
    type: "tuple",
    components: [
      { name: "assetClass", type: "bytes4" },
      { name: "data", type: "bytes" },
    ],
  } as const;
  /** The legacy `Match`: the left order gives `left` (newRightFill of it) for `right` (newLeftFill). */
  const legacy = (
    leftMaker: string,
    rightMaker: string,
    newLeftFill: bigint,
    newRightFill: bigint,
    left: ReturnType<typeof asset>,
    right: ReturnType<typeof asset>,
  ) =>
    log(
      RARIBLE_V2,
      ["0x268820db288a211986b26a8fda86b1e0046281b21206936bb0e61c67b5c79ef4"],
      encodeAbiParameters(
        [
          { type: "bytes32" },
          { type: "bytes32" },
          { type: "address" },
          { type: "address" },
          { type: "uint256" },
          { type: "uint256" },
          ASSET_TYPE,
          ASSET_TYPE,
        ],
        [
          `0x${"11".repeat(32)}`,
          `0x${"22".repeat(32)}`,
          leftMaker as Hex,
          rightMaker as Hex,
          newLeftFill,
          newRightFill,
          left,
          right,
        ],
      ).slice(2),
    );

  it("legacy Match: the maker giving the NFT sells, the other fill is the price, in the other asset", () => {
    const listing = legacy(SELLER, BUYER, ETH, 1n, asset(CLASS.erc721, tokenData(NFT, 5n)), asset(CLASS.eth));
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 5), listing]))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "5",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "rarible",
        currency: null,
        amount: ETH,
      },
    ]);
    // A WETH bid as the left order: the left maker buys; 3 ERC-1155 units for 0.6 WETH.
    const weth = encodeAbiParameters([{ type: "address" }], [WETH as Hex]);
    const bid = legacy(
      BUYER,
      SELLER,
      3n,
      (6n * ETH) / 10n,
      asset(CLASS.erc20, weth),
      asset(CLASS.erc1155, tokenData(NFT, 9n)),
    );
    expect(saleView(decodeLast([bid]))?.[0]).toMatchObject({
      tokenId: "9",
      seller: SELLER,
      buyer: BUYER,
      quantity: "3",
      type: "ERC1155",
      currency: WETH,
      amount: (6n * ETH) / 10n,
    });
  });

  it("legacy Match of a lazy mint: the token id is the mint data's first word, the type NFTPort's ERC721_lazy", () => {
    const tokenId = (BigInt(SELLER) << 96n) | 3n;
    const mintData = encodeAbiParameters(
      [
        { type: "address" },
        {
          type: "tuple",
          components: [
            { name: "tokenId", type: "uint256" },
            { name: "tokenURI", type: "string" },
          ],
        },
      ],
      [NFT as Hex, { tokenId, tokenURI: "/3" }],
    );
    const sold = legacy(SELLER, BUYER, ETH / 4n, 1n, asset(CLASS.lazy721, mintData), asset(CLASS.eth));
    expect(saleView(decodeLast([sold]))?.[0]).toMatchObject({
      contract: NFT,
      tokenId: tokenId.toString(),
      type: "ERC721_lazy",
      amount: ETH / 4n,
    });
  });

  it("legacy Match of NFT for NFT, or of two currencies, is not a sale", () => {
    const nft = asset(CLASS.erc721, tokenData(NFT, 1n));
    expect(decodeLast([legacy(SELLER, BUYER, 1n, 1n, nft, nft)])).toBeUndefined();
    expect(decodeLast([legacy(SELLER, BUYER, 1n, 1n, asset(CLASS.eth), asset(CLASS.eth))])).toBeUndefined();
  });

  it("current Match: one token must move after it; two different ones are not understood", () => {
    const match = log(
      RARIBLE_V2,
      ["0x956cd63ee4cdcd81fda5f0ec7c6c36dceda99e1b412f4a650a5d26055dc3c450"],
      word(0x11) + word(0x22) + word(ETH) + word(1),
    );
    // Decoded as the indexer does: with every log of the transaction, the NFT transfers after the Match.
    const venue = table.byTopic.get(match.topics[0]!)!;
    expect(venue.decode(match, { logs: [match, erc721(SELLER, BUYER, 1), erc721(SELLER, BUYER, 2)] })).toBeUndefined();
    expect(
      saleView(venue.decode(match, { logs: [match, erc20(WETH, BUYER, SELLER, ETH), erc721(SELLER, BUYER, 1)] })),
    ).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "1",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "rarible",
        currency: WETH,
        amount: ETH,
      },
    ]);
  });

  it("v1 Buy: a listing (the NFT was sold) and an accepted bid (the NFT was bought)", () => {
    const buy = (
      sellToken: string,
      sellId: bigint,
      sellValue: bigint,
      buyToken: string,
      buyId: bigint,
      buyValue: bigint,
      amount: bigint,
      owner: string,
      buyer: string,
    ) =>
      log(
        RARIBLE_V1[0]!,
        ["0xdddcdb07e460849cf04a4445b7af9faf01b7f5c7ba75deaf969ac5ed830312c3", topic(sellToken), topic(sellId)],
        word(sellValue) +
          word(owner) +
          word(buyToken) +
          word(buyId) +
          word(buyValue) +
          word(buyer) +
          word(amount) +
          word(7),
      );
    // A listing of one token for 0.8 ETH.
    const listing = buy(NFT, 12n, 1n, address(0), 0n, (8n * ETH) / 10n, 1n, SELLER, BUYER);
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 12), listing]))?.[0]).toMatchObject({
      tokenId: "12",
      seller: SELLER,
      buyer: BUYER,
      quantity: "1",
      currency: null,
      amount: (8n * ETH) / 10n,
    });
    // The owner bid 1 WETH for one token; the taker sold it and got `amount` 1 WETH.
    const bid = buy(WETH, 0n, ETH, NFT, 13n, 1n, ETH, BUYER, SELLER);
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 13), bid]))?.[0]).toMatchObject({
      tokenId: "13",
      seller: SELLER,
      buyer: BUYER,
      quantity: "1",
      currency: WETH,
      amount: ETH,
    });
    expect(decodeLast([listing])).toBeUndefined(); // no NFT moved: not understood
  });
});

describe("Foundation private sale", () => {
  it("the seller (topic), the buyer (data) and the three shares summed", () => {
    const privateSale = log(
      FOUNDATION_MARKET,
      ["0x6c623fa5e13aaaf28288f807e5b4f9ec6fb7ef812568e00317c552663bea918f", topic(NFT), topic(21), topic(SELLER)],
      word(BUYER) + word(ETH / 20n) + word(ETH / 10n) + word((17n * ETH) / 20n) + word(1_700_000_000),
    );
    expect(saleView(decodeLast([erc721(SELLER, BUYER, 21), privateSale]))).toEqual([
      {
        kind: "sale",
        contract: NFT,
        tokenId: "21",
        seller: SELLER,
        buyer: BUYER,
        quantity: "1",
        type: "ERC721",
        marketplace: "foundation",
        currency: null,
        amount: ETH,
      },
    ]);
  });
});

describe("SuperRare Bazaar and the first market", () => {
  const TOKEN = address(0x4a4e);
  it("Sold and AcceptOffer in the currency named; AuctionSettled with and without a bid", () => {
    const sold = log(
      SUPERRARE_BAZAAR,
      ["0x6f9e7bc841408072f4a49e469f90e1a634b85251803662bc8e5c220b28782472", topic(NFT), topic(BUYER), topic(SELLER)],
      word(TOKEN) + word(50n * ETH) + word(31),
    );
    expect(saleView(decodeLast([sold]))?.[0]).toMatchObject({
      tokenId: "31",
      seller: SELLER,
      buyer: BUYER,
      currency: TOKEN,
      amount: 50n * ETH,
      marketplace: "superrare",
    });
    const offer = log(
      SUPERRARE_BAZAAR,
      ["0x97c3d2068ce177bc33d84acecc45eededcf298c4a9d4340ae03d4afbb3993f7b", topic(NFT), topic(BUYER), topic(SELLER)],
      word(0) + word(ETH) + word(32) + word(5 * 32) + word(7 * 32) + word(1) + word(SELLER) + word(1) + word(100),
    );
    expect(saleView(decodeLast([offer]))?.[0]).toMatchObject({ tokenId: "32", currency: null, amount: ETH });
    const settled = (bidder: string, amount: bigint) =>
      log(
        SUPERRARE_BAZAAR,
        ["0xef4e2262a841641690bb931801dc0d1923e6b417cd217f91f8049d8aa9f5f086", topic(NFT), topic(bidder), topic(33)],
        word(SELLER) + word(0) + word(amount),
      );
    expect(saleView(decodeLast([settled(BUYER, 2n * ETH)]))?.[0]).toMatchObject({
      tokenId: "33",
      seller: SELLER,
      buyer: BUYER,
      amount: 2n * ETH,
    });
    expect(decodeLast([settled(address(0), 0n)])).toEqual([]);
  });

  it("the first SuperRareMarketAuction logs as its v2 does", () => {
    const sold = log(
      SUPERRARE_MARKET_AUCTION,
      ["0x5764dbcef91eb6f946584f4ea671217c686fa7e858ce4f9f42d08422b86556a9", topic(NFT), topic(BUYER), topic(SELLER)],
      word(ETH) + word(34),
    );
    expect(saleView(decodeLast([sold]))?.[0]).toMatchObject({
      tokenId: "34",
      seller: SELLER,
      buyer: BUYER,
      amount: ETH,
    });
  });
});

describe("Zora Auction House", () => {
  const ended = (currency: string) =>
    log(
      ZORA_AUCTION_HOUSE,
      ["0x4f35fb3ea0081b3ccbe8df613cab0f9e1694d50a025e0aa09b88a86a3d07c2de", topic(3), topic(41), topic(NFT)],
      word(SELLER) + word(address(0xc0)) + word(BUYER) + word((9n * ETH) / 10n) + word(ETH / 10n) + word(currency),
    );
  it("names WETH for auctions held in ETH: WETH only when WETH left the house in the transaction", () => {
    expect(saleView(decodeLast([ended(WETH)]))?.[0]).toMatchObject({ currency: null, amount: ETH });
    const paidOut = erc20(WETH, ZORA_AUCTION_HOUSE, SELLER, (9n * ETH) / 10n);
    expect(saleView(decodeLast([paidOut, ended(WETH)]))?.[0]).toMatchObject({ currency: WETH, amount: ETH });
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
        fc.nat(),
        (topic0, words, topicCount, pick) => {
          const venue = table.byTopic.get(topic0)!;
          // Any of the venue's exchanges: some events are read only from one of them.
          const at = venue.addresses === "any" ? PAIR : venue.addresses[pick % venue.addresses.length]!;
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
