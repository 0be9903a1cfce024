/**
 * The JSON-RPC client (src/chain/rpc.ts) on its own, against a loopback node whose answers each test writes
 * (test/upstreams/scripted-rpc.ts): results in call order, batches cut into pieces the plan and the endpoint take,
 * throttled items asked again alone, batch sizes refused learnt, error objects thrown as `RpcError`, "unknown block"
 * read as `null`, failures a retry fixes retried and the others not, slow or large log answers thrown for the
 * ingestion to split.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { PROVIDER } from "../../src/chain/providers.js";
import {
  hexToNumber,
  RangeTooSlow,
  RpcAnswerTooLarge,
  RpcClient,
  type RpcClientOptions,
  RpcError,
  toHex,
} from "../../src/chain/rpc.js";
import { ChainmailError } from "../../src/core/errors.js";
import { testConfig } from "../support/helpers.js";
import { ALCHEMY_THROTTLE_MESSAGE } from "../upstreams/provider-words.js";
import {
  answerEach,
  failed,
  ok,
  type ScriptedAnswer,
  type ScriptedRequest,
  type ScriptedRpc,
  startScriptedRpc,
} from "../upstreams/scripted-rpc.js";

const nodes: ScriptedRpc[] = [];
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

async function node(answer: (request: ScriptedRequest, n: number) => ScriptedAnswer, path = "") {
  const started = await startScriptedRpc(answer, path);
  nodes.push(started);
  return started;
}

function client(url: string, options: Partial<RpcClientOptions> = {}) {
  const config = testConfig();
  return new RpcClient(url, {
    pool: config.pool,
    timeoutMs: 2_000,
    retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20, budgetMs: 5_000 },
    ...options,
  });
}

/** Each call answered with its first parameter: results then say which call they belong to. */
const echo = (request: ScriptedRequest) => answerEach(request, (call) => ok(call, call.params[0]));

