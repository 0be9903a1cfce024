/**
 * A JSON-RPC proxy on loopback in front of a node (anvil), behaving like a hosted provider where a test asks it
 * to: a fixed latency on every HTTP request, `eth_getLogs` ranges refused beyond a size (with Alchemy's hint of a
 * range that works, or a bare "too many results"), and any answer a test wants to inject (429s). It records what
 * it served.
 */
import { createServer, type Server } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface RpcMessage {
  id: number;
  method: string;
  params: unknown[];
}

/** An HTTP answer the proxy sends instead of forwarding. */
export interface InjectedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface JsonRpcProxyOptions {
  /** Added before every answer (one HTTP request = one call, a batch included), or chosen per request. */
  latencyMs?: number | ((calls: RpcMessage[]) => number);
  /** Refuse `eth_getLogs` over more blocks than this. */
  maxBlocks?: number;
  /** How a refusal reads: Alchemy's message with a range that works, or a bare result-count error. */
  refusal?: "hint" | "plain";
  /** Leave `logsBloom` out of block headers, as some nodes and providers do. */
  withoutBloom?: boolean;
  /** Answer `eth_getLogs` newest first instead of in chain order. */
  reverseLogs?: boolean;
  /** Called for every HTTP request before it is forwarded; an answer replaces forwarding. */
  intercept?: (calls: RpcMessage[]) => InjectedAnswer | undefined;
}

export interface JsonRpcProxy {
  url: string;
  /** Sizes (in blocks) of the eth_getLogs ranges forwarded, in the order they arrived. */
  served: number[];
  /** eth_getLogs ranges refused. */
  refused: number;
  /** Each eth_getLogs call sent alone and forwarded: its range in blocks, the logs and bytes the node answered. */
  answers: { blocks: number; logs: number; bytes: number }[];
  /** The most eth_getLogs calls that were in flight at once. */
  maxConcurrentLogs: number;
  /** Every HTTP request: when it arrived (ms since epoch) and its methods. */
  requests: { at: number; methods: string[] }[];
  close(): Promise<void>;
}

export async function startJsonRpcProxy(target: string, options: JsonRpcProxyOptions = {}): Promise<JsonRpcProxy> {
  const state = {
    served: [] as number[],
    answers: [] as { blocks: number; logs: number; bytes: number }[],
    refused: 0,
    maxConcurrentLogs: 0,
    requests: [] as { at: number; methods: string[] }[],
  };
  let logsInFlight = 0;
  const { maxBlocks = Number.POSITIVE_INFINITY, refusal = "plain" } = options;

  /** The refusal a provider would answer for this call, if any. */
  const refuse = (call: RpcMessage): unknown => {
    if (call.method !== "eth_getLogs") return undefined;
    const filter = call.params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string };
    const from = Number(filter.fromBlock);
    // A block asked by its hash (EIP-234) is one block.
    const size = filter.blockHash ? 1 : Number(filter.toBlock) - from + 1;
    if (size <= maxBlocks) {
      state.served.push(size);
      return undefined;
    }
    state.refused++;
    const message =
      refusal === "hint" && maxBlocks > 0
        ? `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x${from.toString(16)}, 0x${(from + maxBlocks - 1).toString(16)}]`
        : "query returned more than 10000 results";
    return { jsonrpc: "2.0", id: call.id, error: { code: -32602, message } };
  };

  const forwardRaw = async (body: string): Promise<string> => {
    const forwarded = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
    return forwarded.text();
  };

  const server: Server = createServer(async (req, res) => {
    // A follower asks for a WebSocket at the same address (head-subscription.ts): this node has none.
    if (req.method !== "POST") {
      res.writeHead(405).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString();
    const body = JSON.parse(raw) as RpcMessage | RpcMessage[];
    const calls = Array.isArray(body) ? body : [body];
    state.requests.push({ at: Date.now(), methods: calls.map((c) => c.method) });
    const logs = calls.filter((c) => c.method === "eth_getLogs").length;
    logsInFlight += logs;
    state.maxConcurrentLogs = Math.max(state.maxConcurrentLogs, logsInFlight);
    try {
      const latency = typeof options.latencyMs === "function" ? options.latencyMs(calls) : options.latencyMs;
      if (latency) await sleep(latency);
      const injected = options.intercept?.(calls);
      if (injected) {
        res.writeHead(injected.status, { "content-type": "application/json", ...injected.headers });
        res.end(injected.body);
        return;
      }
      const refusals = calls.map(refuse);
      if (refusals.every((r) => r === undefined)) {
        // Nothing to change: the node's answer goes back byte for byte (no parsing on the hot path of benches).
        let answer = await forwardRaw(raw);
        if (options.withoutBloom && calls.some((c) => c.method === "eth_getBlockByNumber")) {
          answer = answer.replace(/"logsBloom":"0x[0-9a-f]*",?/g, "");
        }
        const only = calls.length === 1 && calls[0]!.method === "eth_getLogs" ? calls[0]! : undefined;
        if (only && options.reverseLogs) {
          const reply = JSON.parse(answer) as { result?: unknown[] };
          if (Array.isArray(reply.result)) reply.result.reverse();
          answer = JSON.stringify(reply);
        }
        if (only) {
          const filter = only.params[0] as { fromBlock: string; toBlock: string };
          state.answers.push({
            blocks: Number(filter.toBlock) - Number(filter.fromBlock) + 1,
            // Counted without parsing: every log has one logIndex.
            logs: answer.split('"logIndex"').length - 1,
            bytes: Buffer.byteLength(answer),
          });
        }
        res.setHeader("content-type", "application/json");
        res.end(answer);
        return;
      }
      const passed = calls.filter((_, i) => refusals[i] === undefined);
      const replies = passed.length ? (JSON.parse(await forwardRaw(JSON.stringify(passed))) as unknown[]) : [];
      const byId = new Map(replies.map((r) => [(r as { id: number }).id, r]));
      const reply = calls.map((c, i) => refusals[i] ?? byId.get(c.id));
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(Array.isArray(body) ? reply : reply[0]));
    } finally {
      logsInFlight -= logs;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get served() {
      return state.served;
    },
    get answers() {
      return state.answers;
    },
    get refused() {
      return state.refused;
    },
    get maxConcurrentLogs() {
      return state.maxConcurrentLogs;
    },
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
