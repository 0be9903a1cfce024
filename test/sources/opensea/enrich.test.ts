/**
 * What OpenSea does not give, from the JSON-RPC node: a real dev chain (anvil) runs the demo's activity (Seaport
 * sales in ETH and in an ERC-20, transfers, mints, burns, and a Chainlink-style ETH/USD feed updated between them);
 * the local OpenSea server reports those transactions as OpenSea would; the OpenSea source fills in each on-chain
 * record's block from the node and each ETH sale's `price_usd` from the feed as it stood in the sale's block.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringifyJson } from "../../../src/core/json.js";
import { runNode } from "../../../src/core/node.js";
import { type ActivityManifest, createActivity } from "../../../src/demo/activity.js";
import { type Deployed, deployAll } from "../../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../../src/demo/devchain.js";
import { formatUnits } from "../../../src/ingest/decode.js";
import { nftTransactionsByContract, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { forgetCollections } from "../../../src/sources/opensea/source.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { rpcCall } from "../../support/index-helpers.js";
import { type JsonRpcProxy, type RpcMessage, startJsonRpcProxy } from "../../upstreams/jsonrpc.js";
import { OPENSEA_KEY, type OpenSeaEvent, type OpenSeaServer, startOpenSea } from "../../upstreams/opensea.js";

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

  it("a transaction the node does not know leaves that record's block out; the page and the others keep theirs", async () => {
    const unknown = `0x${"77".repeat(32)}`;
    const events = eventsOf(manifest.records);
    const first = events.find((e) => e.event_type === "transfer")!;
    const other = events.find((e) => e.event_type === "transfer" && e.transaction !== first.transaction)!;
    upstream.fault({
      after: 1,
      status: 200,
      body: stringifyJson({ asset_events: [{ ...first, transaction: unknown }, other] }),
    });
    const out = await all();
    expect(out.error).toBeUndefined();
    const [lost, kept] = out.data!.transactions;
    expect(lost).toMatchObject({ transaction_hash: unknown });
    expect(lost!.block_number).toBeUndefined();
    expect(lost!.block_hash).toBeUndefined();
    expect(kept!.block_number).toBeTypeOf("number");
  });
});

describe("a node that fails what is asked only to enrich: the fields are left out, the page stands", () => {
  const DECIMALS = "0x313ce567";
  /** A JSON-RPC error for each call `fails` picks (the others forwarded to the dev chain). */
  async function failing(fails: (call: RpcMessage) => boolean): Promise<JsonRpcProxy> {
    const proxy: JsonRpcProxy = await startJsonRpcProxy(chain.rpcUrl, {
      intercept: (calls) => {
        if (!calls.some(fails)) return undefined;
        const replies = calls.map((c) =>
          fails(c)
            ? { jsonrpc: "2.0", id: c.id, error: { code: 3, message: "execution reverted", data: "0x" } }
            : undefined,
        );
        if (replies.some((r) => r === undefined)) return undefined;
        return { status: 200, body: JSON.stringify(calls.length === 1 ? replies[0] : replies) };
      },
    });
    proxies.push(proxy);
    return proxy;
  }
  const proxies: JsonRpcProxy[] = [];
  afterAll(() => Promise.all(proxies.map((p) => p.close())));

  async function sales(rpcUrl: string) {
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { type: ["sale"], page_size: 200 } },
      { config: config({ INDEX_RPC_URL: rpcUrl }) },
    );
    return out as { data?: { transactions: Rec[] }; error?: { error: string; details: Rec } };
  }

  it("the feed's decimals() answers execution reverted: sales come with their blocks and without price_usd", async () => {
    const proxy = await failing((c) => c.method === "eth_call" && (c.params[0] as { data?: string }).data === DECIMALS);
    const out = await sales(proxy.url);
    expect(out.error).toBeUndefined();
    const transactions = out.data!.transactions;
    expect(transactions.length).toBeGreaterThan(0);
    for (const sale of transactions) {
      expect(sale.type).toBe("sale");
      expect(sale.block_number).toBeTypeOf("number");
      expect(sale.price_details.price_usd).toBeUndefined();
    }
  });

  it("run nft-transactions-on-chain (sales) on the command line: exit 0, the page printed", async () => {
    const proxy = await failing((c) => c.method === "eth_call" && (c.params[0] as { data?: string }).data === DECIMALS);
    const cli = await runCli(
      ["run", "nft-transactions-on-chain", "--input", '{"query":{"type":["sale"],"page_size":200}}'],
      {
        env: {
          NFT_SOURCE: "opensea",
          OPENSEA_BASE_URL: upstream.url,
          OPENSEA_API_KEY: OPENSEA_KEY,
          INDEX_RPC_URL: proxy.url,
          ETH_USD_FEED: deployed.priceFeed,
        },
      },
    );
    expect(cli.stdout).not.toContain('"internal"');
    expect(cli.code).toBe(0);
    expect((JSON.parse(cli.stdout) as { data: { transactions: Rec[] } }).data.transactions.length).toBeGreaterThan(0);
  });

  it("every feed call reverts: no price_usd, blocks kept", async () => {
    const proxy = await failing((c) => c.method === "eth_call");
    const out = await sales(proxy.url);
    expect(out.error).toBeUndefined();
    for (const sale of out.data!.transactions) {
      expect(sale.block_number).toBeTypeOf("number");
      expect(sale.price_details.price_usd).toBeUndefined();
    }
  });

  it("eth_getTransactionByHash answers an error: no blocks, no price_usd, the records as OpenSea gave them", async () => {
    const proxy = await failing((c) => c.method === "eth_getTransactionByHash");
    const out = await sales(proxy.url);
    expect(out.error).toBeUndefined();
    expect(out.data!.transactions.length).toBeGreaterThan(0);
    for (const sale of out.data!.transactions) {
      expect(sale.block_number).toBeUndefined();
      expect(sale.price_details.price_usd).toBeUndefined();
    }
  });

  it("a node that cannot be reached at all: the page stands, without blocks", async () => {
    const proxy = await startJsonRpcProxy(chain.rpcUrl);
    await proxy.close();
    const out = await sales(proxy.url);
    expect(out.error).toBeUndefined();
    for (const sale of out.data!.transactions) expect(sale.block_number).toBeUndefined();
  });
});