describe("calls and batches", () => {
  it("sends one call as a single JSON-RPC 2.0 object and returns its result", async () => {
    const rpc = node((request) => answerEach(request, (call) => ok(call, "0x10")));
    const server = await rpc;
    expect(await client(server.url).call<string>("eth_blockNumber", [])).toBe("0x10");
    expect(server.requests).toEqual([
      {
        batch: false,
        calls: [{ jsonrpc: "2.0", id: expect.any(Number), method: "eth_blockNumber", params: [] }],
        path: "/",
      },
    ]);
  });

  it("returns a batch's results in call order, however the node orders its replies", async () => {
    const server = await node((request) => {
      const { body } = echo(request);
      return { body: Array.isArray(body) ? [...body].reverse() : body };
    });
    const calls = Array.from({ length: 7 }, (_, i) => ({ method: "eth_getBlockByNumber", params: [i, false] }));
    expect(await client(server.url).batch(calls)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(server.requests.map((r) => r.calls.length)).toEqual([7]);
  });

  it("cuts a batch into pieces costing at most about a second of the stated plan", async () => {
    const server = await node(echo);
    // 1,000 CU/s: a piece costs at most 900 CU, so 12 eth_getLogs at 75 CU.
    const rpc = client(server.url, { provider: PROVIDER.alchemy, unitsPerSecond: 1_000 });
    const calls = Array.from({ length: 20 }, (_, i) => ({ method: "eth_getLogs", params: [i] }));
    expect(await rpc.batch(calls)).toEqual(calls.map((_, i) => i));
    expect(server.requests.map((r) => r.calls.length).sort((a, b) => b - a)).toEqual([12, 8]);
    expect(rpc.usage()).toMatchObject({ calls: { eth_getLogs: 20 } });
  });

  it("asks again only the items throttled inside a 200 answer, and keeps the others", async () => {
    const server = await node((request, n) =>
      answerEach(request, (call) =>
        n === 0 && (call.params[0] as number) % 2 === 1
          ? failed(call, 429, ALCHEMY_THROTTLE_MESSAGE)
          : ok(call, call.params[0]),
      ),
    );
    const calls = Array.from({ length: 6 }, (_, i) => ({ method: "eth_blockNumber", params: [i] }));
    expect(await client(server.url).batch(calls)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(server.requests.map((r) => r.calls.map((c) => c.params[0]))).toEqual([
      [0, 1, 2, 3, 4, 5],
      [1, 3, 5],
    ]);
  });
});

describe("batch sizes the endpoint refuses", () => {
  it("learns the size from -32600 'batch too large' on every item, tells it once, and sends no larger batch again", async () => {
    const server = await node((request) =>
      request.calls.length > 2 ? answerEach(request, (call) => failed(call, -32600, "batch too large")) : echo(request),
    );
    const notices: string[] = [];
    const rpc = client(server.url, { onNotice: (m) => notices.push(m) });
    const calls = Array.from({ length: 5 }, (_, i) => ({ method: "eth_getBlockByNumber", params: [i] }));
    expect(await rpc.batch(calls)).toEqual([0, 1, 2, 3, 4]);
    // 5 refused: at most 2 from now on.
    expect(notices).toEqual([
      expect.stringContaining(
        "refuses a batch of 5 requests (batch too large (JSON-RPC code -32600)): sending at most 2",
      ),
    ]);
    const refusals = server.requests.length;
    expect(await rpc.batch(calls)).toEqual([0, 1, 2, 3, 4]);
    const later = server.requests.slice(refusals).map((r) => r.calls.length);
    expect(later.sort()).toEqual([1, 2, 2]);
  });

  it("calls one at a time an endpoint that answers every batch HTTP 413", async () => {
    const server = await node((request) =>
      request.batch ? { status: 413, body: "Request Entity Too Large" } : echo(request),
    );
    const notices: string[] = [];
    const rpc = client(server.url, { onNotice: (m) => notices.push(m) });
    const calls = Array.from({ length: 2 }, (_, i) => ({ method: "eth_chainId", params: [i] }));
    expect(await rpc.batch(calls)).toEqual([0, 1]);
    expect(notices).toEqual([expect.stringContaining("refuses batch requests (HTTP 413")]);
    expect(server.requests.map((r) => r.batch)).toEqual([true, false, false]);
  });
});

describe("errors", () => {
  it("throws a JSON-RPC error object as RpcError, with its code, message, method and data, without asking again", async () => {
    const server = await node((request) =>
      answerEach(request, (call) => failed(call, -32602, "invalid argument 0", { hint: 1 })),
    );
    const error = await client(server.url)
      .call("eth_getLogs", [{}])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({
      code: -32602,
      rpcMessage: "invalid argument 0",
      method: "eth_getLogs",
      data: { hint: 1 },
    });
    expect(server.requests).toHaveLength(1);
  });

  it("reads 'unknown block' as null for a block lookup, and as an error for any other method", async () => {
    const server = await node((request) => answerEach(request, (call) => failed(call, -32000, "unknown block")));
    const rpc = client(server.url);
    expect(await rpc.call("eth_getBlockByHash", ["0xab", false])).toBeNull();
    expect(await rpc.call("eth_getBlockByNumber", ["0x1", false])).toBeNull();
    await expect(rpc.call("eth_getBlockReceipts", ["0x1"])).rejects.toBeInstanceOf(RpcError);
  });

  it("asks again after a garbled answer, a 502 page or an internal error, and returns the answer that follows", async () => {
    const faults: ScriptedAnswer[] = [
      { body: '{"jsonrpc":"2.0","id":' },
      { status: 502, body: "<html>Bad Gateway</html>" },
      { body: { jsonrpc: "2.0", id: 0, error: { code: -32603, message: "internal error" } } },
    ];
    const server = await node((request, n) => {
      const fault = faults[n];
      if (!fault) return echo(request);
      // The internal error's id is the call's.
      if (typeof fault.body === "object") return answerEach(request, (call) => failed(call, -32603, "internal error"));
      return fault;
    });
    expect(
      await client(server.url, { retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5, budgetMs: 5_000 } }).call(
        "eth_blockNumber",
        ["done"],
      ),
    ).toBe("done");
    expect(server.requests).toHaveLength(4);
  });

  it("gives up after its retries with the last failure, in words that do not show the key in the URL's path", async () => {
    const server = await node(() => ({ status: 503, body: "Service Unavailable" }), "/v2/secret-key-123");
    const error = await client(server.url)
      .call("eth_blockNumber", [])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainmailError);
    expect(error).toMatchObject({ code: "upstream_server_error" });
    expect(String((error as Error).message)).not.toContain("secret-key-123");
    // The first attempt and two retries.
    expect(server.requests).toHaveLength(3);
    expect(server.requests[0]!.path).toBe("/v2/secret-key-123");
  });

  it("does not ask again what a retry cannot fix: a 401 is an authentication failure at once", async () => {
    const server = await node(() => ({ status: 401, body: "Unauthorized" }));
    await expect(client(server.url).call("eth_blockNumber", [])).rejects.toMatchObject({ code: "upstream_auth" });
    expect(server.requests).toHaveLength(1);
  });

  it("waits out HTTP 429 with Retry-After and fails once throttling outlasts its budget", async () => {
    const limited = await node((request, n) =>
      n === 0 ? { status: 429, headers: { "retry-after": "1" }, body: "Too Many Requests" } : echo(request),
    );
    const started = Date.now();
    expect(await client(limited.url).call("eth_blockNumber", ["served"])).toBe("served");
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    const always = await node(() => ({ status: 429, body: "Too Many Requests" }));
    const error = await client(always.url, { throttleBudgetMs: 300 })
      .call("eth_blockNumber", [])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "upstream_rate_limited" });
    expect(always.requests.length).toBeGreaterThan(1);
  });
});

