/**
 * LooksRare v2 on anvil: the exchange LooksRare publishes on npm (built by scripts/compile-looksrare-v2.ts), with
 * orders signed as its EIP-712 rules say and filled by its own `executeTakerBid` / `executeTakerAsk`, so the
 * `TakerBid` / `TakerAsk` logs are the contract's own. `chainmail index` reads them back; every field of every
 * sale record is compared with the order that was filled and the receipt and block it landed in.
 *
 * The decoder only trusts logs from the mainnet address 0x0000…2377, so the exchange is deployed normally and
 * then placed there: its runtime code with anvil_setCode and every storage slot its constructor and setup wrote
 * (read with the prestate tracer) with anvil_setStorageAt. The domain separator it stored names the address it
 * was deployed at, so orders are signed for that one.
 */
import { type Abi, formatUnits, type Hex, maxUint256 } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Address,
  type Artifact,
  artifacts,
  type ChainConnection,
  call,
  connect,
  deploy,
} from "../../../src/demo/contracts.js";
import { LOOKSRARE_V2 } from "../../../src/ingest/venues/looksrare.js";
import type { TransactionRecord } from "../../../src/schemas/transactions.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import looksRareProtocol from "../../fixtures/looksrare-v2/LooksRareProtocol.json" with { type: "json" };
import transferManager from "../../fixtures/looksrare-v2/TransferManager.json" with { type: "json" };
import { runCli, warningsOf } from "../../support/helpers.js";
import { type IndexBackend, openBackend, recordsInIndex } from "../../support/index-backend.js";
import { type Anvil, startAnvil } from "../../support/index-helpers.js";
import { placeContract } from "../../support/place-contract.js";

const protocolArtifact: Artifact = { abi: looksRareProtocol.abi as Abi, bytecode: looksRareProtocol.bytecode as Hex };
const managerArtifact: Artifact = { abi: transferManager.abi as Abi, bytecode: transferManager.bytecode as Hex };
const EXCHANGE = LOOKSRARE_V2 as Address;
const ETH = 10n ** 18n;
const ZERO = "0x0000000000000000000000000000000000000000" as Address;
const QUOTE = { bid: 0, ask: 1 } as const;
const COLLECTION = { ERC721: 0, ERC1155: 1 } as const;

/** LooksRare v2's `Maker` struct (libraries/OrderStructs.sol), as signed and as passed to the exchange. */
interface Maker {
  quoteType: number;
  globalNonce: bigint;
  subsetNonce: bigint;
  orderNonce: bigint;
  strategyId: bigint;
  collectionType: number;
  collection: Address;
  currency: Address;
  signer: Address;
  startTime: bigint;
  endTime: bigint;
  price: bigint;
  itemIds: bigint[];
  amounts: bigint[];
  additionalParameters: Hex;
}
const MAKER_TYPES = {
  Maker: [
    { name: "quoteType", type: "uint8" },
    { name: "globalNonce", type: "uint256" },
    { name: "subsetNonce", type: "uint256" },
    { name: "orderNonce", type: "uint256" },
    { name: "strategyId", type: "uint256" },
    { name: "collectionType", type: "uint8" },
    { name: "collection", type: "address" },
    { name: "currency", type: "address" },
    { name: "signer", type: "address" },
    { name: "startTime", type: "uint256" },
    { name: "endTime", type: "uint256" },
    { name: "price", type: "uint256" },
    { name: "itemIds", type: "uint256[]" },
    { name: "amounts", type: "uint256[]" },
    { name: "additionalParameters", type: "bytes" },
  ],
} as const;

/** What one filled order must come out as: one sale per item, the price split evenly. */
interface Fill {
  txHash: Hex;
  order: Maker;
  seller: Address;
  buyer: Address;
  contractType: "ERC721" | "ERC1155";
}

let anvil: Anvil;
let chain: ChainConnection;
let backend: IndexBackend;
let db: string;
const fills: Fill[] = [];
let collections: { erc721: Address; erc1155: Address; weth: Address };

