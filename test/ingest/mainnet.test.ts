/**
 * Real mainnet sales (test/fixtures/index-mainnet, sources in its SOURCES file) replayed through `chainmail index`
 * from a local JSON-RPC node that serves exactly their logs, blocks and transactions; every field of every sale
 * record is compared with the values the fixture's source (or, where it says so, a hand reading) gives.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatUnits, TOPIC } from "../../src/ingest/decode.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { runCli, warningsOf } from "../support/helpers.js";
import { type IndexBackend, openBackend, recordsInIndex } from "../support/index-backend.js";
import { loadFixtures, type MainnetFixture, type MainnetNode, startMainnetNode } from "../upstreams/mainnet-logs.js";

const fixtures = loadFixtures();
let node: MainnetNode;
let backend: IndexBackend;
let db: string;
let summary: { last_block: number; records: number; unknown_logs: number };

beforeAll(async () => {
  backend = await openBackend("mainnet");
  db = await backend.target("mainnet");
  node = await startMainnetNode(fixtures);
  const first = Math.min(...fixtures.map((f) => Number(node.blockOf(f).number)));
  const out = await runCli(["index", "--rpc", node.url, "--db", db, "--from-block", String(first), "--once"], {
    env: { INDEX_RPC_MAX_RETRIES: "0" },
  });
  expect(warningsOf(out.stderr)).toBe("");
  expect(out.code).toBe(0);
  summary = JSON.parse(out.stdout);
  // PostgreSQL's run (test/services) takes 4x SQLite's on this 2-core machine: about a minute when loaded.
}, 180_000);

afterAll(async () => {
  closeIndexSources();
  await node?.close();
  await backend?.close();
});

const onChain = (types: string[]) => recordsInIndex(db, types);

/** The sale records a fixture's source says its transaction holds, in NFTPort's shape. */
function expectedSales(f: MainnetFixture): TransactionRecord[] {
  const block = node.blockOf(f);
  return f.expected.map(
    (e) =>
      ({
        type: "sale",
        buyer_address: e.buyer,
        seller_address: e.seller,
        nft: {
          ...(e.contract_type ? { contract_type: e.contract_type } : {}),
          contract_address: e.contract,
          token_id: e.token_id,
        },
        quantity: Number(e.quantity),
        price_details: {
          asset_type: e.currency ? "ERC20" : "ETH",
          ...(e.currency ? { contract_address: e.currency } : {}),
          ...(e.price_wei === null ? {} : { price: Number(formatUnits(BigInt(e.price_wei), 18)) }),
          price_usd: null,
        },
        transaction_hash: f.logs[0]!.transactionHash,
        block_hash: block.hash,
        block_number: Number(block.number),
        transaction_date: new Date(Number(block.timestamp) * 1000).toISOString().slice(0, 19),
        marketplace: e.marketplace,
      }) as TransactionRecord,
  );
}

describe("real mainnet sales through chainmail index", () => {
  it("decode every sale of every fixture exactly, in chain order", async () => {
    const expected = fixtures
      .flatMap((f) =>
        expectedSales(f).map((record, i) => ({
          record,
          key: [Number(node.blockOf(f).number), f.expected[i]!.log_index],
        })),
      )
      .sort((a, b) => a.key[0]! - b.key[0]! || a.key[1]! - b.key[1]!)
      .map((e) => e.record);
    expect(expected.length).toBe(52);
    expect(await onChain(["sale"])).toEqual(expected);
  });

  it("keep the NFTs' own transfers beside the sales, and understand every exchange log", async () => {
    // ERC-721 Transfer (the token id is topic 3) and ERC-1155 TransferSingle (the id is the first data word).
    const tokenIdOf = (log: MainnetFixture["logs"][number]) =>
      log.topics[0] === TOPIC.transfer ? BigInt(log.topics[3]!) : BigInt(log.data.slice(0, 66));
    const nftTransfers = fixtures
      .flatMap((f) =>
        f.logs
          .filter(
            (log) =>
              (log.topics[0] === TOPIC.transfer || log.topics[0] === TOPIC.transferSingle) && log.topics.length === 4,
          )
          .map((log) => ({ log, block: Number(node.blockOf(f).number) })),
      )
      .sort((a, b) => a.block - b.block || Number(a.log.logIndex) - Number(b.log.logIndex))
      .map((e) => e.log);
    const transfers = await onChain(["transfer", "mint", "burn"]);
    expect(transfers.map((t) => [t.transaction_hash, (t as { token_id: string }).token_id])).toEqual(
      nftTransfers.map((log) => [log.transactionHash, tokenIdOf(log).toString()]),
    );
    const sales = fixtures.reduce((n, f) => n + f.expected.length, 0);
    const bundles = fixtures.reduce((n, f) => n + (f.unknown_logs ?? 0), 0);
    expect(bundles).toBe(3);
    expect(summary).toMatchObject({ records: sales + nftTransfers.length, unknown_logs: bundles });
  });

  it("look up each Blur v2 transaction's sender once", () => {
    const blurV2 = new Set(fixtures.filter((f) => f.venue === "blur-v2").map((f) => f.logs[0]!.transactionHash));
    expect(node.calls.get("eth_getTransactionByHash")).toBe(blurV2.size);
  });
});

describe("a sale in a transaction with more logs than the decoding keeps while reading", () => {
  it("is decoded all the same: the transaction's logs are read again from the answer", async () => {
    // A real Wyvern sale (its decoder reads the payment from the transaction's other logs), followed in the same
    // transaction by 2,500 ERC-20 transfers of another token: more than the logs kept per transaction.
    const [real] = loadFixtures().filter((f) => f.file === "wyvern-0x0003e5c7.json");
    const last = Number(real!.logs[real!.logs.length - 1]!.logIndex);
    const padding = Array.from({ length: 2_500 }, (_, i) => ({
      address: `0x${"e2".repeat(20)}`,
      topics: [TOPIC.transfer, `0x${"0".repeat(24)}${"11".repeat(20)}`, `0x${"0".repeat(24)}${"22".repeat(20)}`],
      data: `0x${(i + 1).toString(16).padStart(64, "0")}`,
      transactionHash: real!.logs[0]!.transactionHash,
      logIndex: `0x${(last + 1 + i).toString(16)}`,
    }));
    const long = { ...real!, logs: [...real!.logs, ...padding] };
    const longNode = await startMainnetNode([long]);
    const longBackend = await openBackend("mainnet-long");
    try {
      const target = await longBackend.target("long");
      const result = await indexChain({
        rpcUrl: longNode.url,
        dbPath: target,
        fromBlock: Number(longNode.blockOf(long).number),
        follow: false,
      });
      expect(result.unknownLogs).toBe(0);
      const [sale] = await recordsInIndex(target, ["sale"]);
      const [expected] = long.expected;
      expect(sale).toMatchObject({
        seller_address: expected!.seller,
        buyer_address: expected!.buyer,
        nft: { contract_address: expected!.contract, token_id: expected!.token_id },
        price_details: { asset_type: "ERC20", contract_address: expected!.currency },
        marketplace: expected!.marketplace,
      });
      expect((sale as { price_details: { price: number } }).price_details.price).toBe(
        Number(formatUnits(BigInt(expected!.price_wei!), 18)),
      );
    } finally {
      await longNode.close();
      await longBackend.close();
    }
  });
});
