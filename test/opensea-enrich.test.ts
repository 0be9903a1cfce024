/**
 * What OpenSea does not give, from the JSON-RPC node: a real dev chain (anvil) runs the demo's activity (Seaport
 * sales in ETH and in an ERC-20, transfers, mints, burns, and a Chainlink-style ETH/USD feed updated between them);
 * the local OpenSea server reports those transactions as OpenSea would; the OpenSea source fills in each on-chain
 * record's block from the node and each ETH sale's `price_usd` from the feed as it stood in the sale's block.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runNode } from "../src/core/node.js";
import { type ActivityManifest, createActivity } from "../src/demo/activity.js";
import { type Deployed, deployAll } from "../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../src/demo/devchain.js";
import { nftTransactionsByContract } from "../src/nodes/index.js";
import { formatUnits } from "../src/sources/index/decode.js";
import { forgetCollections } from "../src/sources/opensea/source.js";
import { testConfig } from "./helpers.js";
import { rpcCall } from "./index-helpers.js";
import { OPENSEA_KEY, type OpenSeaEvent, type OpenSeaServer, startOpenSea } from "./upstreams/opensea.js";

type Rec = Record<string, any>;

let chain: DevChain;
let deployed: Deployed;
let manifest: ActivityManifest;
let upstream: OpenSeaServer;
const blockHashes = new Map<number, string>();
const ZERO = "0x0000000000000000000000000000000000000000";

/** The demo's ERC-721 records as OpenSea's events, newest first. */
function eventsOf(records: ActivityManifest["records"]): OpenSeaEvent[] {
  return records
    .filter((r) => r.contract === deployed.erc721)
    .map((r, i): OpenSeaEvent => {
      const nft = { identifier: r.tokenId, collection: "demo", contract: r.contract, token_standard: "erc721" };
      const common = { event_timestamp: 1_700_000_000 + i, transaction: r.txHash, chain: "ethereum", quantity: 1 };
      if (r.type === "sale") {
        return {
          ...common,
          event_type: "sale",
          order_hash: `0x${"11".repeat(32)}`,
          protocol_address: deployed.seaport,
          payment: {
            quantity: r.priceRaw,
            token_address: r.currency === "ETH" ? ZERO : r.currency,
            decimals: 18,
            symbol: r.currency === "ETH" ? "ETH" : "WETH",
          },
          closing_date: common.event_timestamp,
          seller: r.seller,
          buyer: r.buyer,
          nft,
        };
      }
      return { ...common, event_type: "transfer", from_address: r.from, to_address: r.to, nft };
    })
    .reverse();
}

beforeAll(async () => {
  chain = await startAnvil();
  deployed = await deployAll(chain.rpcUrl);
  manifest = await createActivity(chain.rpcUrl, deployed);
  for (const r of manifest.records) {
    const block = await rpcCall<{ hash: string }>(chain.rpcUrl, "eth_getBlockByNumber", [
      `0x${r.blockNumber.toString(16)}`,
      false,
    ]);
    blockHashes.set(r.blockNumber, block.hash);
  }
  upstream = await startOpenSea({
    contracts: new Map([[deployed.erc721, { collection: "demo", contract_standard: "erc721", name: "Demo" }]]),
    collections: new Map([["demo", eventsOf(manifest.records)]]),
  });
}, 120_000);
afterAll(async () => {
  await upstream?.close();
  await chain?.stop();
});
beforeEach(() => {
  upstream.clearFaults();
  forgetCollections();
});

const config = (env: Record<string, string> = {}) =>
  testConfig({
    NFT_SOURCE: "opensea",
    OPENSEA_BASE_URL: upstream.url,
    OPENSEA_API_KEY: OPENSEA_KEY,
    INDEX_RPC_URL: chain.rpcUrl,
    ETH_USD_FEED: deployed.priceFeed,
    ...env,
  });

async function all(env: Record<string, string> = {}) {
  const out = await runNode(
    nftTransactionsByContract,
    { query: { contract_address: deployed.erc721, page_size: 200 } },
    { config: config(env) },
  );
  return out as { data?: { transactions: Rec[] }; error?: { error: string; details: Rec } };
}

/** The feed's answer in force at the end of a block (8 decimals), from the manifest's updates. */
function answerAt(block: number): bigint | undefined {
  const before = manifest.priceUpdates.filter((u) => u.blockNumber <= block);
  return before.length ? BigInt(before[before.length - 1]!.answer) : undefined;
}

describe("blocks and USD prices from the JSON-RPC node", () => {
  it("every on-chain record gets its block; ETH sales their price_usd at the feed's answer in their block", async () => {
    const out = await all();
    expect(out.error).toBeUndefined();
    const mine = manifest.records.filter((r) => r.contract === deployed.erc721);
    expect(out.data!.transactions).toHaveLength(mine.length);
    const byHash = new Map<string, ActivityManifest["records"]>();
    for (const r of mine) byHash.set(r.txHash, [...(byHash.get(r.txHash) ?? []), r]);
    let priced = 0;
    for (const record of out.data!.transactions) {
      // A sale's transaction also moves the token: the manifest has both records for it.
      const source = byHash
        .get(record.transaction_hash)!
        .find((r) => (r.type === "sale") === (record.type === "sale"))!;
      expect(record.block_number).toBe(source.blockNumber);
      expect(record.block_hash).toBe(blockHashes.get(source.blockNumber));
      if (record.type !== "sale") continue;
      const sale = source as Extract<ActivityManifest["records"][number], { type: "sale" }>;
      const answer = answerAt(sale.blockNumber);
      if (sale.currency === "ETH" && answer !== undefined) {
        expect(record.price_details.price_usd).toBe(Number(formatUnits(BigInt(sale.priceRaw) * answer, 26)));
        priced++;
      } else {
        // An ERC-20 that is not an ETH token (the demo's stand-in for WETH has another address) has no USD price.
        expect(record.price_details.price_usd).toBeUndefined();
      }
    }
    expect(priced).toBeGreaterThan(0);
  });

  it("without a node configured, blocks and USD prices are left out", async () => {
    const out = await all({ INDEX_RPC_URL: "" });
    for (const record of out.data!.transactions) {
      expect(record.block_number).toBeUndefined();
      expect(record.block_hash).toBeUndefined();
      expect(record.price_details?.price_usd).toBeUndefined();
    }
  });

  it("a transaction the node does not know fails the page, saying so", async () => {
    const unknown = `0x${"77".repeat(32)}`;
    const first = eventsOf(manifest.records).find((e) => e.event_type === "transfer")!;
    upstream.fault({
      after: 1,
      status: 200,
      body: JSON.stringify({ asset_events: [{ ...first, transaction: unknown }] }),
    });
    const out = await all();
    expect(out.error?.details).toMatchObject({ code: "upstream_bad_response", transaction_hash: unknown });
    expect(out.error?.error).toContain("does not know transaction");
  });
});