/** Deploys the exchange, sets it up, and moves it (code and storage) to the mainnet address. */
async function installExchange(owner: Address, feeRecipient: Address, weth: Address) {
  const manager = await deploy(chain, owner, "TransferManager", managerArtifact, [owner]);
  const hash = await chain.walletClient.deployContract({
    account: owner,
    chain: chain.walletClient.chain,
    abi: protocolArtifact.abi,
    bytecode: protocolArtifact.bytecode,
    args: [owner, feeRecipient, manager, weth],
  });
  const deployed = await chain.publicClient.waitForTransactionReceipt({ hash });
  const original = deployed.contractAddress!.toLowerCase() as Address;
  const setup = [hash as string];
  // ETH and the WETH stand-in as accepted currencies (owner-only setup, as on mainnet).
  for (const currency of [ZERO, weth]) {
    const r = await call(chain, owner, original, protocolArtifact, "updateCurrencyStatus", [currency, true]);
    setup.push(r.transactionHash);
  }
  await placeContract(anvil, original, EXCHANGE, setup);
  await call(chain, owner, manager, managerArtifact, "allowOperator", [EXCHANGE]);
  return { manager, original };
}

beforeAll(async () => {
  anvil = await startAnvil();
  backend = await openBackend("looksrare-v2");
  db = await backend.target("looksrare-v2");
  chain = await connect(anvil.rpcUrl);
  const [owner, seller, buyer, fees] = chain.accounts as [Address, Address, Address, Address];
  collections = {
    erc721: await deploy(chain, owner, "DemoERC721", artifacts.erc721),
    erc1155: await deploy(chain, owner, "DemoERC1155", artifacts.erc1155),
    weth: await deploy(chain, owner, "TestERC20 (WETH)", artifacts.weth),
  };
  const { erc721, erc1155, weth } = collections;
  const { manager, original } = await installExchange(owner, fees, weth);
  const chainId = await chain.publicClient.getChainId();

  // The seller's NFTs, approved to the transfer manager, which may serve the exchange; the buyer's WETH.
  for (const id of [1n, 2n, 3n, 4n]) await call(chain, owner, erc721, artifacts.erc721, "mint", [seller, id]);
  await call(chain, owner, erc1155, artifacts.erc1155, "mint", [seller, 7n, 5n]);
  for (const [nft, artifact] of [
    [erc721, artifacts.erc721],
    [erc1155, artifacts.erc1155],
  ] as const) {
    await call(chain, seller, nft, artifact, "setApprovalForAll", [manager, true]);
  }
  await call(chain, seller, manager, managerArtifact, "grantApprovals", [[EXCHANGE]]);
  await call(chain, owner, weth, artifacts.weth, "mint", [buyer, 10n * ETH]);
  await call(chain, buyer, weth, artifacts.weth, "approve", [EXCHANGE, maxUint256]);

  let nonce = 0n;
  const order = (
    o: Pick<
      Maker,
      "quoteType" | "collectionType" | "collection" | "currency" | "signer" | "price" | "itemIds" | "amounts"
    >,
  ): Maker => ({
    ...o,
    globalNonce: 0n,
    subsetNonce: 0n,
    orderNonce: nonce++,
    strategyId: 0n,
    startTime: 0n,
    endTime: 2n ** 40n,
    additionalParameters: "0x",
  });
  const sign = (maker: Maker) =>
    chain.walletClient.signTypedData({
      account: maker.signer,
      domain: { name: "LooksRareProtocol", version: "2", chainId, verifyingContract: original },
      types: MAKER_TYPES,
      primaryType: "Maker",
      message: maker,
    });
  const noTree = { root: `0x${"00".repeat(32)}`, proof: [] };

  /** A listing bought with ETH: the buyer calls executeTakerBid. */
  const buyListing = async (maker: Maker, contractType: Fill["contractType"]) => {
    const r = await call(
      chain,
      buyer,
      EXCHANGE,
      protocolArtifact,
      "executeTakerBid",
      [{ recipient: buyer, additionalParameters: "0x" }, maker, await sign(maker), noTree, ZERO],
      maker.price,
    );
    fills.push({ txHash: r.transactionHash, order: maker, seller, buyer, contractType });
  };
  const ask = { quoteType: QUOTE.ask, currency: ZERO, signer: seller };
  await buyListing(
    order({ ...ask, collectionType: COLLECTION.ERC721, collection: erc721, price: ETH, itemIds: [1n], amounts: [1n] }),
    "ERC721",
  );
  await buyListing(
    order({
      ...ask,
      collectionType: COLLECTION.ERC1155,
      collection: erc1155,
      price: (3n * ETH) / 10n,
      itemIds: [7n],
      amounts: [3n],
    }),
    "ERC1155",
  );
  // Two items in one order: two sales, half the price each.
  await buyListing(
    order({
      ...ask,
      collectionType: COLLECTION.ERC721,
      collection: erc721,
      price: ETH / 2n + 1n,
      itemIds: [2n, 3n],
      amounts: [1n, 1n],
    }),
    "ERC721",
  );
  // A WETH bid accepted: the seller calls executeTakerAsk.
  const bid = order({
    quoteType: QUOTE.bid,
    collectionType: COLLECTION.ERC721,
    collection: erc721,
    currency: weth,
    signer: buyer,
    price: (8n * ETH) / 10n,
    itemIds: [4n],
    amounts: [1n],
  });
  const r = await call(chain, seller, EXCHANGE, protocolArtifact, "executeTakerAsk", [
    { recipient: seller, additionalParameters: "0x" },
    bid,
    await sign(bid),
    noTree,
    ZERO,
  ]);
  fills.push({ txHash: r.transactionHash, order: bid, seller, buyer, contractType: "ERC721" });

  const out = await runCli(["index", "--rpc", anvil.rpcUrl, "--db", db, "--from-block", "0", "--once"], {
    env: { INDEX_RPC_MAX_RETRIES: "0" },
  });
  expect(warningsOf(out.stderr)).toBe("");
  expect(out.code).toBe(0);
}, 120_000);

