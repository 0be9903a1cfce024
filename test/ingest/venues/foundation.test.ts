/**
 * Foundation on anvil: NFTMarket as Foundation publishes it (scripts/compile-foundation.ts), with its treasury,
 * FETH and Manifold's royalty registry, placed at its mainnet address 0xcda7…0b6f (the decoder trusts no other)
 * and initialised there. A reserve auction won, a buy-now sale and an accepted offer (made in FETH) are driven
 * through the market's own functions; `chainmail index` reads them back and every field of every sale record is
 * compared with the trade the test made. (The real auction settlements in test/fixtures/index-mainnet check the
 * same decoder on mainnet logs; this version of the market has no private sales, whose event is checked in
 * the last block of this file, on a laid-out log.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Address, artifacts, type ChainConnection, call, connect, deploy } from "../../../src/demo/contracts.js";
import { FOUNDATION_MARKET } from "../../../src/ingest/venues/foundation.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import fethJson from "../../fixtures/foundation/FETH.json" with { type: "json" };
import treasuryJson from "../../fixtures/foundation/FoundationTreasury.json" with { type: "json" };
import marketJson from "../../fixtures/foundation/NFTMarket.json" with { type: "json" };
import registryJson from "../../fixtures/foundation/RoyaltyRegistry.json" with { type: "json" };
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, startAnvil, topic, word } from "../../support/index-helpers.js";
import { placeContract } from "../../support/place-contract.js";
import {
  artifactOf,
  deployWithHash,
  ETH,
  expectedSale,
  indexDevChain,
  passTime,
  type Trade,
  topicsLoggedBy,
  ZERO,
} from "../../support/venue-anvil.js";
import { BUYER, decodeLast, erc721, log, NFT, SELLER, saleView } from "../../support/venue-logs.js";

const A = {
  market: artifactOf(marketJson),
  feth: artifactOf(fethJson),
  treasury: artifactOf(treasuryJson),
  registry: artifactOf(registryJson),
};
const MARKET = FOUNDATION_MARKET as Address;
/** Where the test puts the treasury (any free address: the market holds it as an immutable). */
const TREASURY = "0x00000000000000000000000000000000f0f0f0f0" as Address;
const DAY = 24 * 3600;

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
let summary: { unknown_logs: number };
const trades: Trade[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("foundation");
  db = await backend.target("foundation");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer] = chain.accounts as [Address, Address, Address];

  // Foundation's implementations lock themselves at construction, as behind its proxies: each is moved without
  // its constructor's storage and initialised where it now lives.
  const treasury = await deployWithHash(chain, owner, A.treasury);
  await placeContract(anvil, treasury.address, TREASURY, []);
  await call(chain, owner, TREASURY, A.treasury, "initialize", [owner]);
  // FETH and the market each insist the other is a contract: the market's address gets code first.
  await placeContract(anvil, treasury.address, MARKET, []);
  const feth = await deploy(chain, owner, "FETH", A.feth, [MARKET, TREASURY, BigInt(DAY)]);
  const registry = await deploy(chain, owner, "RoyaltyRegistry", A.registry);
  const market = await deployWithHash(chain, owner, A.market, [TREASURY, feth, registry, BigInt(DAY)]);
  await placeContract(anvil, market.address, MARKET, []);
  await call(chain, owner, MARKET, A.market, "initialize", []);

  const nft = await deploy(chain, owner, "DemoERC721", artifacts.erc721);
  for (const id of [1n, 2n, 3n]) await call(chain, owner, nft, artifacts.erc721, "mint", [seller, id]);
  await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [MARKET, true]);
  const trade = (t: Pick<Trade, "txHash" | "tokenId" | "price">): Trade => ({
    seller,
    buyer,
    contract: nft,
    contractType: "ERC721",
    marketplace: "foundation",
    ...t,
  });

  // A reserve auction: the NFT goes into escrow, the buyer bids, the seller settles after the auction's day.
  await call(chain, seller, MARKET, A.market, "createReserveAuction", [nft, 1n, ETH / 10n]);
  const auctionId = (await chain.publicClient.readContract({
    address: MARKET,
    abi: A.market.abi,
    functionName: "getReserveAuctionIdFor",
    args: [nft, 1n],
  })) as bigint;
  const bid = ETH / 2n;
  await call(chain, buyer, MARKET, A.market, "placeBid", [auctionId], bid);
  await passTime(anvil, DAY + 60);
  const settled = await call(chain, seller, MARKET, A.market, "finalizeReserveAuction", [auctionId]);
  trades.push(trade({ txHash: settled.transactionHash, tokenId: 1n, price: bid }));

  // Buy now.
  await call(chain, seller, MARKET, A.market, "setBuyPrice", [nft, 2n, ETH]);
  const bought = await call(chain, buyer, MARKET, A.market, "buy", [nft, 2n, ETH], ETH);
  trades.push(trade({ txHash: bought.transactionHash, tokenId: 2n, price: ETH }));

  // An offer, held in FETH, accepted by the owner.
  const offered = (3n * ETH) / 10n;
  await call(chain, buyer, MARKET, A.market, "makeOfferV2", [nft, 3n, offered, ZERO], offered);
  const accepted = await call(chain, seller, MARKET, A.market, "acceptOffer", [nft, 3n, buyer, offered]);
  trades.push(trade({ txHash: accepted.transactionHash, tokenId: 3n, price: offered }));

  summary = await indexDevChain(anvil.rpcUrl, db);
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

describe("Foundation on anvil through chainmail index", () => {
  it("every trade is one sale at its full price, field for field, in chain order", async () => {
    const expected = await Promise.all(trades.map((t) => expectedSale(chain, t)));
    expect(expected.length).toBe(3);
    expect(await recordsInIndex(db, ["sale"])).toEqual(expected);
    expect(summary.unknown_logs).toBe(0);
  });

  it("the sales come from the market's own events at its mainnet address", async () => {
    expect(await topicsLoggedBy(chain, MARKET, trades)).toEqual(
      expect.arrayContaining([
        "0x2edb0e99c6ac35be6731dab554c1d1fa1b7beb675090dbb09fb14e615aca1c4a", // ReserveAuctionFinalized
        "0xd28c0a7dd63bc853a4e36306655da9f8c0b29ff9d0605bb976ae420e46a99930", // BuyPriceAccepted
        "0x1cb8adb37d6d35e94cd0695ca39895b84371864713f5ca7eada52af9ff23744b", // OfferAccepted
      ]),
    );
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
