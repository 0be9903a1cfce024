/**
 * Seaport fills named by the venue of their order, on anvil: Seaport 1.6 (the build `@opensea/seaport-js` ships)
 * fills orders whose zone or fee wallet is a marketplace's, as that marketplace's orders carry them (the rules and
 * their public sources in src/ingest/venues/seaport.ts, docs/venues.md). Orders are pre-validated on-chain
 * and filled with `fulfillOrder`; one fill carries another site's domain tag after its calldata, which must not
 * change the venue. `chainmail index --seaport <address>` reads them back; every field of every sale record is
 * compared with the order that was filled. The last block names laid-out fills by fee wallet, zone and exchange.
 */
import { encodeFunctionData, type Hex, maxUint256 } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Address, artifacts, type ChainConnection, call, connect, deploy } from "../../../src/demo/contracts.js";
import type { RawLog } from "../../../src/ingest/decode.js";
import { ORDER_FULFILLED, SEAPORT_VENUES } from "../../../src/ingest/venues/seaport.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, address, orderFulfilledData, startAnvil, topic } from "../../support/index-helpers.js";
import { ETH, expectedSale, indexDevChain, type Trade, ZERO } from "../../support/venue-anvil.js";
import { BUYER, decodeLast, log, NFT, SELLER } from "../../support/venue-logs.js";

const ZERO_KEY = `0x${"0".repeat(64)}` as Hex;
const ItemType = { NATIVE: 0, ERC20: 1, ERC721: 2 } as const;
const rule = (marketplace: string, by: "zone" | "fee recipient") =>
  SEAPORT_VENUES.find((r) => r.marketplace === marketplace && r.by === by)!.address as Address;
const BLUR_ZONE = rule("blur", "zone");
const OPENSEA_ZONE = rule("opensea", "zone");
const OPENSEA_WALLET = rule("opensea", "fee recipient");
const LOOKSRARE_WALLET = rule("looksrare", "fee recipient");
const MAGIC_EDEN_WALLET = rule("magiceden", "fee recipient");
const ENSVISION_WALLET = rule("ensvision", "fee recipient");
/** OpenSea's domain tag, which its site appends to the calldata of the fills it submits (Dune's tagging). */
const OPENSEA_DOMAIN_TAG = "360c6ebe";

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
let seaport: Address;
let summary: { unknown_logs: number };
const trades: Trade[] = [];