afterAll(async () => {
  closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

const onChain = (types: string[]) => recordsInIndex(db, types);

/** The sale records of a fill, from the order, its receipt and its block (never from the index). */
async function expectedSales(fill: Fill): Promise<TransactionRecord[]> {
  const receipt = await chain.publicClient.getTransactionReceipt({ hash: fill.txHash });
  const block = await chain.publicClient.getBlock({ blockHash: receipt.blockHash });
  const { order } = fill;
  const each = order.price / BigInt(order.itemIds.length);
  return order.itemIds.map(
    (id, i) =>
      ({
        type: "sale",
        buyer_address: fill.buyer,
        seller_address: fill.seller,
        nft: { contract_type: fill.contractType, contract_address: order.collection, token_id: id.toString() },
        quantity: Number(order.amounts[i]),
        price_details:
          order.currency === ZERO
            ? { asset_type: "ETH", price: Number(formatUnits(each, 18)), price_usd: null }
            : {
                asset_type: "ERC20",
                contract_address: order.currency,
                price: Number(formatUnits(each, 18)),
                price_usd: null,
              },
        transaction_hash: fill.txHash,
        block_hash: block.hash,
        block_number: Number(block.number),
        transaction_date: new Date(Number(block.timestamp) * 1000).toISOString().slice(0, 19),
        marketplace: "looksrare",
      }) as TransactionRecord,
  );
}

describe("LooksRare v2 on anvil through chainmail index", () => {
  it("every filled order is its sales, field for field, in chain order", async () => {
    const expected = (await Promise.all(fills.map(expectedSales))).flat();
    expect(expected.length).toBe(5);
    expect(await onChain(["sale"])).toEqual(expected);
  });

  it("the exchange's logs are its own TakerBid/TakerAsk from the mainnet address", async () => {
    const topics = new Set<string>();
    for (const fill of fills) {
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: fill.txHash });
      for (const log of receipt.logs) if (log.address.toLowerCase() === EXCHANGE) topics.add(log.topics[0]!);
    }
    expect([...topics].sort()).toEqual(
      [
        "0x3ee3de4684413690dee6fff1a0a4f92916a1b97d1c5a83cdf24671844306b2e3", // TakerBid
        "0x9aaa45d6db2ef74ead0751ea9113263d1dec1b50cea05f0ca2002cb8063564a4", // TakerAsk
      ].sort(),
    );
  });
});
