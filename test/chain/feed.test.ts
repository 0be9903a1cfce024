/**
 * ETH/USD feed reads (src/chain/feed.ts) on their own, against a loopback node whose `eth_call` answers the test
 * writes (test/upstreams/scripted-rpc.ts): `decimals()` asked once per node and feed and only a sane answer taken, a
 * failure not remembered; `latestRoundData()` asked at the block given, its answer taken only when a positive int256.
 */
import { afterEach, describe, expect, it } from "vitest";
import { feedAnswerAt, feedDecimalsOf } from "../../src/chain/feed.js";
import { RpcClient } from "../../src/chain/rpc.js";
import { testConfig } from "../support/helpers.js";
import {
  answerEach,
  failed,
  ok,
  type ScriptedCall,
  type ScriptedRpc,
  startScriptedRpc,
} from "../upstreams/scripted-rpc.js";

const FEED = "0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419";
const word = (n: bigint) => BigInt.asUintN(256, n).toString(16).padStart(64, "0");
/** `latestRoundData()`'s five words: round id, answer, started at, updated at, answered in round. */
const roundData = (answer: bigint) => `0x${word(1n)}${word(answer)}${word(2n)}${word(3n)}${word(1n)}`;

const nodes: ScriptedRpc[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

/** A node answering each `eth_call` with `answer(call)`; its client. */
async function node(answer: (call: ScriptedCall) => unknown) {
  const server = await startScriptedRpc((request) => answerEach(request, answer));
  nodes.push(server);
  const config = testConfig();
  const rpc = new RpcClient(server.url, {
    pool: config.pool,
    timeoutMs: 2_000,
    retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 1_000 },
  });
  return { server, rpc };
}

describe("the feed's decimals", () => {
  it("asks decimals() once per node and feed, at the latest block", async () => {
    const { server, rpc } = await node((call) => ok(call, `0x${word(8n)}`));
    expect(await Promise.all([feedDecimalsOf(rpc, FEED), feedDecimalsOf(rpc, FEED)])).toEqual([8, 8]);
    expect(await feedDecimalsOf(rpc, FEED)).toBe(8);
    expect(server.requests.flatMap((r) => r.calls.map((c) => c.params))).toEqual([
      [{ to: FEED, data: "0x313ce567" }, "latest"],
    ]);
  });

  it("takes only an answer of 0 to 36 in one word, and asks again after a failure", async () => {
    const answers: unknown[] = [`0x${word(37n)}`, "0x08", `0x${word(0n)}`, "boom", `0x${word(18n)}`];
    let n = 0;
    const { rpc } = await node((call) => {
      const answer = answers[n++];
      return answer === "boom" ? failed(call, 3, "execution reverted") : ok(call, answer);
    });
    // Each feed address is asked once: a different address each time.
    const feed = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
    expect(await feedDecimalsOf(rpc, feed(1))).toBeUndefined();
    expect(await feedDecimalsOf(rpc, feed(2))).toBeUndefined();
    expect(await feedDecimalsOf(rpc, feed(3))).toBe(0);
    await expect(feedDecimalsOf(rpc, feed(4))).rejects.toThrow("execution reverted");
    expect(await feedDecimalsOf(rpc, feed(4))).toBe(18);
  });
});

describe("the feed's answer at a block", () => {
  it("reads latestRoundData() at that block and takes its answer when it is a positive int256", async () => {
    let answer = 2_500n * 10n ** 8n;
    const { server, rpc } = await node((call) => ok(call, roundData(answer)));
    expect(await feedAnswerAt(rpc, FEED, 17_000_000)).toBe(2_500n * 10n ** 8n);
    expect(server.requests[0]!.calls[0]!.params).toEqual([{ to: FEED, data: "0xfeaf968c" }, "0x1036640"]);
    answer = 0n;
    expect(await feedAnswerAt(rpc, FEED, 1)).toBeUndefined();
    // A negative int256 (two's complement), not a huge positive number.
    answer = -5n;
    expect(await feedAnswerAt(rpc, FEED, 1)).toBeUndefined();
  });

  it("takes nothing from an answer that is not five words, and fails where the node does", async () => {
    let result: unknown = "0x";
    const { rpc } = await node((call) =>
      result === "fail" ? failed(call, -32000, "missing trie node") : ok(call, result),
    );
    expect(await feedAnswerAt(rpc, FEED, 1)).toBeUndefined();
    result = roundData(1n).slice(0, -2);
    expect(await feedAnswerAt(rpc, FEED, 1)).toBeUndefined();
    result = null;
    expect(await feedAnswerAt(rpc, FEED, 1)).toBeUndefined();
    result = "fail";
    await expect(feedAnswerAt(rpc, FEED, 1)).rejects.toThrow("missing trie node");
  });
});
