/**
 * Token details from a real anvil (src/enrichment/chain-reads.ts, enrich.ts): contracts answering fixed ABI values
 * (hand-assembled, installed with anvil_setCode) stand for an ERC-721 with `tokenURI`, an ERC-1155 with `uri` and
 * `{id}`, an on-chain `data:` token, a contract without either, the ENS registry and a resolver; the demo's ETH/USD
 * feed (deployed) answers differently at two blocks; the metadata comes from a server of our own on loopback. What fails or runs
 * late leaves its value empty and never holds the caller past its budget; the store keeps what was found.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../src/chain/index.js";
import { loadConfig } from "../../src/core/config.js";
import { type Address, artifacts, call, connect, deploy } from "../../src/demo/contracts.js";
import { memoryCache } from "../../src/enrichment/cache.js";
import { ENS_REGISTRY, ensNameOf, namehash } from "../../src/enrichment/chain-reads.js";
import { Enricher, type EnrichmentSettings, enrichmentSettings } from "../../src/enrichment/enrich.js";
import { guardedGet } from "../../src/enrichment/metadata-fetch.js";
import { openStoreCache } from "../../src/enrichment/store-cache.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { activityDetails, detailsCache } from "../../src/workflow/index.js";
import {
  abiAddressAnswer,
  abiStringAnswer,
  fixedAnswers,
  type MetadataServer,
  SELECTORS,
  startMetadataServer,
} from "../support/enrichment-helpers.js";
import { type Anvil, address, startAnvil } from "../support/index-helpers.js";

const CATS = address(0xca75); // ERC-721, tokenURI to the server
const ITEMS = address(0x1155); // ERC-1155, uri with {id}
const ONCHAIN = address(0xda7a); // tokenURI as a data: URI
const BARE = address(0xba2e); // name() only
const SLOW = address(0x5105); // tokenURI to a server that never answers
const RESOLVER = address(0xe25);
const ALICE = "0x00000000000000000000000000000000000a11ce";
const BOB = "0x0000000000000000000000000000000000000b0b";

let anvil: Anvil;
let server: MetadataServer;
let settings: EnrichmentSettings;
let blocks: { low: number; high: number };
let FEED: string;

const setCode = (at: string, answers: Record<string, string>) =>
  anvil.rpc("anvil_setCode", [at, fixedAnswers(answers)]);
const head = async () => Number(await anvil.rpc<string>("eth_blockNumber"));

beforeAll(async () => {
  anvil = await startAnvil();
  server = await startMetadataServer();
  const doc = Buffer.from(JSON.stringify({ name: "On-chain #1", image: "https://img.example/1.svg" }));
  await setCode(CATS, {
    [SELECTORS.tokenURI]: abiStringAnswer(`${server.url}/token/5.json`),
    [SELECTORS.name]: abiStringAnswer("Loopback Cats"),
  });
  await setCode(ITEMS, {
    [SELECTORS.uri]: abiStringAnswer(`${server.url}/token/{id}.json`),
    [SELECTORS.name]: abiStringAnswer("Loopback Items"),
  });
  await setCode(ONCHAIN, {
    [SELECTORS.tokenURI]: abiStringAnswer(`data:application/json;base64,${doc.toString("base64")}`),
  });
  await setCode(BARE, { [SELECTORS.name]: abiStringAnswer("Bare\u202E Collection") });
  await setCode(SLOW, { [SELECTORS.tokenURI]: abiStringAnswer(`${server.url}/silent.json`) });
  // ENS: every node's resolver is RESOLVER, whose reverse name is alice.eth and whose alice.eth is ALICE: Bob's
  // reverse record claims alice.eth too, and the forward check refuses it.
  await setCode(ENS_REGISTRY, { [SELECTORS.resolver]: abiAddressAnswer(RESOLVER) });
  await setCode(RESOLVER, {
    [SELECTORS.ensName]: abiStringAnswer("Alice.eth"),
    [SELECTORS.addr]: abiAddressAnswer(ALICE),
  });
  // The demo's ETH/USD feed (a real contract): 2000 at one block, 3000 at a later one.
  const chain = await connect(anvil.rpcUrl);
  const owner = chain.accounts[0]!;
  FEED = await deploy(chain, owner, "PriceFeed", artifacts.priceFeed);
  await call(chain, owner, FEED as Address, artifacts.priceFeed, "updateAnswer", [2000n * 10n ** 8n]);
  const low = await head();
  await call(chain, owner, FEED as Address, artifacts.priceFeed, "updateAnswer", [3000n * 10n ** 8n]);
  blocks = { low, high: await head() };
  const config = loadConfig({
    INDEX_RPC_URL: anvil.rpcUrl,
    ETH_USD_FEED: FEED,
    CHAINMAIL_IPFS_GATEWAY: "https://gateway.example/ipfs/",
    CHAINMAIL_METADATA_TIMEOUT_MS: "3000",
  });
  settings = { ...enrichmentSettings(config, guardedGet)!, allowPrivate: new Set(["127.0.0.1"]) };
});

afterAll(async () => {
  await server?.close();
  await anvil?.stop();
});

/** A transfer: no contract type (transfers carry none), so tokenURI is asked first, then uri. */
const transfer = (contract: string, tokenId: string, from = ALICE, to = BOB) =>
  ({
    type: "transfer",
    contract_address: contract,
    token_id: tokenId,
    transfer_from: from,
    transfer_to: to,
    transaction_date: "2026-11-28T00:00:00",
  }) as unknown as TransactionRecord;

