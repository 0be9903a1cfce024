/**
 * SuperRare on anvil: the compiled contracts SuperRare publishes (scripts/extract-superrare.ts) placed at their
 * mainnet addresses: the original SuperRare token with its own market, SuperRareMarketAuctionV2 and
 * SuperRareAuctionHouse, with the marketplace settings and registries they read. A sale and an accepted bid on
 * each market, an auction won, and an auction that ended without a bid are driven through the contracts' own
 * functions; `chainmail index` reads them back and every field of every sale record is compared with the trade the
 * test made (the no-bid settlement must give no sale and no unknown log). The last block decodes laid-out logs of
 * the Bazaar and the first SuperRareMarketAuction, which are not on anvil.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Address, artifacts, type ChainConnection, call, connect, deploy } from "../../../src/demo/contracts.js";
import {
  SUPERRARE_AUCTION_HOUSE,
  SUPERRARE_BAZAAR,
  SUPERRARE_MARKET_AUCTION,
  SUPERRARE_MARKET_AUCTION_V2,
  SUPERRARE_V1,
} from "../../../src/ingest/venues/superrare.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import settingsJson from "../../fixtures/superrare/MarketplaceSettings.json" with { type: "json" };
import superRareV1Json from "../../fixtures/superrare/SupeRare.json" with { type: "json" };
import houseJson from "../../fixtures/superrare/SuperRareAuctionHouse.json" with { type: "json" };
import marketJson from "../../fixtures/superrare/SuperRareMarketAuctionV2.json" with { type: "json" };
import royaltyRegistryJson from "../../fixtures/superrare/SuperRareRoyaltyRegistry.json" with { type: "json" };
import creatorRegistryJson from "../../fixtures/superrare/SuperRareTokenCreatorRegistry.json" with { type: "json" };
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, address, startAnvil, topic, word } from "../../support/index-helpers.js";
import {
  artifactOf,
  deployAt,
  ETH,
  expectedSale,
  indexDevChain,
  type Trade,
  topicsLoggedBy,
} from "../../support/venue-anvil.js";
import { BUYER, decodeLast, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const A = {
  v1: artifactOf(superRareV1Json),
  market: artifactOf(marketJson),
  house: artifactOf(houseJson),
  settings: artifactOf(settingsJson),
  royaltyRegistry: artifactOf(royaltyRegistryJson),
  creatorRegistry: artifactOf(creatorRegistryJson),
};

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
let summary: { unknown_logs: number };
const trades: Trade[] = [];
let noBidSettlement: string;

const mine = (blocks: number) => anvil.rpc("anvil_mine", [`0x${blocks.toString(16)}`]);

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("superrare");
  db = await backend.target("superrare");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer] = chain.accounts as [Address, Address, Address];

  const settings = await deploy(chain, owner, "MarketplaceSettings", A.settings);
  const creators = await deploy(chain, owner, "SuperRareTokenCreatorRegistry", A.creatorRegistry, [[]]);
  const royalties = await deploy(chain, owner, "SuperRareRoyaltyRegistry", A.royaltyRegistry, [creators]);
  const market = await deployAt(anvil, chain, owner, A.market, [settings, royalties], SUPERRARE_MARKET_AUCTION_V2);
  const house = await deployAt(anvil, chain, owner, A.house, [settings, royalties], SUPERRARE_AUCTION_HOUSE);
  for (const m of [market, house]) await call(chain, owner, settings, A.settings, "grantMarketplaceAccess", [m]);
  const v1 = await deployAt(anvil, chain, owner, A.v1, [], SUPERRARE_V1);

  const trade = (t: Omit<Trade, "seller" | "buyer" | "contractType" | "marketplace">): Trade => ({
    seller,
    buyer,
    contractType: "ERC721",
    marketplace: "superrare",
    ...t,
  });

  // The original token's own market: a sale at the asking price, and a bid accepted.
  await call(chain, owner, v1, A.v1, "whitelistCreator", [seller]);
  await call(chain, seller, v1, A.v1, "addNewToken", ["ipfs://one"]);
  await call(chain, seller, v1, A.v1, "addNewToken", ["ipfs://two"]);
  await call(chain, seller, v1, A.v1, "setSalePrice", [1n, ETH]);
  const sold = await call(chain, buyer, v1, A.v1, "buy", [1n], ETH);
  trades.push(trade({ txHash: sold.transactionHash, contract: v1, tokenId: 1n, price: ETH }));
  await call(chain, buyer, v1, A.v1, "bid", [2n], ETH / 2n);
  const accepted = await call(chain, seller, v1, A.v1, "acceptBid", [2n]);
  trades.push(trade({ txHash: accepted.transactionHash, contract: v1, tokenId: 2n, price: ETH / 2n }));

  // Any ERC-721 on the later markets; the buyer adds SuperRare's 3 % marketplace fee to what the event states.
  const nft = await deploy(chain, owner, "DemoERC721", artifacts.erc721);
  for (const id of [1n, 2n, 3n, 4n]) {
    await call(chain, owner, nft, artifacts.erc721, "mint", [seller, id]);
    await call(chain, owner, creators, A.creatorRegistry, "setTokenCreator", [nft, id, seller]);
  }
  for (const m of [market, house]) await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [m, true]);
  const withFee = (amount: bigint) => amount + (amount * 3n) / 100n;

  await call(chain, seller, market, A.market, "setSalePrice", [nft, 1n, ETH]);
  const bought = await call(chain, buyer, market, A.market, "buy", [nft, 1n], withFee(ETH));
  trades.push(trade({ txHash: bought.transactionHash, contract: nft, tokenId: 1n, price: ETH }));
  const bid = (4n * ETH) / 10n;
  await call(chain, buyer, market, A.market, "bid", [bid, nft, 2n], withFee(bid));
  const taken = await call(chain, seller, market, A.market, "acceptBid", [nft, 2n]);
  trades.push(trade({ txHash: taken.transactionHash, contract: nft, tokenId: 2n, price: bid }));

  // The auction house: a reserve ("coldie") auction won, and a scheduled auction that ended without a bid.
  const winning = (2n * ETH) / 10n;
  await call(chain, seller, house, A.house, "createColdieAuction", [nft, 3n, ETH / 10n, 10n]);
  await call(chain, buyer, house, A.house, "bid", [nft, 3n, winning], withFee(winning));
  await mine(11);
  const settled = await call(chain, buyer, house, A.house, "settleAuction", [nft, 3n]);
  trades.push(trade({ txHash: settled.transactionHash, contract: nft, tokenId: 3n, price: winning }));
  const start = (await chain.publicClient.getBlockNumber({ cacheTime: 0 })) + 2n;
  await call(chain, seller, house, A.house, "createScheduledAuction", [nft, 4n, ETH / 10n, 3n, start]);
  await mine(6);
  noBidSettlement = (await call(chain, seller, house, A.house, "settleAuction", [nft, 4n])).transactionHash;

  summary = await indexDevChain(anvil.rpcUrl, db);
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

describe("SuperRare on anvil through chainmail index", () => {
  it("every trade is one sale, field for field, in chain order", async () => {
    const expected = await Promise.all(trades.map((t) => expectedSale(chain, t)));
    expect(expected.length).toBe(5);
    expect(await recordsInIndex(db, ["sale"])).toEqual(expected);
  });

  it("an auction settled without a bid is no sale and no unknown log", async () => {
    const receipt = await chain.publicClient.getTransactionReceipt({ hash: noBidSettlement as `0x${string}` });
    const settledTopic = "0xea6d16c6bfcad11577aef5cc6728231c9f069ac78393828f8ca96847405902a9";
    expect(receipt.logs.some((l) => l.topics[0] === settledTopic)).toBe(true);
    const sales = await recordsInIndex(db, ["sale"]);
    expect(sales.some((s) => s.transaction_hash === noBidSettlement)).toBe(false);
    expect(summary.unknown_logs).toBe(0);
  });

  it("the sales come from the contracts' own events at their mainnet addresses", async () => {
    expect(await topicsLoggedBy(chain, SUPERRARE_V1, trades)).toEqual(
      expect.arrayContaining([
        "0x16dd16959a056953a63cf14bf427881e762e54f03d86b864efea8238dd3b822f", // Sold
        "0xd6deddb2e105b46d4644d24aac8c58493a0f107e7973b2fe8d8fa7931a2912be", // AcceptBid
      ]),
    );
    expect(await topicsLoggedBy(chain, SUPERRARE_MARKET_AUCTION_V2, trades)).toEqual(
      expect.arrayContaining([
        "0x5764dbcef91eb6f946584f4ea671217c686fa7e858ce4f9f42d08422b86556a9", // Sold
        "0x2a9d06eec42acd217a17785dbec90b8b4f01a93ecd8c127edd36bfccf239f8b6", // AcceptBid
      ]),
    );
    expect(await topicsLoggedBy(chain, SUPERRARE_AUCTION_HOUSE, trades)).toContain(
      "0xea6d16c6bfcad11577aef5cc6728231c9f069ac78393828f8ca96847405902a9", // AuctionSettled
    );
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
