/**
 * Rarible on anvil, its three exchanges at their mainnet addresses (the decoder trusts no other), each as Rarible
 * publishes it (scripts/compile-rarible.ts, scripts/extract-rarible-v1.ts), with its transfer proxies, royalties
 * registry and Rarible's own ERC-721 with lazy minting:
 *
 * - the v1 exchange (0xcd4e…5b06, 2020-2021, `Buy`): a listing bought in ETH and a WETH bid for ERC-1155 units;
 * - ExchangeV2 (0x9757…8cd6) as of March 2022, whose `Match` names makers and asset types, then, as on mainnet where
 *   0x9757 is a proxy upgraded in September 2022, the current one, whose `Match` holds the two amounts only; on
 *   each, orders signed as Rarible's EIP-712 rules say and matched with `matchOrders`: an ETH listing bought with
 *   the buyer's origin fee on top, a WETH bid accepted, part of an ERC-1155 listing, and a lazily minted NFT sold
 *   (class ERC721_LAZY, minted by the sale with its creator's signature).
 *
 * `chainmail index` reads them back and every field of every sale record is compared with the orders matched.
 * The last block decodes laid-out logs: legacy and current `Match` edge cases (NFT for NFT, two tokens), v1 `Buy`.
 */
import { encodeAbiParameters, type Hex, keccak256, maxUint256, toHex } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WETH } from "../../../src/chain/tokens.js";
import { type Address, artifacts, type ChainConnection, call, connect, deploy } from "../../../src/demo/contracts.js";
import { RARIBLE_V1, RARIBLE_V2 } from "../../../src/ingest/venues/rarible.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import erc20ProxyJson from "../../fixtures/rarible/ERC20TransferProxy.json" with { type: "json" };
import lazyProxyJson from "../../fixtures/rarible/ERC721LazyMintTransferProxy.json" with { type: "json" };
import tokenJson from "../../fixtures/rarible/ERC721RaribleMinimal.json" with { type: "json" };
import holderV1Json from "../../fixtures/rarible/ExchangeOrdersHolderV1.json" with { type: "json" };
import stateV1Json from "../../fixtures/rarible/ExchangeStateV1.json" with { type: "json" };
import exchangeV1Json from "../../fixtures/rarible/ExchangeV1.json" with { type: "json" };
import exchangeJson from "../../fixtures/rarible/ExchangeV2.json" with { type: "json" };
import legacyExchangeJson from "../../fixtures/rarible/ExchangeV2Legacy.json" with { type: "json" };
import royaltiesJson from "../../fixtures/rarible/RoyaltiesRegistry.json" with { type: "json" };
import proxyJson from "../../fixtures/rarible/TransferProxy.json" with { type: "json" };
import deprecatedProxyJson from "../../fixtures/rarible/TransferProxyForDeprecated.json" with { type: "json" };
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, address, startAnvil, topic, word } from "../../support/index-helpers.js";
import { placeContract } from "../../support/place-contract.js";
import {
  artifactOf,
  deployWithHash,
  ETH,
  expectedSale,
  indexDevChain,
  type Trade,
  topicsLoggedBy,
  ZERO,
} from "../../support/venue-anvil.js";
import {
  BUYER,
  decodeLast,
  erc20 as erc20Log,
  erc721,
  log,
  NFT,
  SELLER,
  saleView,
  table,
} from "../../support/venue-logs.js";

const A = {
  exchange: artifactOf(exchangeJson),
  legacyExchange: artifactOf(legacyExchangeJson),
  proxy: artifactOf(proxyJson),
  erc20Proxy: artifactOf(erc20ProxyJson),
  lazyProxy: artifactOf(lazyProxyJson),
  royalties: artifactOf(royaltiesJson),
  token: artifactOf(tokenJson),
  exchangeV1: artifactOf(exchangeV1Json),
  stateV1: artifactOf(stateV1Json),
  holderV1: artifactOf(holderV1Json),
  deprecatedProxy: artifactOf(deprecatedProxyJson),
};
const EXCHANGE_V1 = RARIBLE_V1[0] as Address;
/** ExchangeV1's asset types (ExchangeDomainV1.AssetType). */
const V1_TYPE = { ETH: 0, ERC20: 1, ERC1155: 2, ERC721: 3 } as const;
const EXCHANGE = RARIBLE_V2 as Address;
/** bytes4(keccak256(name)): Rarible's asset classes and order data types. */
const id4 = (name: string) => keccak256(toHex(name)).slice(0, 10) as Hex;
const CLASS = { ETH: id4("ETH"), ERC20: id4("ERC20"), ERC721: id4("ERC721"), ERC1155: id4("ERC1155") };
const ERC721_LAZY = id4("ERC721_LAZY");
const V2 = id4("V2");
const DEFAULT_DATA = "0xffffffff" as Hex;

