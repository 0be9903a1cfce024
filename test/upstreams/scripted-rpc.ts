/**
 * A JSON-RPC node on loopback whose every answer a test writes: no chain behind it. For tests of the JSON-RPC
 * client itself (how it batches, retries and reads errors), where anvil would only add seconds. It records each
 * HTTP request it got: its body as sent (a single call or a batch) and the calls in it.
 */
import { createServer, type Server } from "node:http";

export interface ScriptedCall {
  jsonrpc: string;
  id: number;
  method: string;
  params: unknown[];
}

export interface ScriptedRequest {
  /** The body was a JSON array (a batch), not a single call object. */
  batch: boolean;
  calls: ScriptedCall[];
  /** The request's path and query, as the client sent them. */
  path: string;
}

/** An HTTP answer: `body` as is when a string, else as JSON. `delayMs` before the answer starts. */
export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
  delayMs?: number;
}

export interface ScriptedRpc {
  url: string;
  requests: ScriptedRequest[];
  close(): Promise<void>;
}

/** A reply for each call: `{ result }` or `{ error }`, with the call's id. */
export const ok = (call: ScriptedCall, result: unknown) => ({ jsonrpc: "2.0", id: call.id, result });
export const failed = (call: ScriptedCall, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0",
  id: call.id,
  error: data === undefined ? { code, message } : { code, message, data },
});

/**
 * Starts a node answering each HTTP request with `answer(request, n)` (`n`: the request's number, from 0).
 * `path` is appended to the URL (where a provider key would be).
 */
export async function startScriptedRpc(
  answer: (request: ScriptedRequest, n: number) => ScriptedAnswer,
  path = "",
): Promise<ScriptedRpc> {
  const requests: ScriptedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const parsed = JSON.parse(Buffer.concat(chunks).toString()) as ScriptedCall | ScriptedCall[];
    const request = {
      batch: Array.isArray(parsed),
      calls: Array.isArray(parsed) ? parsed : [parsed],
      path: req.url ?? "",
    };
    const n = requests.push(request) - 1;
    const { status = 200, headers = {}, body, delayMs } = answer(request, n);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    const text = typeof body === "string" ? body : JSON.stringify(body);
    // With its length, as providers answer (writeHead alone would send it chunked).
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The usual answer: each call's reply in a batch (or alone), from `result(call)`. */
export function answerEach(request: ScriptedRequest, reply: (call: ScriptedCall) => unknown): ScriptedAnswer {
  const replies = request.calls.map(reply);
  return { body: request.batch ? replies : replies[0] };
}