interface Item {
  itemType: number;
  token: Address;
  identifierOrCriteria: bigint;
  startAmount: bigint;
  endAmount: bigint;
}
const item = (itemType: number, token: Address, id: bigint, amount: bigint): Item => ({
  itemType,
  token,
  identifierOrCriteria: id,
  startAmount: amount,
  endAmount: amount,
});
let salt = 1n;
const order = (offerer: Address, zone: Address, offer: Item[], consideration: (Item & { recipient: Address })[]) => ({
  parameters: {
    offerer,
    zone,
    offer,
    consideration,
    orderType: 0, // FULL_OPEN: the zone is not called, as for an order a marketplace's zone only tags
    startTime: 0n,
    endTime: 2n ** 64n,
    zoneHash: ZERO_KEY,
    salt: salt++,
    conduitKey: ZERO_KEY,
    totalOriginalConsiderationItems: BigInt(consideration.length),
  },
  signature: "0x" as Hex,
});

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("seaport-venues");
  db = await backend.target("seaport-venues");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer, creator] = chain.accounts as [Address, Address, Address, Address];
  const conduits = await deploy(chain, owner, "ConduitController", artifacts.conduitController);
  seaport = await deploy(chain, owner, "Seaport 1.6", artifacts.seaport, [conduits]);
  const nft = await deploy(chain, owner, "DemoERC721", artifacts.erc721);
  const weth = await deploy(chain, owner, "TestERC20 (WETH)", artifacts.weth);
  for (const id of [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n])
    await call(chain, owner, nft, artifacts.erc721, "mint", [seller, id]);
  await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [seaport, true]);
  await call(chain, owner, weth, artifacts.weth, "mint", [buyer, 100n * ETH]);
  await call(chain, buyer, weth, artifacts.weth, "approve", [seaport, maxUint256]);

  /** A listing for `price` ETH: the seller gets the rest after a 2 % fee to `wallet` and a 5 % royalty. */
  const listing = async (tokenId: bigint, zone: Address, wallets: Address[], marketplace: string, tag = "") => {
    const price = ETH + tokenId;
    const fees = wallets.map((wallet) => ({ ...item(ItemType.NATIVE, ZERO, 0n, price / 50n), recipient: wallet }));
    const royalty = { ...item(ItemType.NATIVE, ZERO, 0n, price / 20n), recipient: creator };
    const paid = fees.reduce((sum, f) => sum + f.startAmount, royalty.startAmount);
    const o = order(
      seller,
      zone,
      [item(ItemType.ERC721, nft, tokenId, 1n)],
      [{ ...item(ItemType.NATIVE, ZERO, 0n, price - paid), recipient: seller }, ...fees, royalty],
    );
    await call(chain, seller, seaport, artifacts.seaport, "validate", [[o]]);
    const data = encodeFunctionData({ abi: artifacts.seaport.abi, functionName: "fulfillOrder", args: [o, ZERO_KEY] });
    const hash = await chain.walletClient.sendTransaction({
      account: buyer,
      chain: chain.walletClient.chain,
      to: seaport,
      data: `${data}${tag}` as Hex,
      value: price,
    });
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe("success");
    trades.push({ txHash: hash, seller, buyer, contract: nft, tokenId, contractType: "ERC721", price, marketplace });
  };

  await listing(1n, BLUR_ZONE, [], "blur");
  await listing(2n, ZERO, [MAGIC_EDEN_WALLET], "magiceden");
  await listing(3n, ZERO, [LOOKSRARE_WALLET], "looksrare");
  // The order's zone names the venue before any fee wallet; OpenSea's wallet before another marketplace's.
  await listing(4n, OPENSEA_ZONE, [MAGIC_EDEN_WALLET], "opensea");
  await listing(5n, ZERO, [LOOKSRARE_WALLET, OPENSEA_WALLET], "opensea");
  // A Magic Eden order filled through a transaction tagged as OpenSea's: the order's venue wins.
  await listing(6n, ZERO, [MAGIC_EDEN_WALLET], "magiceden", OPENSEA_DOMAIN_TAG);
  // No known zone or wallet: plain `seaport`.
  await listing(7n, ZERO, [owner], "seaport");

  // An ENS.Vision offer: the buyer offers WETH, the consideration pays the NFT to the buyer and ENS.Vision's fee.
  const offered = (3n * ETH) / 10n;
  const bid = order(
    buyer,
    ZERO,
    [item(ItemType.ERC20, weth, 0n, offered)],
    [
      { ...item(ItemType.ERC721, nft, 8n, 1n), recipient: buyer },
      { ...item(ItemType.ERC20, weth, 0n, offered / 100n), recipient: ENSVISION_WALLET },
    ],
  );
  await call(chain, buyer, seaport, artifacts.seaport, "validate", [[bid]]);
  await call(chain, seller, weth, artifacts.weth, "approve", [seaport, maxUint256]);
  const accepted = await call(chain, seller, seaport, artifacts.seaport, "fulfillOrder", [bid, ZERO_KEY]);
  trades.push({
    txHash: accepted.transactionHash,
    seller,
    buyer,
    contract: nft,
    tokenId: 8n,
    contractType: "ERC721",
    currency: weth,
    price: offered,
    marketplace: "ensvision",
  });

  summary = await indexDevChain(anvil.rpcUrl, db, ["--seaport", seaport]);
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

describe("Seaport fills on anvil, named by their order's venue", () => {
  it("every fill is one sale of its order's marketplace, field for field", async () => {
    const expected = await Promise.all(trades.map((t) => expectedSale(chain, t)));
    expect(expected.map((e) => e.type === "sale" && e.marketplace)).toEqual([
      "blur",
      "magiceden",
      "looksrare",
      "opensea",
      "opensea",
      "magiceden",
      "seaport",
      "ensvision",
    ]);
    expect(await recordsInIndex(db, ["sale"])).toEqual(expected);
    expect(summary.unknown_logs).toBe(0);
  });

  it("the tagged fill really carries the other site's tag after Seaport's arguments", async () => {
    const tagged = trades[5]!;
    const tx = await chain.publicClient.getTransaction({ hash: tagged.txHash });
    expect(tx.input.endsWith(OPENSEA_DOMAIN_TAG)).toBe(true);
    expect(tx.to?.toLowerCase()).toBe(seaport);
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
