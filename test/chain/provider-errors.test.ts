/**
 * Reading providers' refusals in their own words: every wording below is a provider's answer as its users quote it
 * in public issues (sources in src/chain/provider-errors.ts), each with the size it states or suggests.
 */
import { describe, expect, it } from "vitest";
import {
  isBatchRefusal,
  isExecutionFailure,
  isThrottling,
  isUnknownBlock,
  rangeRefusal,
  suggestedBlocks,
} from "../../src/chain/provider-errors.js";

const FROM = 0x10;

describe("range refusals", () => {
  const cases: [string, number, string, number | undefined, unknown?][] = [
    [
      "Alchemy",
      -32602,
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x10, 0x1f]",
      16,
    ],
    [
      "Alchemy free tier",
      -32600,
      "Under the Free tier plan, you can make eth_getLogs requests with up to a 10 block range. Based on your parameters, this block range should work: [0x10, 0x19]",
      10,
    ],
    [
      "Alchemy, no suggestion",
      -32602,
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range",
      2000,
    ],
    ["Infura result cap", -32005, "query returned more than 10000 results", undefined],
    [
      "Infura result cap with its data",
      -32005,
      "query returned more than 10000 results",
      40,
      { from: "0x10", to: "0x37", limit: 10000 },
    ],
    ["Infura block cap", -32602, "range 1000000 exceeds limit of 10000", 10_000],
    ["QuickNode", -32614, "eth_getLogs is limited to a 10,000 range", 10_000],
    ["geth-based (BSC, publicnode)", -32000, "exceed maximum block range: 50000", 50_000],
    ["erigon block cap", -32000, "query block range exceeds server limit, narrow your filter: 1000", 1000],
    ["erigon result cap", -32000, "query returns too many logs, narrow your filter: 20000", undefined],
    [
      "reth, naming the refused range itself",
      -32602,
      "query exceeds max results 20000, retry with the range 16-100015",
      undefined,
    ],
    ["Tenderly", -32602, "range 9009594 is bigger than range limit 2000", 2000],
    ["Cloudflare", -32047, "Max range: 3000", 3000],
    ["Coinbase", -32000, "please limit the query to at most 1,000 blocks", 1000],
    ["Arbitrum", -32000, "logs matched by query exceeds limit of 10000", 10_000],
  ];
  for (const [provider, code, message, blocks, data] of cases) {
    it(`reads ${provider}: ${message.slice(0, 60)}`, () => {
      // A refused range of 100,000 blocks from FROM.
      expect(rangeRefusal({ code, message, data }, FROM, 100_000)?.blocks).toBe(blocks);
    });
  }

  it("tells a range suggested for this request from a cap on every range", () => {
    const alchemy =
      "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x10, 0x1f]";
    // Alchemy's 2K blocks are served whatever the answer; ranges beyond, while they hold at most 10K logs.
    expect(rangeRefusal({ code: -32602, message: alchemy }, FROM, 100_000)).toEqual({
      blocks: 16,
      suggested: true,
      overLogCap: true,
    });
    const free =
      "Under the Free tier plan, you can make eth_getLogs requests with up to a 10 block range. Based on your parameters, this block range should work: [0x10, 0x19]";
    expect(rangeRefusal({ code: -32600, message: free }, FROM, 100_000)).toEqual({
      blocks: 10,
      suggested: true,
      cap: 10,
    });
    const data = { from: "0x10", to: "0x37", limit: 10000 };
    expect(rangeRefusal({ code: -32005, message: "query returned more than 10000 results", data }, FROM, 100)).toEqual({
      blocks: 40,
      suggested: true,
      overLogCap: true,
    });
    expect(rangeRefusal({ code: -32614, message: "eth_getLogs is limited to a 10,000 range" }, FROM, 100_000)).toEqual({
      blocks: 10_000,
      cap: 10_000,
    });
  });

  it("takes geth's and reth's 'beyond current head block' as a backend behind, not a range too large", () => {
    const message = "block range extends beyond current head block";
    expect(rangeRefusal({ code: -32602, message }, FROM, 100)).toBeUndefined();
    expect(rangeRefusal({ code: -32000, message: "invalid block range: beyond head" }, FROM, 100)).toBeUndefined();
  });

  it("takes a suggestion only when it is smaller than the range refused", () => {
    expect(rangeRefusal({ code: -32602, message: "this block range should work: [0x10, 0x1f]" }, FROM, 16)).toEqual({
      blocks: undefined,
    });
  });

  it("counts QuickNode's HTTP 413 as a size refusal whatever the words", () => {
    expect(rangeRefusal({ code: -32000, message: "request entity", status: 413 }, FROM, 10)).toEqual({
      blocks: undefined,
    });
  });

  it("is not throttling nor an unrelated error", () => {
    expect(rangeRefusal({ code: -32005, message: "project ID request rate exceeded" }, FROM, 100)).toBeUndefined();
    expect(
      rangeRefusal({ code: 429, message: "Your app has exceeded its compute units per second capacity." }, FROM, 100),
    ).toBeUndefined();
    expect(rangeRefusal({ code: -32602, message: "invalid params: bad address" }, FROM, 100)).toBeUndefined();
    expect(suggestedBlocks("query returned more than 10000 results", FROM)).toBeUndefined();
  });
});

describe("throttling, batch refusals, unknown blocks", () => {
  it("recognises throttling in Alchemy's and Infura's words", () => {
    expect(
      isThrottling(
        429,
        "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message.",
      ),
    ).toBe(true);
    expect(isThrottling(-32005, "daily request count exceeded, request rate limited")).toBe(true);
    expect(isThrottling(-32005, "project ID request rate exceeded")).toBe(true);
    expect(isThrottling(-32005, "query returned more than 10000 results")).toBe(false);
    // A bare "limit exceeded" under -32005 is a rate limiter's; a range cap names what it limits.
    expect(isThrottling(-32005, "limit exceeded")).toBe(true);
    expect(isThrottling(-32000, "limit exceeded")).toBe(false);
    expect(isThrottling(-32005, "block range limit exceeded 5000")).toBe(false);
  });

  it("recognises a refused batch", () => {
    expect(isBatchRefusal(413, undefined)).toBe(true);
    expect(isBatchRefusal(200, { code: -32600, message: "batch size exceeded" })).toBe(true);
    expect(isBatchRefusal(200, { code: -32000, message: "execution reverted" })).toBe(false);
  });

  it("recognises a call's own execution failing (not retried, whatever the code)", () => {
    expect(isExecutionFailure("execution reverted")).toBe(true);
    expect(isExecutionFailure("EVM error InvalidOperandOOG")).toBe(true);
    expect(isExecutionFailure("out of gas")).toBe(true);
    expect(isExecutionFailure("internal error")).toBe(false);
    expect(isExecutionFailure("header not found")).toBe(false);
  });

  it("recognises a block a node does not have", () => {
    expect(isUnknownBlock("unknown block")).toBe(true);
    expect(isUnknownBlock("header not found")).toBe(true);
    expect(isUnknownBlock("method not found")).toBe(false);
  });
});