describe("log answers handed back in slices", () => {
  it("hands back an array result a slice at a time, and null where the node answers null", async () => {
    const logs = Array.from({ length: 5 }, (_, i) => ({ logIndex: toHex(i) }));
    const server = await node((request) =>
      answerEach(request, (call) => ok(call, call.params[0] === "none" ? null : logs)),
    );
    const rpc = client(server.url);
    const sliced = await rpc.callSlices("eth_getLogs", ["some"]);
    expect(sliced?.whole()).toBe(true);
    expect([...sliced!.slices(2)].map((s) => s.length)).toEqual([2, 2, 1]);
    expect([...sliced!.slices(2)].flat()).toEqual(logs);
    expect(await rpc.callSlices("eth_getLogs", ["none"])).toBeNull();
  });

  it("throws a log range the gateway answered 504, or that timed out, as RangeTooSlow when splittable", async () => {
    const gateway = await node(() => ({ status: 504, body: "<html>504 Gateway Time-out</html>" }));
    await expect(client(gateway.url).callSlices("eth_getLogs", [{}], { splittable: true })).rejects.toBeInstanceOf(
      RangeTooSlow,
    );
    expect(gateway.requests).toHaveLength(1);

    const slow = await node((request) => ({ ...echo(request), delayMs: 1_000 }));
    const error = await client(slow.url, { timeoutMs: 100 })
      .callSlices("eth_getLogs", [{}], { splittable: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeTooSlow);
    expect(slow.requests).toHaveLength(1);
  });

  it("cuts off an answer over maxAnswerBytes and throws it as RpcAnswerTooLarge (-32005, 413)", async () => {
    const big = Array.from({ length: 200 }, (_, i) => ({ data: `0x${"00".repeat(32)}`, logIndex: toHex(i) }));
    const server = await node((request) => answerEach(request, (call) => ok(call, big)));
    const error = await client(server.url)
      .callSlices("eth_getLogs", [{}], { maxAnswerBytes: 1_000 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcAnswerTooLarge);
    expect(error).toMatchObject({ code: -32005, status: 413, limit: 1_000 });
  });
});

describe("hex quantities", () => {
  it("toHex and hexToNumber are each other's inverse over safe integers", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const hex = toHex(n);
        expect(hex).toMatch(/^0x(0|[1-9a-f][0-9a-f]*)$/);
        expect(hexToNumber(hex)).toBe(n);
        expect(toHex(BigInt(n))).toBe(hex);
      }),
    );
  });
});
