/**
 * The index against the demo chain: real Seaport 1.6, OpenZeppelin ERC-721/1155, an ERC-20 standing in for WETH
 * and a Chainlink-style feed (src/demo). Every record of the activity manifest must come out of the three nodes,
 * exactly once, with the manifest's values.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { type AnyNode, runNode } from "../../src/core/node.js";
import { type ActivityManifest, createActivity } from "../../src/demo/activity.js";
import { type Deployed, deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";

let chain: DevChain;
let deployed: Deployed;
let manifest: ActivityManifest;
let backend: IndexBackend;
let config: ReturnType<typeof loadConfig>;

beforeAll(async () => {
  backend = await openBackend("demo-index");
  chain = await startAnvil();
  deployed = await deployAll(chain.rpcUrl);
  manifest = await createActivity(chain.rpcUrl, deployed);
  const db = await backend.target("index");
  await indexChain({
    rpcUrl: chain.rpcUrl,
    dbPath: db,
    follow: false,
    seaport: [deployed.seaport],
    ethTokens: [deployed.weth],
    priceFeed: deployed.priceFeed,
  });
  config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: db });
}, 120_000);

afterAll(async () => {
  await closeIndexSources();
  await chain?.stop();
  await backend?.close();
});

const exact = (n: string) => (Number.isSafeInteger(Number(n)) ? Number(n) : BigInt(n));

/** The ETH/USD answer in force at a chain position, from the manifest's feed updates. */
function usdAt(block: number, log: number): number | undefined {
  const before = manifest.priceUpdates.filter(
    (u) => u.blockNumber < block || (u.blockNumber === block && u.logIndex < log),
  );
  const last = before[before.length - 1];
  return last ? Number(last.answer) / 1e8 : undefined;
}

/** What the index must answer for one manifest record, in NFTPort's shape. */
function expectedRecord(r: ActivityManifest["records"][number]) {
  const onChain = { transaction_hash: r.txHash, block_number: r.blockNumber };
  if (r.type === "sale") {
    const rate = usdAt(r.blockNumber, r.logIndex);
    const pricedAsEth = r.currency === "ETH" || r.currency === deployed.weth;
    return {
      type: "sale",
      buyer_address: r.buyer,
      seller_address: r.seller,
      nft: { contract_type: r.contractType, contract_address: r.contract, token_id: r.tokenId },
      quantity: exact(r.quantity),
      price_details: {
        asset_type: r.currency === "ETH" ? "ETH" : "ERC20",
        ...(r.currency === "ETH" ? {} : { contract_address: r.currency }),
        price: Number(r.price),
        price_usd: pricedAsEth && rate !== undefined ? expect.closeTo(Number(r.price) * rate, 6) : null,
      },
      ...onChain,
      marketplace: "seaport",
    };
  }
  const parties =
    r.type === "mint"
      ? { owner_address: r.to }
      : r.type === "burn"
        ? { owner_address: r.from }
        : { transfer_from: r.from, transfer_to: r.to };
  return {
    type: r.type,
    ...parties,
    contract_address: r.contract,
    token_id: r.tokenId,
    quantity: exact(r.quantity),
    ...onChain,
  };
}

async function all(node: AnyNode, query: Record<string, unknown>): Promise<TransactionRecord[]> {
  const out: TransactionRecord[] = [];
  let continuation = "";
  do {
    const result = await runNode(
      node,
      { query: { ...query, page_size: 7, ...(continuation ? { continuation } : {}) }, params: {} },
      { config },
    );
    expect(result.error).toBeUndefined();
    out.push(...result.data!.transactions);
    continuation = result.data!.continuation;
  } while (continuation);
  return out;
}

describe("the index of the demo chain", () => {
  it("holds every manifest record exactly once, in chain order, with the manifest's values", async () => {
    expect(manifest.records.length).toBeGreaterThan(20);
    expect(new Set(manifest.records.map((r) => r.type))).toEqual(new Set(["mint", "transfer", "burn", "sale"]));
    const records = await all(nftTransactionsOnChain, {});
    expect(records).toEqual(manifest.records.map((r) => expect.objectContaining(expectedRecord(r))));
  });

  it("answers by contract and by token newest first", async () => {
    const ofContract = manifest.records.filter((r) => r.contract === deployed.erc1155).reverse();
    expect(await all(nftTransactionsByContract, { contract_address: deployed.erc1155 })).toEqual(
      ofContract.map((r) => expect.objectContaining(expectedRecord(r))),
    );
    const sale = manifest.records.find((r) => r.type === "sale" && r.contract === deployed.erc721)!;
    const ofToken = manifest.records
      .filter((r) => r.contract === sale.contract && r.tokenId === sale.tokenId)
      .reverse();
    expect(ofToken.length).toBeGreaterThan(1);
    expect(
      await all(nftTransactionsByToken, {
        contract_address: sale.contract,
        token_id: sale.tokenId,
      }),
    ).toEqual(ofToken.map((r) => expect.objectContaining(expectedRecord(r))));
  });
});