interface Asset {
  assetType: { assetClass: Hex; data: Hex };
  value: bigint;
}
interface Order {
  maker: Address;
  makeAsset: Asset;
  taker: Address;
  takeAsset: Asset;
  salt: bigint;
  start: bigint;
  end: bigint;
  dataType: Hex;
  data: Hex;
}
const ORDER_TYPES = {
  AssetType: [
    { name: "assetClass", type: "bytes4" },
    { name: "data", type: "bytes" },
  ],
  Asset: [
    { name: "assetType", type: "AssetType" },
    { name: "value", type: "uint256" },
  ],
  Order: [
    { name: "maker", type: "address" },
    { name: "makeAsset", type: "Asset" },
    { name: "taker", type: "address" },
    { name: "takeAsset", type: "Asset" },
    { name: "salt", type: "uint256" },
    { name: "start", type: "uint256" },
    { name: "end", type: "uint256" },
    { name: "dataType", type: "bytes4" },
    { name: "data", type: "bytes" },
  ],
} as const;
const MINT_TYPES = {
  Part: [
    { name: "account", type: "address" },
    { name: "value", type: "uint96" },
  ],
  Mint721: [
    { name: "tokenId", type: "uint256" },
    { name: "tokenURI", type: "string" },
    { name: "creators", type: "Part[]" },
    { name: "royalties", type: "Part[]" },
  ],
} as const;
const PART = { type: "tuple[]", components: MINT_TYPES.Part } as const;