const sale = (block: number, price: number, usd?: number) =>
  ({
    type: "sale",
    nft: { contract_address: CATS, token_id: "5", contract_type: "ERC721" },
    seller_address: BOB,
    buyer_address: ALICE,
    price_details: { asset_type: "ETH", price, ...(usd === undefined ? {} : { price_usd: usd }) },
    block_number: block,
    transaction_date: "2026-11-28T00:00:00",
  }) as unknown as TransactionRecord;

describe("token details from the node and the token's metadata", () => {
  it("names and pictures ERC-721 and ERC-1155 tokens, on-chain ones too; ENS names only when checked forward", async () => {
    const enricher = new Enricher(settings, memoryCache(60_000));
    const [cat, item, onchain, bare] = await enricher.detailsOf([
      transfer(CATS, "5"),
      transfer(ITEMS, "10"),
      transfer(ONCHAIN, "1"),
      transfer(BARE, "3"),
    ]);
    expect(cat).toEqual({
      token_name: "Loopback Cat #5",
      token_image: "https://gateway.example/ipfs/bafy5/image.png",
      collection_name: "Loopback Cats",
      from_name: "alice.eth",
    });
    // EIP-1155's {id}: the id as 64 lower-case hex digits.
    expect(item?.token_name).toBe(`Loopback Cat #${"a".padStart(64, "0")}`);
    expect(item?.collection_name).toBe("Loopback Items");
    expect(onchain).toMatchObject({ token_name: "On-chain #1", token_image: "https://img.example/1.svg" });
    expect(onchain?.collection_name).toBeUndefined();
    expect(bare).toEqual({ collection_name: "Bare Collection", from_name: "alice.eth" });
    expect(server.asked).toContain(`/token/${"a".padStart(64, "0")}.json`);
    // A record that says ERC-1155 is asked uri() alone.
    const [listed] = await enricher.detailsOf([
      {
        type: "list",
        nft: { contract_address: ITEMS, token_id: "11", contract_type: "ERC1155" },
        lister_address: BOB,
        transaction_date: "2026-11-28T00:00:00",
      } as unknown as TransactionRecord,
    ]);
    expect(listed?.token_name).toBe(`Loopback Cat #${"b".padStart(64, "0")}`);
  });

  it("reads an ENS name forward: a reverse record claiming someone else's name is not shown", async () => {
    const rpc = new RpcClient(anvil.rpcUrl, { pool: loadConfig({}).pool, timeoutMs: 5_000, retry: settings.rpc.retry });
    expect(await ensNameOf(rpc, ALICE)).toBe("alice.eth");
    expect(await ensNameOf(rpc, BOB)).toBeUndefined();
    // The namehash of EIP-137's example.
    expect(namehash("foo.eth").toString("hex")).toBe(
      "de9b09fd7c5f901e23a3f19fecc54828e9c848539801e86591bd9801b019f84f",
    );
  });

  it("values a sale without a USD price at its own block's feed answer, and leaves a priced one as it is", async () => {
    const enricher = new Enricher(settings, memoryCache(60_000));
    const [low, high, priced] = await enricher.detailsOf([
      sale(blocks.low, 1.5),
      sale(blocks.high, 1.5),
      sale(blocks.high, 1.5, 1234.5),
    ]);
    expect(low?.price_usd).toBe("3000");
    expect(high?.price_usd).toBe("4500");
    expect(priced?.price_usd).toBeUndefined();
    expect(low?.to_name).toBe("alice.eth");
  });

  it("never holds the caller past its budget: a silent metadata host leaves only its values empty", async () => {
    const enricher = new Enricher({ ...settings, budgetMs: 700, metadataTimeoutMs: 5_000 }, memoryCache(60_000));
    const started = Date.now();
    const [slow] = await enricher.detailsOf([transfer(SLOW, "1")]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(slow?.token_name).toBeUndefined();
    expect(slow?.from_name).toBe("alice.eth");
  });

  it("leaves every value empty, at once, when the node is down", async () => {
    const down = { ...settings, rpc: { ...settings.rpc, url: "http://127.0.0.1:9/" } };
    const started = Date.now();
    const details = await new Enricher(down, memoryCache(60_000)).detailsOf([transfer(CATS, "5")]);
    expect(details).toEqual([{}]);
    expect(Date.now() - started).toBeLessThan(settings.budgetMs + 1_000);
  });

  it("a workflow host's activity node: details through its pool, beside the records, which stay as they were", async () => {
    const config = loadConfig({
      INDEX_RPC_URL: anvil.rpcUrl,
      ETH_USD_FEED: FEED,
      CHAINMAIL_FETCH_PRIVATE: "true",
      CHAINMAIL_IPFS_GATEWAY: "https://gateway.example/ipfs/",
    });
    const records = [transfer(CATS, "5"), sale(blocks.high, 2)];
    const before = structuredClone(records);
    const details = await activityDetails(config, detailsCache(config))!(records);
    expect(details[0]).toMatchObject({ token_name: "Loopback Cat #5", collection_name: "Loopback Cats" });
    expect(details[1]).toMatchObject({ price_usd: "6000", to_name: "alice.eth" });
    expect(records).toEqual(before);
    // Off without a node, or when turned off.
    expect(activityDetails(loadConfig({}), detailsCache(config))).toBeUndefined();
    const off = loadConfig({ INDEX_RPC_URL: anvil.rpcUrl, CHAINMAIL_ENRICH: "false" });
    expect(activityDetails(off, detailsCache(off))).toBeUndefined();
  });

  it("keeps what it found in the store for the cache's time, and asks nothing again", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "chainmail-enrich-")), "watch.sqlite");
    const first = await openStoreCache(file, 60_000);
    const cat = [transfer(CATS, "5")];
    const found = await new Enricher(settings, first).detailsOf(cat);
    await first.close();
    const asked = server.asked.length;
    const again = await openStoreCache(file, 60_000);
    const offline = { ...settings, rpc: { ...settings.rpc, url: "http://127.0.0.1:9/" } };
    expect(await new Enricher(offline, again).detailsOf(cat)).toEqual(found);
    expect(server.asked.length).toBe(asked);
    await again.close();
    // Past its time an entry is not used.
    const expired = await openStoreCache(file, 0);
    expect(await new Enricher(offline, expired).detailsOf(cat)).toEqual([{}]);
    await expired.close();
  });
});
