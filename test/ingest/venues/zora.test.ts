/**
 * Zora on anvil: the contracts Zora publishes on npm (scripts/extract-zora.ts), set up as Zora's own tests set
 * them up (registrar, fee settings, module manager, transfer helpers) and placed at their mainnet addresses (the
 * decoder trusts no other), WETH9 at mainnet WETH. Asks v1.1 in ETH and WETH, an offer accepted (Offers v1), the
 * ETH core asks and private asks, and two Auction House auctions (ETH with a curator's fee, and WETH) are driven
 * through the contracts' own functions; `chainmail index` reads them back and every field of every sale record is
 * compared with the trade the test made. The last block decodes laid-out Auction House logs: WETH named only when
 * WETH left the house.
 */
import { maxUint256 } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { type Address, artifacts, type ChainConnection, call, connect, deploy } from "../../../src/demo/contracts.js";
import {
  ZORA_ASKS_CORE_ETH,
  ZORA_ASKS_PRIVATE_ETH,
  ZORA_ASKS_V1_1,
  ZORA_AUCTION_HOUSE,
  ZORA_OFFERS_V1,
} from "../../../src/ingest/venues/zora.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import asksCoreEthJson from "../../fixtures/zora/AsksCoreEth.json" with { type: "json" };
import asksPrivateEthJson from "../../fixtures/zora/AsksPrivateEth.json" with { type: "json" };
import asksV11Json from "../../fixtures/zora/AsksV1_1.json" with { type: "json" };
import auctionHouseJson from "../../fixtures/zora/AuctionHouse.json" with { type: "json" };
import erc20HelperJson from "../../fixtures/zora/ERC20TransferHelper.json" with { type: "json" };
import erc721HelperJson from "../../fixtures/zora/ERC721TransferHelper.json" with { type: "json" };
import offersV1Json from "../../fixtures/zora/OffersV1.json" with { type: "json" };
import royaltyEngineJson from "../../fixtures/zora/RoyaltyEngine.json" with { type: "json" };
import wethJson from "../../fixtures/zora/WETH.json" with { type: "json" };
import moduleManagerJson from "../../fixtures/zora/ZoraModuleManager.json" with { type: "json" };
import feeSettingsJson from "../../fixtures/zora/ZoraProtocolFeeSettings.json" with { type: "json" };
import registrarJson from "../../fixtures/zora/ZoraRegistrar.json" with { type: "json" };
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, address, startAnvil, topic, word } from "../../support/index-helpers.js";
import {
  artifactOf,
  deployAt,
  ETH,
  expectedSale,
  indexDevChain,
  MAINNET_WETH,
  passTime,
  type Trade,
  topicsLoggedBy,
  ZERO,
} from "../../support/venue-anvil.js";
import { BUYER, decodeLast, erc20, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const A = {
  asksV11: artifactOf(asksV11Json),
  offersV1: artifactOf(offersV1Json),
  asksCoreEth: artifactOf(asksCoreEthJson),
  asksPrivateEth: artifactOf(asksPrivateEthJson),
  auctionHouse: artifactOf(auctionHouseJson),
  registrar: artifactOf(registrarJson),
  feeSettings: artifactOf(feeSettingsJson),
  moduleManager: artifactOf(moduleManagerJson),
  erc20Helper: artifactOf(erc20HelperJson),
  erc721Helper: artifactOf(erc721HelperJson),
  royaltyEngine: artifactOf(royaltyEngineJson),
  weth: artifactOf(wethJson),
};

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
let summary: { unknown_logs: number; records: number };
const trades: Trade[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("zora");
  db = await backend.target("zora");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer, curator, royalties] = chain.accounts as [Address, Address, Address, Address, Address];
  const weth = await deployAt(anvil, chain, owner, A.weth, [], MAINNET_WETH);
  const nft = await deploy(chain, owner, "DemoERC721", artifacts.erc721);
  // The Auction House wants Zora's media contract at construction; another collection stands in for it.
  const media = await deploy(chain, owner, "DemoERC721 (media)", artifacts.erc721);

  // Zora v3's plumbing, as its tests build it.
  const registrar = await deploy(chain, owner, "ZoraRegistrar", A.registrar);
  const feeSettings = await deploy(chain, owner, "ZoraProtocolFeeSettings", A.feeSettings);
  const manager = await deploy(chain, owner, "ZoraModuleManager", A.moduleManager, [registrar, feeSettings]);
  const erc20Helper = await deploy(chain, owner, "ERC20TransferHelper", A.erc20Helper, [manager]);
  const erc721Helper = await deploy(chain, owner, "ERC721TransferHelper", A.erc721Helper, [manager]);
  const royaltyEngine = await deploy(chain, owner, "RoyaltyEngine", A.royaltyEngine, [royalties]);
  await call(chain, owner, registrar, A.registrar, "init", [manager]);
  await call(chain, owner, feeSettings, A.feeSettings, "init", [manager, ZERO]);
  const modules = {
    asksV11: await deployAt(
      anvil,
      chain,
      owner,
      A.asksV11,
      [erc20Helper, erc721Helper, royaltyEngine, feeSettings, weth],
      ZORA_ASKS_V1_1,
    ),
    offersV1: await deployAt(
      anvil,
      chain,
      owner,
      A.offersV1,
      [erc20Helper, erc721Helper, royaltyEngine, feeSettings, weth],
      ZORA_OFFERS_V1,
    ),
    asksCoreEth: await deployAt(
      anvil,
      chain,
      owner,
      A.asksCoreEth,
      [erc721Helper, royaltyEngine, feeSettings, weth],
      ZORA_ASKS_CORE_ETH,
    ),
    asksPrivateEth: await deployAt(
      anvil,
      chain,
      owner,
      A.asksPrivateEth,
      [erc721Helper, royaltyEngine, feeSettings, weth],
      ZORA_ASKS_PRIVATE_ETH,
    ),
  };
  const house = await deployAt(anvil, chain, owner, A.auctionHouse, [media, weth], ZORA_AUCTION_HOUSE);

  for (const module of Object.values(modules)) {
    await call(chain, owner, registrar, A.registrar, "registerModule", [module]);
    for (const user of [seller, buyer]) {
      await call(chain, user, manager, A.moduleManager, "setApprovalForModule", [module, true]);
    }
  }
  for (const id of [1n, 2n, 3n, 4n, 5n, 6n, 7n]) await call(chain, owner, nft, artifacts.erc721, "mint", [seller, id]);
  await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [erc721Helper, true]);
  await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [house, true]);
  await call(chain, buyer, weth, A.weth, "deposit", [], 10n * ETH);
  await call(chain, buyer, weth, A.weth, "approve", [erc20Helper, maxUint256]);
  await call(chain, buyer, weth, A.weth, "approve", [house, maxUint256]);

  const trade = (t: Omit<Trade, "seller" | "buyer" | "contract" | "contractType" | "marketplace">): Trade => ({
    seller,
    buyer,
    contract: nft,
    contractType: "ERC721",
    marketplace: "zora",
    ...t,
  });

  // Asks v1.1: an ETH ask and a WETH ask, each filled by the buyer.
  for (const [tokenId, currency, price] of [
    [1n, ZERO, ETH],
    [2n, weth, ETH / 2n],
  ] as const) {
    await call(chain, seller, modules.asksV11, A.asksV11, "createAsk", [nft, tokenId, price, currency, seller, 0]);
    const r = await call(
      chain,
      buyer,
      modules.asksV11,
      A.asksV11,
      "fillAsk",
      [nft, tokenId, currency, price, ZERO],
      currency === ZERO ? price : 0n,
    );
    trades.push(trade({ txHash: r.transactionHash, tokenId, price, ...(currency === ZERO ? {} : { currency }) }));
  }
  // Offers v1: the buyer offers WETH, the seller accepts.
  const offered = (3n * ETH) / 10n;
  await call(chain, buyer, modules.offersV1, A.offersV1, "createOffer", [nft, 3n, weth, offered, 0]);
  const accepted = await call(chain, seller, modules.offersV1, A.offersV1, "fillOffer", [
    nft,
    3n,
    1n,
    weth,
    offered,
    ZERO,
  ]);
  trades.push(trade({ txHash: accepted.transactionHash, tokenId: 3n, price: offered, currency: weth }));
  // The ETH core asks and a private ask (for the buyer only).
  await call(chain, seller, modules.asksCoreEth, A.asksCoreEth, "createAsk", [nft, 4n, ETH / 4n]);
  const core = await call(chain, buyer, modules.asksCoreEth, A.asksCoreEth, "fillAsk", [nft, 4n], ETH / 4n);
  trades.push(trade({ txHash: core.transactionHash, tokenId: 4n, price: ETH / 4n }));
  await call(chain, seller, modules.asksPrivateEth, A.asksPrivateEth, "createAsk", [nft, 5n, ETH / 5n, buyer]);
  const privately = await call(chain, buyer, modules.asksPrivateEth, A.asksPrivateEth, "fillAsk", [nft, 5n], ETH / 5n);
  trades.push(trade({ txHash: privately.transactionHash, tokenId: 5n, price: ETH / 5n }));

  // Auction House: an ETH auction with a curator taking 10 %, and a WETH auction; each won by the buyer.
  const auction = async (id: bigint, tokenId: bigint, currency: Address, bid: bigint, withCurator: boolean) => {
    await call(chain, seller, house, A.auctionHouse, "createAuction", [
      tokenId,
      nft,
      3600n,
      ETH / 10n,
      withCurator ? curator : ZERO,
      withCurator ? 10 : 0,
      currency,
    ]);
    if (withCurator) await call(chain, curator, house, A.auctionHouse, "setAuctionApproval", [id, true]);
    await call(chain, buyer, house, A.auctionHouse, "createBid", [id, bid], currency === ZERO ? bid : 0n);
    await passTime(anvil, 3700);
    const ended = await call(chain, owner, house, A.auctionHouse, "endAuction", [id]);
    trades.push(
      trade({ txHash: ended.transactionHash, tokenId, price: bid, ...(currency === ZERO ? {} : { currency }) }),
    );
  };
  await auction(0n, 6n, ZERO, ETH, true);
  await auction(1n, 7n, weth, (7n * ETH) / 10n, false);

  summary = await indexDevChain(anvil.rpcUrl, db);
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

