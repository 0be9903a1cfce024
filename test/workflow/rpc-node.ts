/**
 * An Ethereum JSON-RPC node on loopback for OpenSea's blocks (`eth_getTransactionByHash`, single or batched, as the
 * OpenSea source asks it): every transaction asked about is mined in one block. It keeps each request's headers, to
 * show what a workflow package sends it.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface RpcNode {
  url: string;
  /** The block every transaction is in. */
  block: { number: number; hash: string };
  requests: { headers: IncomingHttpHeaders; methods: string[] }[];
  close(): Promise<void>;
}

export async function startRpcNode(): Promise<RpcNode> {
  const block = { number: 23_900_123, hash: `0x${"5b".repeat(32)}` };
  const requests: RpcNode["requests"] = [];
  const answer = (call: { id?: unknown; method?: unknown; params?: unknown }) => {
    const base = { jsonrpc: "2.0", id: call.id ?? null };
    if (call.method !== "eth_getTransactionByHash" || !Array.isArray(call.params)) {
      return { ...base, error: { code: -32601, message: "the method does not exist/is not available" } };
    }
    const hash = String(call.params[0]);
    return { ...base, result: { hash, blockHash: block.hash, blockNumber: `0x${block.number.toString(16)}` } };
  };
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}');
      }
      const calls = (Array.isArray(parsed) ? parsed : [parsed]) as { method?: unknown }[];
      requests.push({ headers: req.headers, methods: calls.map((call) => String(call.method)) });
      const answers = calls.map(answer);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    block,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