const eth = (value: bigint): Asset => ({ assetType: { assetClass: CLASS.ETH, data: "0x" }, value });
const erc20 = (token: Address, value: bigint): Asset => ({
  assetType: { assetClass: CLASS.ERC20, data: encodeAbiParameters([{ type: "address" }], [token]) },
  value,
});
const nftAsset = (assetClass: Hex, token: Address, tokenId: bigint, value: bigint): Asset => ({
  assetType: {
    assetClass,
    data: encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [token, tokenId]),
  },
  value,
});
/** Order data V2: payouts (none: the maker), origin fees, make-fill off. */
const dataV2 = (originFees: { account: Address; value: bigint }[]) =>
  encodeAbiParameters(
    [
      {
        type: "tuple",
        components: [
          { ...PART, name: "payouts" },
          { ...PART, name: "originFees" },
          { name: "isMakeFill", type: "bool" },
        ],
      },
    ],
    [{ payouts: [], originFees, isMakeFill: false }],
  );

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
let summary: { unknown_logs: number };
const trades: Trade[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("rarible");
  db = await backend.target("rarible");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer, fees] = chain.accounts as [Address, Address, Address, Address];
  const chainId = await chain.publicClient.getChainId();

  // The exchange's plumbing, initialised as Rarible's deploy scripts do, the exchange moved to its mainnet address.
  const proxy = await deploy(chain, owner, "TransferProxy", A.proxy);
  await call(chain, owner, proxy, A.proxy, "__TransferProxy_init", []);
  const erc20Proxy = await deploy(chain, owner, "ERC20TransferProxy", A.erc20Proxy);
  await call(chain, owner, erc20Proxy, A.erc20Proxy, "__ERC20TransferProxy_init", []);
  const lazyProxy = await deploy(chain, owner, "ERC721LazyMintTransferProxy", A.lazyProxy);
  await call(chain, owner, lazyProxy, A.lazyProxy, "__OperatorRole_init", []);
  const royalties = await deploy(chain, owner, "RoyaltiesRegistry", A.royalties);
  await call(chain, owner, royalties, A.royalties, "__RoyaltiesRegistry_init", []);
  /** Puts an ExchangeV2 build at the mainnet address, initialised as Rarible's deploy scripts do. */
  const install = async (artifact: typeof A.exchange) => {
    const built = await deployWithHash(chain, owner, artifact);
    const init = await call(chain, owner, built.address, artifact, "__ExchangeV2_init", [
      proxy,
      erc20Proxy,
      0n,
      ZERO,
      royalties,
    ]);
    const lazyClass = await call(chain, owner, built.address, artifact, "setTransferProxy", [ERC721_LAZY, lazyProxy]);
    await placeContract(anvil, built.address, EXCHANGE, [built.hash, init.transactionHash, lazyClass.transactionHash]);
  };
  for (const [p, artifact] of [
    [proxy, A.proxy],
    [erc20Proxy, A.erc20Proxy],
    [lazyProxy, A.lazyProxy],
  ] as const) {
    await call(chain, owner, p, artifact, "addOperator", [EXCHANGE]);
  }

  const nft = await deploy(chain, owner, "DemoERC721", artifacts.erc721);
  const multi = await deploy(chain, owner, "DemoERC1155", artifacts.erc1155);
  const weth = await deploy(chain, owner, "TestERC20 (WETH)", artifacts.weth);
  const lazy = await deploy(chain, owner, "ERC721RaribleMinimal", A.token);
  await call(chain, owner, lazy, A.token, "__ERC721Rarible_init", ["Lazy", "LZ", "ipfs:/", "", proxy, lazyProxy]);
  await call(chain, owner, multi, artifacts.erc1155, "mint", [seller, 7n, 5n]);
  await call(chain, seller, nft, artifacts.erc721, "setApprovalForAll", [proxy, true]);
  await call(chain, seller, multi, artifacts.erc1155, "setApprovalForAll", [proxy, true]);
  await call(chain, owner, weth, artifacts.weth, "mint", [buyer, 10n * ETH]);
  await call(chain, buyer, weth, artifacts.weth, "approve", [erc20Proxy, maxUint256]);

  let salt = 1n;
  let nextNft = 1n;
  let lazySerial = 1n;
  /** The four trades, on the exchange build now at the mainnet address. */
  const tradeOn = async (version: "legacy" | "current") => {
    const exchange = version === "legacy" ? A.legacyExchange : A.exchange;
    const [listed, bidFor] = [nextNft++, nextNft++];
    /** A signed order of `maker` (salt ≠ 0), and the counter-order of the caller (salt 0: its own, unsigned). */
    const signed = async (maker: Address, makeAsset: Asset, takeAsset: Asset) => {
      const order: Order = {
        maker,
        makeAsset,
        taker: ZERO,
        takeAsset,
        salt: salt++,
        start: 0n,
        end: 0n,
        dataType: V2,
        data: dataV2([]),
      };
      const signature = await chain.walletClient.signTypedData({
        account: maker,
        domain: { name: "Exchange", version: "2", chainId, verifyingContract: EXCHANGE },
        types: ORDER_TYPES,
        primaryType: "Order",
        message: order,
      });
      return { order, signature };
    };
    const counter = (maker: Address, makeAsset: Asset, takeAsset: Asset, data: Hex = "0x"): Order => ({
      maker,
      makeAsset,
      taker: ZERO,
      takeAsset,
      salt: 0n,
      start: 0n,
      end: 0n,
      dataType: data === "0x" ? DEFAULT_DATA : V2,
      data,
    });
    const match = (from: Address, left: { order: Order; signature: Hex }, right: Order, value?: bigint) =>
      call(chain, from, EXCHANGE, exchange, "matchOrders", [left.order, left.signature, right, "0x"], value);
    const trade = (t: Omit<Trade, "seller" | "buyer" | "marketplace">): Trade => ({
      seller,
      buyer,
      marketplace: "rarible",
      ...t,
    });

    // An ETH listing; the buyer's order adds a 1 % origin fee, which the buyer pays on top of the price.
    const listing = await signed(seller, nftAsset(CLASS.ERC721, nft, listed, 1n), eth(ETH));
    const buy = counter(
      buyer,
      eth(ETH),
      nftAsset(CLASS.ERC721, nft, listed, 1n),
      dataV2([{ account: fees, value: 100n }]),
    );
    const bought = await match(buyer, listing, buy, ETH + ETH / 100n);
    trades.push(
      trade({ txHash: bought.transactionHash, contract: nft, tokenId: listed, contractType: "ERC721", price: ETH }),
    );

    // A WETH bid accepted: the bid is the signed (left) order, the seller's the counter-order.
    const offered = ETH / 2n;
    const bid = await signed(buyer, erc20(weth, offered), nftAsset(CLASS.ERC721, nft, bidFor, 1n));
    const taking = counter(seller, nftAsset(CLASS.ERC721, nft, bidFor, 1n), erc20(weth, offered));
    const accepted = await match(seller, bid, taking);
    trades.push(
      trade({
        txHash: accepted.transactionHash,
        contract: nft,
        tokenId: bidFor,
        contractType: "ERC721",
        currency: weth,
        price: offered,
      }),
    );

    // Two of five ERC-1155 units listed for 0.5 ETH: 0.2 ETH.
    const units = await signed(seller, nftAsset(CLASS.ERC1155, multi, 7n, 5n), eth(ETH / 2n));
    const part = counter(buyer, eth(ETH / 5n), nftAsset(CLASS.ERC1155, multi, 7n, 2n));
    const partial = await match(buyer, units, part, ETH / 5n);
    trades.push(
      trade({
        txHash: partial.transactionHash,
        contract: multi,
        tokenId: 7n,
        quantity: 2n,
        contractType: "ERC1155",
        price: ETH / 5n,
      }),
    );

    // A lazy mint: the creator (the seller) signs the mint data and lists it; the sale mints it to the buyer.
    const tokenId = (BigInt(seller) << 96n) | lazySerial++;
    const mint = { tokenId, tokenURI: `/${tokenId}`, creators: [{ account: seller, value: 10_000n }], royalties: [] };
    const mintSignature = await chain.walletClient.signTypedData({
      account: seller,
      domain: { name: "Mint721", version: "1", chainId, verifyingContract: lazy },
      types: MINT_TYPES,
      primaryType: "Mint721",
      message: mint,
    });
    const lazyAsset: Asset = {
      assetType: {
        assetClass: ERC721_LAZY,
        data: encodeAbiParameters(
          [
            { type: "address" },
            {
              type: "tuple",
              components: [
                { name: "tokenId", type: "uint256" },
                { name: "tokenURI", type: "string" },
                { ...PART, name: "creators" },
                { ...PART, name: "royalties" },
                { name: "signatures", type: "bytes[]" },
              ],
            },
          ],
          [lazy, { ...mint, signatures: [mintSignature] }],
        ),
      },
      value: 1n,
    };
    const lazyListing = await signed(seller, lazyAsset, eth((3n * ETH) / 10n));
    const minted = await match(buyer, lazyListing, counter(buyer, eth((3n * ETH) / 10n), lazyAsset), (3n * ETH) / 10n);
    trades.push(
      trade({
        txHash: minted.transactionHash,
        contract: lazy,
        tokenId,
        contractType: "ERC721_lazy",
        price: (3n * ETH) / 10n,
      }),
    );
  };

  // The v1 exchange (2020-2021): orders registered on-chain in its orders holder (no order signature then), the
  // buyer's fee signed by the fee signer, as its `exchange` requires.
  const stateV1 = await deploy(chain, owner, "ExchangeStateV1", A.stateV1);
  const holderV1 = await deploy(chain, owner, "ExchangeOrdersHolderV1", A.holderV1);
  const deprecatedProxy = await deploy(chain, owner, "TransferProxyForDeprecated", A.deprecatedProxy);
  const builtV1 = await deployWithHash(chain, owner, A.exchangeV1, [
    proxy,
    deprecatedProxy,
    erc20Proxy,
    stateV1,
    holderV1,
    fees,
    owner,
  ]);
  await placeContract(anvil, builtV1.address, EXCHANGE_V1, [builtV1.hash]);
  await call(chain, owner, stateV1, A.stateV1, "addOperator", [EXCHANGE_V1]);
  for (const [p, artifact] of [
    [proxy, A.proxy],
    [erc20Proxy, A.erc20Proxy],
  ] as const) {
    await call(chain, owner, p, artifact, "addOperator", [EXCHANGE_V1]);
  }
  const noSignature = { v: 0, r: `0x${"0".repeat(64)}`, s: `0x${"0".repeat(64)}` };
  const v1Exchange = async (from: Address, order: unknown, amount: bigint, value?: bigint) => {
    await call(chain, (order as { key: { owner: Address } }).key.owner, holderV1, A.holderV1, "add", [order]);
    const message = (await chain.publicClient.readContract({
      address: EXCHANGE_V1,
      abi: A.exchangeV1.abi,
      functionName: "prepareBuyerFeeMessage",
      args: [order, 0n],
    })) as string;
    const signature = await chain.walletClient.signMessage({ account: owner, message });
    const feeSignature = {
      v: Number.parseInt(signature.slice(130, 132), 16),
      r: signature.slice(0, 66),
      s: `0x${signature.slice(66, 130)}`,
    };
    return call(
      chain,
      from,
      EXCHANGE_V1,
      A.exchangeV1,
      "exchange",
      [order, noSignature, 0n, feeSignature, amount, ZERO],
      value,
    );
  };
  const asset = (token: Address, tokenId: bigint, assetType: number) => ({ token, tokenId, assetType });
  for (let id = 1n; id <= 5n; id++) await call(chain, owner, nft, artifacts.erc721, "mint", [seller, id]);
  await call(chain, owner, multi, artifacts.erc1155, "mint", [seller, 8n, 5n]);
  // A listing for 0.4 ETH, bought.
  const listingV1 = {
    key: {
      owner: seller,
      salt: 1001n,
      sellAsset: asset(nft, 5n, V1_TYPE.ERC721),
      buyAsset: asset(ZERO, 0n, V1_TYPE.ETH),
    },
    selling: 1n,
    buying: (4n * ETH) / 10n,
    sellerFee: 0n,
  };
  const boughtV1 = await v1Exchange(buyer, listingV1, 1n, (4n * ETH) / 10n);
  trades.push({
    txHash: boughtV1.transactionHash,
    seller,
    buyer,
    contract: nft,
    tokenId: 5n,
    contractType: "ERC721",
    price: (4n * ETH) / 10n,
    marketplace: "rarible",
  });
  // A bid: the buyer offers 0.6 WETH for 3 ERC-1155 units; the seller takes all of it.
  const bidV1 = {
    key: {
      owner: buyer,
      salt: 1002n,
      sellAsset: asset(weth, 0n, V1_TYPE.ERC20),
      buyAsset: asset(multi, 8n, V1_TYPE.ERC1155),
    },
    selling: (6n * ETH) / 10n,
    buying: 3n,
    sellerFee: 0n,
  };
  const soldV1 = await v1Exchange(seller, bidV1, (6n * ETH) / 10n);
  trades.push({
    txHash: soldV1.transactionHash,
    seller,
    buyer,
    contract: multi,
    tokenId: 8n,
    quantity: 3n,
    contractType: "ERC1155",
    currency: weth,
    price: (6n * ETH) / 10n,
    marketplace: "rarible",
  });

  await install(A.legacyExchange);
  await tradeOn("legacy");
  await install(A.exchange); // the upgrade
  await tradeOn("current");

  summary = await indexDevChain(anvil.rpcUrl, db);
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

