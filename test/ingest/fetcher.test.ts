/**
 * The index's calls to the node (src/ingest/fetcher.ts) and its reorganisation handling (reorg.ts) on their
 * own, against a real anvil behind the test's JSON-RPC proxy (test/upstreams/jsonrpc.ts), which refuses log ranges
 * over 3 blocks in Alchemy's words; the reorg checks run over a real SQLite index.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcClient } from "../../src/chain/rpc.js";
import { type Header, LagWait } from "../../src/ingest/completeness.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { Fetcher } from "../../src/ingest/fetcher.js";
import { RangePlanner } from "../../src/ingest/range-planner.js";
import { RangeSizer } from "../../src/ingest/range-sizer.js";
import { Reorgs } from "../../src/ingest/reorg.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { testConfig } from "../support/helpers.js";
import { type Anvil, address, erc721Transfer, installEmitters, SENDER, startAnvil } from "../support/index-helpers.js";
import { type JsonRpcProxy, startJsonRpcProxy } from "../upstreams/jsonrpc.js";

const NFT = address(0x721);
let anvil: Anvil;
let proxy: JsonRpcProxy;
let dir: string;
/** The blocks of the transfers, and the transactions. */
const mined: { block: number; tx: string }[] = [];

beforeAll(async () => {
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  for (let token = 1; token <= 6; token++) {
    const { blockNumber, txHash } = await erc721Transfer(anvil, NFT, address(0), SENDER, token);
    mined.push({ block: blockNumber, tx: txHash });
  }
  proxy = await startJsonRpcProxy(anvil.rpcUrl, { maxBlocks: 3, refusal: "hint" });
  dir = mkdtempSync(join(tmpdir(), "chainmail-fetcher-"));
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await anvil?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function fetcher() {
  const config = testConfig();
  const rpc = new RpcClient(proxy.url, {
    pool: config.pool,
    timeoutMs: config.indexRpc.timeoutMs,
    retry: config.indexRpc.retry,
  });
  return new Fetcher(rpc, { topics: [TOPIC.transfer], addresses: undefined });
}

describe("the fetcher", () => {
  it("reads a range's logs, and reads a range refused with a suggestion as that piece and the rest", async () => {
    const sizer = new RangeSizer(100, 100);
    const f = fetcher();
    const first = mined[0]!.block;
    const answer = await f.logs(first, first + 2);
    if (answer.kind !== "logs") throw new Error(`no answer: ${JSON.stringify(answer)}`);
    const logs = [...answer.slices.slices(100)].flat() as { blockNumber: string }[];
    expect(logs.map((l) => Number(l.blockNumber))).toEqual([first, first + 1, first + 2]);
    // Alchemy's words suggest a range for this request: read as that piece, then the rest; not a cap.
    const refused = await f.logs(first, first + 5);
    expect(refused).toMatchObject({ kind: "refused", blocks: 6, refusal: { suggested: true, blocks: 3 } });
    if (refused.kind !== "refused") throw new Error(`not refused: ${refused.kind}`);
    // The planner, which learns from it, reads that piece and then the rest.
    const plan = new RangePlanner(first, first + 5, 1, sizer, async () => refused);
    plan.fill();
    const slot = plan.take()!;
    await slot.read;
    plan.again(slot, refused);
    expect([plan.take(), plan.take()].map((piece) => [piece?.from, piece?.to])).toEqual([
      [first, first + 2],
      [first + 3, first + 5],
    ]);
    expect(sizer.allows(6)).toBe(true);
  });

  it("reads headers in a batch, leaving out blocks the node does not have, and the head", async () => {
    const f = fetcher();
    const head = await f.head();
    expect(head).toBe(mined.at(-1)!.block);
    const headers = await f.headers([1, 2, head + 5]);
    expect([...headers.keys()]).toEqual([1, 2]);
    expect(headers.get(2)!.parentHash).toBe(headers.get(1)!.hash);
    expect(await f.header(head + 5)).toBeNull();
  });

  it("loads transactions once, and reads no decimals from a contract without them", async () => {
    const f = fetcher();
    const hashes = new Set(mined.slice(0, 2).map((m) => m.tx));
    await f.loadTransactions(hashes);
    const requests = proxy.requests.length;
    await f.loadTransactions(hashes);
    expect(proxy.requests.length).toBe(requests);
    expect(f.transaction(mined[0]!.tx)?.from).toBe(SENDER);
    expect(f.transaction(`0x${"ee".repeat(32)}`)).toBeUndefined();
    expect(await f.readDecimals(address(0xdead))).toBeUndefined();
  });
  it("asks a contract whose decimals() fails in the EVM once: the node's -32603 for it is not worth a retry", async () => {
    // anvil answers the transfer emitter's decimals() with -32603 "EVM error …", the code it shares with transient
    // internal errors; retried, it cost seconds of backoff per token of the run.
    const direct = await fetch(anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_call",
        params: [{ to: NFT, data: "0x313ce567" }, "latest"],
      }),
    });
    expect(((await direct.json()) as { error: { code: number; message: string } }).error).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/EVM error/),
    });
    const f = fetcher();
    const calls = () => proxy.requests.filter((r) => r.methods.includes("eth_call")).length;
    const before = calls();
    expect(await f.readDecimals(NFT)).toBeUndefined();
    expect(calls() - before).toBe(1);
  });
});

describe("reorgs", () => {
  it("rolls a stored tip that left the chain back to the newest block still on it", async () => {
    const f = fetcher();
    const store = await IndexStore.open(join(dir, "tip.sqlite"));
    try {
      const headers = await f.headers([1, 2, 3]);
      await store.setMeta("first_block", "1");
      await store.commitRange({
        records: [],
        blocks: [
          { number: 1, hash: headers.get(1)!.hash },
          { number: 2, hash: headers.get(2)!.hash },
          { number: 3, hash: `0x${"0b".repeat(32)}` },
        ],
        answers: [],
        lastBlock: 3,
      });
      const reorgs = new Reorgs(store, f, new LagWait(f.rpc.origin, 1_000, undefined, undefined), undefined);
      expect(await reorgs.tipReorged()).toBe(true);
      expect(await store.lastBlock()).toBe(2);
      expect(await reorgs.tipReorged()).toBe(false);
      // A range whose first block does not extend the stored block before it: rolled back too.
      const next = headers.get(3)!;
      const forked: Header = { ...next, parentHash: `0x${"0c".repeat(32)}` };
      expect(await reorgs.extendsStored(3, next)).toBe(true);
      expect(await reorgs.extendsStored(3, forked)).toBe(false);
      expect(await store.lastBlock()).toBe(2);
    } finally {
      await store.close();
    }
  });

  it("stops after the chain moved under too many reads in a row, naming the blocks", async () => {
    const f = fetcher();
    const store = await IndexStore.open(join(dir, "moves.sqlite"));
    try {
      const reorgs = new Reorgs(store, f, new LagWait(f.rpc.origin, 1_000, undefined, undefined), undefined);
      for (let i = 0; i < 3; i++) await reorgs.chainMoved(5, 6);
      reorgs.consistent();
      for (let i = 0; i < 10; i++) await reorgs.chainMoved(5, 6);
      await expect(reorgs.chainMoved(5, 6)).rejects.toThrow(/do not match its block hashes \(blocks 5-6\)/);
    } finally {
      await store.close();
    }
  }, 30_000);
});