describe("Zora on anvil through chainmail index", () => {
  it("every trade is one sale, field for field, in chain order", async () => {
    const expected = await Promise.all(trades.map((t) => expectedSale(chain, t)));
    expect(expected.length).toBe(7);
    expect(await recordsInIndex(db, ["sale"])).toEqual(expected);
    expect(summary.unknown_logs).toBe(0);
  });

  it("the sales come from the contracts' own events at their mainnet addresses", async () => {
    const exchangeExecuted = "0x1f432c9454edd444f55492be01e3fa82aa88bfa28e120a039be204253c10c36e";
    expect(await topicsLoggedBy(chain, ZORA_OFFERS_V1, trades)).toContain(exchangeExecuted);
    expect(await topicsLoggedBy(chain, ZORA_ASKS_V1_1, trades)).toContain(exchangeExecuted);
    expect(await topicsLoggedBy(chain, ZORA_AUCTION_HOUSE, trades)).toContain(
      "0x4f35fb3ea0081b3ccbe8df613cab0f9e1694d50a025e0aa09b88a86a3d07c2de",
    );
    expect(await topicsLoggedBy(chain, ZORA_ASKS_CORE_ETH, trades)).toContain(
      "0xed509339c949cdfdb11c117315bb3f74aa98886204732c065edd38979d7ccf53",
    );
    expect(await topicsLoggedBy(chain, ZORA_ASKS_PRIVATE_ETH, trades)).toContain(
      "0x9c826e8c90f6a11429369613c862c10af42611ca3c5d4d4be035765cec439cb5",
    );
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