describe("Rarible ExchangeV2 on anvil through chainmail index", () => {
  it("every match is one sale, field for field, in chain order", async () => {
    const expected = await Promise.all(trades.map((t) => expectedSale(chain, t)));
    expect(expected.length).toBe(10);
    expect(await recordsInIndex(db, ["sale"])).toEqual(expected);
    expect(summary.unknown_logs).toBe(0);
  });

  it("the v1 exchange logged Buy; ExchangeV2 the legacy Match before the upgrade and the current one after", async () => {
    expect(await topicsLoggedBy(chain, EXCHANGE_V1, trades.slice(0, 2))).toEqual([
      "0xdddcdb07e460849cf04a4445b7af9faf01b7f5c7ba75deaf969ac5ed830312c3",
    ]);
    expect(await topicsLoggedBy(chain, EXCHANGE, trades.slice(2, 6))).toEqual([
      "0x268820db288a211986b26a8fda86b1e0046281b21206936bb0e61c67b5c79ef4",
    ]);
    expect(await topicsLoggedBy(chain, EXCHANGE, trades.slice(6))).toEqual([
      "0x956cd63ee4cdcd81fda5f0ec7c6c36dceda99e1b412f4a650a5d26055dc3c450",
    ]);
  });

  it("the lazily minted NFT was minted by the sale, to the creator and on to the buyer", async () => {
    const lazySale = trades[9]!;
    const transfers = await recordsInIndex(db, ["mint", "transfer"]);
    const ofSale = transfers.filter((t) => t.transaction_hash === lazySale.txHash);
    expect(ofSale.map((t) => t.type)).toEqual(["mint", "transfer"]);
    expect(ofSale[1]).toMatchObject({ transfer_from: lazySale.seller, transfer_to: lazySale.buyer });
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
      saleView(venue.decode(match, { logs: [match, erc20Log(WETH, BUYER, SELLER, ETH), erc721(SELLER, BUYER, 1)] })),
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
