/**
 * One range read on its own (src/ingest/range-reader.ts), against a real anvil behind the test's JSON-RPC
 * proxy (test/upstreams/jsonrpc.ts; log ranges over 3 blocks refused in Alchemy's words): each thing a read can
 * come to is one fact (range-facts.ts), and the reader sizes nothing (the sizer it is given is left as it was).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../src/chain/rpc.js";
import { type Header, Watch } from "../../src/ingest/completeness.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { Fetcher } from "../../src/ingest/fetcher.js";
import { LogDecoder } from "../../src/ingest/log-decoder.js";
import { RangeReader } from "../../src/ingest/range-reader.js";
import { RangeSizer } from "../../src/ingest/range-sizer.js";
import { MAINNET_SEAPORTS, venueTable } from "../../src/ingest/venues/index.js";
import { testConfig } from "../support/helpers.js";
import { type Anvil, address, erc721Transfer, installEmitters, SENDER, startAnvil } from "../support/index-helpers.js";
import { type JsonRpcProxy, type RpcMessage, startJsonRpcProxy } from "../upstreams/jsonrpc.js";

const NFT = address(0x721);
const TOPICS = [TOPIC.transfer];
let anvil: Anvil;
let proxy: JsonRpcProxy;
/** The blocks of the three transfers (one each), and their headers as anvil has them. */
const blocks: number[] = [];
const headers = new Map<number, Header>();
/** What the proxy answers for a header instead of anvil's: a header, or null; undefined leaves it to anvil. */
let tamper: ((block: number, header: Header) => Header | null | undefined) | undefined;

beforeAll(async () => {
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  for (let token = 1; token <= 3; token++) {
    blocks.push((await erc721Transfer(anvil, NFT, address(0), SENDER, token)).blockNumber);
  }
  for (let n = blocks[0]!; n <= blocks.at(-1)!; n++) {
    headers.set(n, await anvil.rpc<Header>("eth_getBlockByNumber", [`0x${n.toString(16)}`, false]));
  }
  proxy = await startJsonRpcProxy(anvil.rpcUrl, { maxBlocks: 3, refusal: "hint", intercept: tampered });
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
});

/** A batch of headers answered as `tamper` says, where it says anything. */
function tampered(calls: RpcMessage[]) {
  if (!tamper || !calls.every((c) => c.method === "eth_getBlockByNumber")) return undefined;
  const replies = calls.map((call) => {
    const block = Number(call.params[0]);
    const real = headers.get(block) ?? null;
    const result = real && tamper!(block, real);
    return { jsonrpc: "2.0", id: call.id, result: result === undefined ? real : result };
  });
  return { status: 200, body: JSON.stringify(replies) };
}

/** A reader as the indexer builds one, over the whole chain's transfers; `sizer`: what it is given to read. */
function reader(sizer = new RangeSizer(100, 100)) {
  const config = testConfig();
  const rpc = new RpcClient(proxy.url, {
    pool: config.pool,
    timeoutMs: config.indexRpc.timeoutMs,
    retry: config.indexRpc.retry,
  });
  const fetcher = new Fetcher(rpc, { topics: TOPICS, addresses: undefined });
  const decoder = new LogDecoder({
    venues: venueTable(MAINNET_SEAPORTS),
    contracts: undefined,
    feed: undefined,
    loadTransactions: async () => {},
    transaction: () => undefined,
    priceOf: () => Promise.reject(new Error("no sale is read here")),
  });
  const watch = new Watch(TOPICS, undefined);
  return new RangeReader(fetcher, decoder, watch, sizer, () => true);
}

/** Methods the proxy was asked for since `before` requests. */
const askedSince = (before: number) => proxy.requests.slice(before).flatMap((r) => r.methods);

describe("the range reader", () => {
  it("reads deep history as its records, stamped with the logs' block times, reading no header; the density seen", async () => {
    tamper = undefined;
    const sizer = new RangeSizer(100, 100);
    const [from, to] = [blocks[0]!, blocks[2]!];
    const before = proxy.requests.length;
    // Far below the head: no block is checked one by one, and anvil's logs carry `blockTimestamp`.
    const fact = await reader(sizer).read(from, to, to + 1_000);
    if (fact.kind !== "read") throw new Error(`not read: ${fact.kind}`);
    expect(fact.range.records.map((r) => [r.block_number, r.token_id])).toEqual(blocks.map((b, i) => [b, `${i + 1}`]));
    for (const record of fact.range.records) {
      expect(record.timestamp).toBe(Number(headers.get(record.block_number)!.timestamp));
    }
    expect(fact.seen).toEqual({ blocks: to - from + 1, logs: 3 });
    expect(askedSince(before)).toEqual(["eth_getLogs"]);
    // The reader told; it changed nothing of the sizer.
    expect([sizer.size, sizer.density, sizer.probing]).toEqual([100, 0, false]);
  });

  it("reports a range the provider refused, with its words, for the planner to act on", async () => {
    tamper = undefined;
    const sizer = new RangeSizer(100, 100);
    const fact = await reader(sizer).read(blocks[0]!, blocks[0]! + 5, blocks[0]! + 1_000);
    expect(fact).toMatchObject({ kind: "refused", blocks: 6, refusal: { suggested: true, blocks: 3 } });
    expect(sizer.allows(6)).toBe(true);
    expect(sizer.size).toBe(100);
  });

  it("reports a block near the head whose header the node does not have yet", async () => {
    tamper = (block) => (block === blocks[1] ? null : undefined);
    const fact = await reader().read(blocks[0]!, blocks[2]!, blocks[2]!);
    expect(fact).toMatchObject({ kind: "not yet", block: blocks[1], said: "it answered null for the block's header" });
    // Its end block's header, read first where the range is planned sparse, is not there yet either.
    tamper = (block) => (block === blocks[2] ? null : undefined);
    const before = proxy.requests.length;
    const end = await reader().read(blocks[0]!, blocks[2]!, blocks[2]!, true);
    expect(end).toEqual({ kind: "not yet", block: blocks[2], said: "it answered null for the block's header" });
    expect(askedSince(before)).not.toContain("eth_getLogs");
  });

  it("reports a chain that moved under the read: logs of a block its header names otherwise", async () => {
    tamper = (block, header) => (block === blocks[2] ? { ...header, hash: `0x${"0d".repeat(32)}` } : undefined);
    const fact = await reader().read(blocks[0]!, blocks[2]!, blocks[2]!);
    expect(fact).toEqual({ kind: "moved", seen: { blocks: blocks[2]! - blocks[0]! + 1, logs: 3 } });
  });

  it("reports a range planned sparse whose end block's bloom is full, without asking for its logs", async () => {
    tamper = (block, header) => (block === blocks[2] ? { ...header, logsBloom: `0x${"f".repeat(512)}` } : undefined);
    const before = proxy.requests.length;
    expect(await reader().read(blocks[0]!, blocks[2]!, blocks[2]!, true)).toEqual({ kind: "dense end" });
    expect(askedSince(before)).not.toContain("eth_getLogs");
    // Planned dense, the same range is read.
    expect((await reader().read(blocks[0]!, blocks[2]!, blocks[2]!, false)).kind).toBe("read");
  });
});
