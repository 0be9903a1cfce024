/**
 * A small Ethereum JSON-RPC client over the shared HTTP client (timeouts, retries on 429/5xx/network, proxy).
 * Batches go as one JSON-RPC array. Concurrent calls share one rate-limit backoff: after a 429 no call of this
 * client (first attempt or retry) starts until the wait it was given is over. A JSON-RPC error object is thrown as `RpcError` so the ingestion loop can
 * tell "the provider refused this log range" from everything else; transport failures throw `ChainmailError`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import type { RetryPolicy } from "../../core/config.js";
import { ChainmailError } from "../../core/errors.js";
import { AnswerTooLarge, httpRequest, retryReads } from "../../core/http.js";
import { type ResultSlices, resultSlices } from "./result-slices.js";

/** The upstream name in messages, logs and `details.upstream`. */
export const RPC_UPSTREAM = "JSON-RPC node";

/** An error object a JSON-RPC node answered with (or an HTTP error status carrying one). */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly method: string,
    readonly status = 200,
  ) {
    super(`${method} failed: ${rpcMessage} (JSON-RPC code ${code})`);
  }
}

/**
 * An answer larger than the call allowed, cut off unread: code -32005 and status 413 like a provider's "response
 * too large", so the ingestion shrinks the range. `bytes` is the size the node announced, when it did.
 */
export class RpcAnswerTooLarge extends RpcError {
  override name = "RpcAnswerTooLarge";
  constructor(
    method: string,
    readonly limit: number,
    readonly bytes: number | undefined,
  ) {
    super(-32005, `answer larger than ${limit} bytes${bytes === undefined ? "" : ` (${bytes})`}`, method, 413);
  }
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface RpcClientOptions {
  dispatcher: Dispatcher;
  timeoutMs: number;
  retry: RetryPolicy;
  signal?: AbortSignal | undefined;
}

interface RpcReply {
  id?: number;
  result?: unknown;
  error?: { code?: number; message?: string };
}

export class RpcClient {
  /** The URL's path and query often carry a provider key: never shown. */
  private readonly secrets: string[];
  private nextId = 1;
  /** No attempt starts before this time (ms since epoch): the shared 429 backoff. */
  private pausedUntil = 0;

  constructor(
    readonly url: string,
    private readonly options: RpcClientOptions,
  ) {
    const parsed = new URL(url);
    const secret = parsed.pathname.length > 1 || parsed.search ? parsed.pathname + parsed.search : "";
    this.secrets = [secret, parsed.password].filter((s) => s.length > 2);
  }

  /** Where the node is, for messages: origin only. */
  get origin(): string {
    return new URL(this.url).origin;
  }

  /** One call; an answer over `maxAnswerBytes` is cut off and thrown as `RpcAnswerTooLarge`. */
  async call<T>(method: string, params: unknown[], maxAnswerBytes?: number): Promise<T> {
    const [result] = await this.batch([{ method, params }], maxAnswerBytes);
    return result as T;
  }

  /**
   * One call whose result is a long array (`eth_getLogs`), handed back to be parsed a slice at a time
   * (result-slices.ts); an answer over `maxAnswerBytes` is cut off and thrown as `RpcAnswerTooLarge`.
   */
  async callSlices(method: string, params: unknown[], maxAnswerBytes?: number): Promise<ResultSlices> {
    const calls = [{ method, params }];
    const first = this.nextId++;
    const { status, body } = await this.send(calls, first, maxAnswerBytes);
    const sliced = resultSlices(body);
    if (sliced && sliced.id === first) return sliced;
    const [result] = this.results(calls, first, status, body);
    if (!Array.isArray(result)) {
      throw new ChainmailError(
        "UPSTREAM_BAD_RESPONSE",
        `The JSON-RPC node at ${this.origin} answered ${method} with no list.`,
        {
          details: { upstream: RPC_UPSTREAM, status },
        },
      );
    }
    return {
      id: first,
      *slices(size: number) {
        for (let i = 0; i < result.length; i += size) yield result.slice(i, i + size);
      },
    };
  }

  /** Sends calls as one JSON-RPC batch; results in call order. Throws the first error any call got. */
  async batch(calls: RpcCall[], maxAnswerBytes?: number): Promise<unknown[]> {
    if (calls.length === 0) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    const { status, body } = await this.send(calls, first, maxAnswerBytes);
    return this.results(calls, first, status, body);
  }

  /** Posts the calls (ids from `first` on) and resolves to the answer's status and text. */
  private async send(calls: RpcCall[], first: number, maxAnswerBytes: number | undefined) {
    const payload = calls.map((c, i) => ({ jsonrpc: "2.0", id: first + i, method: c.method, params: c.params }));
    const single = calls.length === 1;
    const result = await httpRequest({
      upstream: RPC_UPSTREAM,
      method: "POST",
      url: this.url,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(single ? payload[0] : payload),
      timeoutMs: this.options.timeoutMs,
      retry: this.options.retry,
      shouldRetry: retryReads,
      secrets: this.secrets,
      dispatcher: this.options.dispatcher,
      signal: this.options.signal,
      beforeAttempt: () => this.waitForTurn(),
      maxBodyBytes: maxAnswerBytes,
      onAttempt: (event) => {
        if (event.outcome.kind === "response" && event.outcome.status === 429 && event.retryInMs !== undefined) {
          this.pausedUntil = Math.max(this.pausedUntil, Date.now() + event.retryInMs);
        }
      },
    });
    if (result.error) {
      const cause = result.error.cause;
      if (cause instanceof AnswerTooLarge) throw new RpcAnswerTooLarge(calls[0]!.method, cause.limit, cause.bytes);
      throw result.error;
    }
    return result.response;
  }

  /** The calls' results from the answer's text; throws the first error any call got. */
  private results(calls: RpcCall[], first: number, status: number, body: string): unknown[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      if (status >= 400) throw new RpcError(-32000, `HTTP ${status}: ${body.slice(0, 200)}`, calls[0]!.method, status);
      throw new ChainmailError("UPSTREAM_BAD_RESPONSE", `The JSON-RPC node at ${this.origin} answered non-JSON.`, {
        hint: "Check the --rpc URL.",
        details: { upstream: RPC_UPSTREAM, status },
      });
    }
    const replies = (Array.isArray(parsed) ? parsed : [parsed]) as RpcReply[];
    const byId = new Map<number | undefined, RpcReply>(replies.map((r) => [r.id, r]));
    return calls.map((c, i) => {
      // A provider that fails a whole batch answers with one error object without an id.
      const reply = byId.get(first + i) ?? (replies.length === 1 && replies[0]?.error ? replies[0] : undefined);
      if (!reply) {
        throw new ChainmailError(
          "UPSTREAM_BAD_RESPONSE",
          `The JSON-RPC node at ${this.origin} left ${c.method} unanswered.`,
          {
            details: { upstream: RPC_UPSTREAM, status },
          },
        );
      }
      if (reply.error)
        throw new RpcError(reply.error.code ?? -32000, reply.error.message ?? "unknown error", c.method, status);
      return reply.result;
    });
  }

  private async waitForTurn(): Promise<void> {
    for (let wait = this.pausedUntil - Date.now(); wait > 0; wait = this.pausedUntil - Date.now()) {
      await sleep(wait, undefined, this.options.signal ? { signal: this.options.signal } : undefined);
    }
  }
}

/** `0x1a` → 26. */
export const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);
export const toHex = (n: number | bigint): string => `0x${n.toString(16)}`;
