/**
 * A small Ethereum JSON-RPC client over the shared HTTP client (one attempt per exchange; timeouts, proxy), with
 * the pacing and retry rules hosted providers need: every request waits its turn at the pace the endpoint allows
 * (pacer.ts), priced by the provider's costs; throttling, HTTP 429 or inside a 200 answer, lowers that pace and the
 * throttled calls are asked again at it (rpc-retry.ts); a cut, garbled or HTML answer, a 5xx or a dropped
 * connection is asked again; a batch item that was throttled is asked again, the others kept; a batch is cut into
 * pieces that cost at most about a second of the plan; an endpoint that refuses batches of some size (-32600
 * "batch too large" for every item, HTTP 413) is sent smaller ones, down to one request at a time. A JSON-RPC error object is thrown as
 * `RpcError` so the ingestion loop can tell "the provider refused this log range" from everything else; a log
 * range that timed out or answered HTTP 504 is thrown as `RangeTooSlow`, to be split.
 */
import type { RetryPolicy } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import { AnswerTooLarge, httpRequest, retryAfterMs } from "../core/http.js";
import type { UpstreamPool } from "../core/upstream-pool.js";
import { Pacer, type RpcUsage } from "./pacer.js";
import { isBatchRefusal, isExecutionFailure, isThrottling, isUnknownBlock } from "./provider-errors.js";
import { type Provider, providerOf } from "./providers.js";
import { type ResultSlices, resultSlices } from "./result-slices.js";
import { persist, Retryable, RPC_UPSTREAM, seconds, Throttle } from "./rpc-retry.js";

export { RPC_UPSTREAM } from "./rpc-retry.js";

/** An error object a JSON-RPC node answered with (or an HTTP error status carrying one). */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    readonly rpcMessage: string,
    readonly method: string,
    readonly status = 200,
    readonly data?: unknown,
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

/** A log range the provider could not serve in time (a timeout, or HTTP 504 from its gateway): split it. */
export class RangeTooSlow extends RpcError {
  override name = "RangeTooSlow";
  constructor(method: string, said: string, status: number) {
    super(-32000, said, method, status);
  }
}

/** A block header as `eth_getBlockByNumber(n, false)` answers it. */
export interface Header {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  logsBloom?: string;
  /** The block's transaction hashes (`eth_getBlockByNumber(n, false)`). */
  transactions?: unknown[];
}

export interface RpcCall {
  method: string;
  params: unknown[];
}

export interface RpcClientOptions {
  pool: UpstreamPool;
  timeoutMs: number;
  retry: RetryPolicy;
  /** How long a run of throttling may last before a call fails. Default: forever. */
  throttleBudgetMs?: number | undefined;
  /** What the client waits out, for people (throttling, a batch refusal). */
  onNotice?: ((message: string) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Whose costs and plans the calls are paced by. Default: recognised by the URL's host. */
  provider?: Provider | undefined;
  /** The user's plan, when stated (INDEX_RPC_CU_PER_SECOND, INDEX_RPC_REQUESTS_PER_SECOND): a fixed cap. */
  unitsPerSecond?: number | undefined;
  requestsPerSecond?: number | undefined;
}

interface RpcReply {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown; data?: unknown };
}

/** Requests (single calls, or pieces of a batch) in flight at once for one batch. */
const REQUESTS_AT_ONCE = 4;

export class RpcClient {
  /** The URL's path and query often carry a provider key: never shown. */
  private readonly secrets: string[];
  private nextId = 1;
  private readonly throttle: Throttle;
  /** The pace of every request, and what was spent. */
  readonly pacer: Pacer;
  /** The largest batch the endpoint takes, once it refused a larger one (1: no batches). */
  private maxBatch = Number.POSITIVE_INFINITY;

  constructor(
    readonly url: string,
    private readonly options: RpcClientOptions,
  ) {
    const parsed = new URL(url);
    const secret = parsed.pathname.length > 1 || parsed.search ? parsed.pathname + parsed.search : "";
    this.secrets = [secret, parsed.password].filter((s) => s.length > 2);
    this.pacer = new Pacer({
      provider: options.provider ?? providerOf(undefined, url),
      unitsPerSecond: options.unitsPerSecond,
      requestsPerSecond: options.requestsPerSecond,
      wait: (ms) => options.pool.wait(ms, options.signal),
    });
    this.throttle = new Throttle(
      this.origin,
      options.throttleBudgetMs ?? Number.POSITIVE_INFINITY,
      options.onNotice,
      options.signal,
      options.pool,
      this.pacer,
    );
  }

  /** What the client spent so far: calls, units, throttled share, the pace it settled on. */
  usage(): RpcUsage {
    return this.pacer.usage();
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
   * (result-slices.ts); `null` when the node answered `null` (it does not have the blocks yet). An answer over
   * `maxAnswerBytes` is cut off and thrown as `RpcAnswerTooLarge`; with `splittable`, a timeout or an HTTP 504 is
   * thrown as `RangeTooSlow` at once instead of being asked again.
   */
  async callSlices(
    method: string,
    params: unknown[],
    options: { maxAnswerBytes?: number | undefined; splittable?: boolean } = {},
  ): Promise<ResultSlices | null> {
    const calls = [{ method, params }];
    return persist(this.throttle, this.options.retry, this.options.signal, async () => {
      const first = this.nextId++;
      return this.paced(calls, async () => {
        const splittable = options.splittable ?? false;
        const { status, body } = await this.send(calls, first, options.maxAnswerBytes, splittable);
        const sliced = resultSlices(body);
        if (sliced && sliced.id === first) {
          // A cut-off answer is asked again before any of it is used.
          if (!sliced.whole()) throw garbled(this.origin, method, status, body);
          return sliced;
        }
        const [reply] = this.replies(calls, first, status, body);
        const result = this.resultOf(reply!, method, status);
        if (result === null) return null;
        if (!Array.isArray(result)) throw garbled(this.origin, method, status, body);
        return {
          id: first,
          whole: () => true,
          *slices(size: number) {
            for (let i = 0; i < result.length; i += size) yield result.slice(i, i + size);
          },
        };
      });
    });
  }

  /**
   * Sends calls as JSON-RPC batches (pieces the endpoint and the pace allow, or one at a time where batches are
   * refused); results in call order. Items that were throttled are asked again at the paced rate; throws the first
   * other error any call got. For block lookups an "unknown block" error is `null`, as a node answers for a block
   * it does not have. `spare`: asked ahead of need, paced after every call that is needed now (pacer.ts).
   */
  async batch(calls: RpcCall[], maxAnswerBytes?: number, spare = false): Promise<unknown[]> {
    const results: unknown[] = new Array(calls.length);
    let pending = calls.map((_, i) => i);
    while (pending.length > 0) {
      let throttled: Retryable | undefined;
      const served = await this.sendPieces(pending, calls, maxAnswerBytes, spare);
      const next: number[] = [];
      served.forEach((outcome, k) => {
        const index = pending[k]!;
        if (outcome instanceof Retryable) {
          throttled ??= outcome;
          next.push(index);
        } else results[index] = outcome;
      });
      pending = next;
      // Throttled items are asked again (the others kept), at the pace the throttling lowered.
      if (throttled) await this.throttle.throttled(throttled);
    }
    return results;
  }

  /** Each call's result, or a throttled item's `Retryable`: in pieces the endpoint takes, a few at once. */
  private async sendPieces(indexes: number[], calls: RpcCall[], maxAnswerBytes: number | undefined, spare = false) {
    const pieces = this.pieces(indexes, calls, spare);
    const out: (unknown | Retryable)[][] = new Array(pieces.length);
    let next = 0;
    const worker = async () => {
      for (let k = next++; k < pieces.length; k = next++)
        out[k] = await this.sendPiece(pieces[k]!, calls, maxAnswerBytes, spare);
    };
    await Promise.all(Array.from({ length: Math.min(REQUESTS_AT_ONCE, pieces.length) }, worker));
    return out.flat();
  }

  /** One piece; refused for its size, it is sent again in the smaller pieces learnt from that. */
  private async sendPiece(piece: number[], calls: RpcCall[], maxAnswerBytes: number | undefined, spare: boolean) {
    if (piece.length > this.maxBatch) return this.sendPieces(piece, calls, maxAnswerBytes, spare);
    try {
      return await this.exchange(
        piece.map((i) => calls[i]!),
        maxAnswerBytes,
        spare,
      );
    } catch (err) {
      if (!(err instanceof Retryable) || err.kind !== "batch" || piece.length < 2) throw err;
      this.refusedBatchOf(piece.length, err.said);
      return this.sendPieces(piece, calls, maxAnswerBytes, spare);
    }
  }

  /** A batch of `size` refused for its size: the largest taken from now on is half of it (1: one at a time). */
  private refusedBatchOf(size: number, said: string): void {
    const smaller = Math.max(1, Math.floor(size / 2));
    if (smaller >= this.maxBatch) return;
    this.maxBatch = smaller;
    this.options.onNotice?.(
      smaller === 1
        ? `the JSON-RPC node at ${this.origin} refuses batch requests (${said}): calling it one request at a time`
        : `the JSON-RPC node at ${this.origin} refuses a batch of ${size} requests (${said}): sending at most ${smaller} at a time`,
    );
  }

  /**
   * `indexes` cut into batches no larger than the endpoint takes and costing at most about a second of the plan;
   * `spare` (read ahead of need): at most what the pacer's bucket holds, so none leaves a debt a needed call pays.
   */
  private pieces(indexes: number[], calls: RpcCall[], spare = false): number[][] {
    const maxCost = (spare ? this.pacer.sparePieceCost : this.pacer.maxPieceCost) ?? Number.POSITIVE_INFINITY;
    const pieces: number[][] = [];
    let piece: number[] = [];
    let cost = 0;
    for (const index of indexes) {
      const each = this.pacer.cost([calls[index]!]);
      if (piece.length > 0 && (piece.length >= this.maxBatch || cost + each > maxCost)) {
        pieces.push(piece);
        piece = [];
        cost = 0;
      }
      piece.push(index);
      cost += each;
    }
    if (piece.length > 0) pieces.push(piece);
    return pieces;
  }

  /** One request (retried as a whole while it fails as a whole); per item: its result, or a throttled `Retryable`. */
  private exchange(
    calls: RpcCall[],
    maxAnswerBytes: number | undefined,
    spare = false,
  ): Promise<(unknown | Retryable)[]> {
    return persist(this.throttle, this.options.retry, this.options.signal, async () => {
      const first = this.nextId;
      this.nextId += calls.length;
      return this.paced(
        calls,
        async () => {
          const { status, body } = await this.send(calls, first, maxAnswerBytes, false);
          const replies = this.replies(calls, first, status, body);
          const results = replies.map((reply, i) => {
            try {
              return this.resultOf(reply, calls[i]!.method, status);
            } catch (err) {
              // A throttled item is asked again; any other failure fails the request (retried as a whole, boundedly).
              if (err instanceof Retryable && err.kind === "throttle" && calls.length > 1) return err;
              throw err;
            }
          });
          // Every item throttled: the whole request was, and is asked again as such.
          if (results.length > 0 && results.every((r) => r instanceof Retryable)) throw results[0];
          return results;
        },
        spare,
      );
    });
  }

  /**
   * Runs one request at the paced rate and tells the pacer how it was answered: how many of its calls were
   * throttled (all of them when the request was).
   */
  private async paced<T>(calls: RpcCall[], request: () => Promise<T>, spare = false): Promise<T> {
    await this.pacer.take(calls, spare);
    // A throttle pause that began while this waited for its turn holds it too (none is sent during a Retry-After).
    await this.throttle.turn();
    const sentAt = this.pacer.clock();
    let throttled = 0;
    let scattered = false;
    try {
      const value = await request();
      if (Array.isArray(value)) {
        const refused = value.map((r) => r instanceof Retryable);
        throttled = refused.filter(Boolean).length;
        // Some item served after a throttled one: not a budget running out part-way through the batch.
        scattered = throttled > 0 && refused.lastIndexOf(false) > refused.indexOf(true);
      }
      return value;
    } catch (err) {
      if (err instanceof Retryable && err.kind === "throttle") throttled = calls.length;
      throw err;
    } finally {
      this.pacer.answered(calls.length, throttled, this.pacer.cost(calls), scattered, sentAt);
    }
  }

  /**
   * Posts the calls (ids from `first` on) once; resolves to a 2xx or JSON-RPC-bearing answer, throws `Retryable`
   * for what a retry may fix, `RangeTooSlow` for a slow log range, ChainmailError for the rest.
   */
  private async send(calls: RpcCall[], first: number, maxAnswerBytes: number | undefined, splittable: boolean) {
    const payload = calls.map((c, i) => ({ jsonrpc: "2.0", id: first + i, method: c.method, params: c.params }));
    const method = calls[0]!.method;
    const result = await httpRequest({
      upstream: RPC_UPSTREAM,
      method: "POST",
      url: this.url,
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(calls.length === 1 ? payload[0] : payload),
      timeoutMs: this.options.timeoutMs,
      // Retries are this client's own (persist): one attempt per exchange.
      retry: { ...this.options.retry, maxRetries: 0 },
      shouldRetry: () => false,
      secrets: this.secrets,
      pool: this.options.pool,
      signal: this.options.signal,
      maxBodyBytes: maxAnswerBytes,
    });
    if (result.error) throw this.exchangeFailed(result.error, method, splittable);
    const { status, headers, body } = result.response;
    if (status >= 200 && status < 300) return { status, body };
    return this.errorStatus(calls, status, headers, body, splittable);
  }

  /** What an exchange that brought no answer becomes: a retry, a split, or the error as it is. */
  private exchangeFailed(error: ChainmailError, method: string, splittable: boolean): Error {
    const cause = error.cause;
    if (cause instanceof AnswerTooLarge) return new RpcAnswerTooLarge(method, cause.limit, cause.bytes);
    if (error.code === "aborted" || this.options.signal?.aborted) return error;
    if (error.code === "upstream_timeout" && splittable) {
      return new RangeTooSlow(method, `no answer within ${seconds(this.options.timeoutMs)}`, 0);
    }
    if (error.code === "upstream_unreachable" && error.details.request_sent === false) {
      error.details.method = method;
      return new Retryable("transient", error.shortMessage, undefined, undefined, unreachable(error));
    }
    return new Retryable("transient", error.shortMessage, undefined, undefined, error);
  }

  /**
   * An answer with an error status: a JSON-RPC answer in it is read as such (QuickNode's 413 range cap, a 500 with
   * an error object); otherwise the status decides (thrown).
   */
  private errorStatus(
    calls: RpcCall[],
    status: number,
    headers: Record<string, string | string[] | undefined>,
    body: string,
    splittable: boolean,
  ): { status: number; body: string } {
    const said = `HTTP ${status}${excerpt(body) ? `: ${excerpt(body)}` : ""}`;
    if (status === 429) {
      throw new Retryable("throttle", said, status, retryAfterMs(headers["retry-after"]));
    }
    const json = parseOrUndefined(body);
    if (calls.length > 1 && isBatchRefusal(status, errorOf(json))) throw new Retryable("batch", said, status);
    if (json !== undefined && typeof json === "object") return { status, body };
    const method = calls[0]!.method;
    if (status === 504 && splittable) throw new RangeTooSlow(method, said, status);
    if (status >= 500 || status === 408) {
      throw new Retryable("transient", said, status, undefined, serverError(this.origin, method, said, status));
    }
    throw rejected(this.origin, method, said, status);
  }

  /** The answer's reply to each call, in call order; a garbled answer is `Retryable`. */
  private replies(calls: RpcCall[], first: number, status: number, body: string): RpcReply[] {
    const parsed = parseOrUndefined(body);
    if (parsed === undefined || parsed === null || typeof parsed !== "object") {
      throw garbled(this.origin, calls[0]!.method, status, body);
    }
    const replies = (Array.isArray(parsed) ? parsed : [parsed]) as RpcReply[];
    const byId = new Map<unknown, RpcReply>();
    for (const reply of replies) if (reply && typeof reply === "object") byId.set(reply.id, reply);
    // Every item refused as too many ("batch too large", -32600): the batch's size is refused, not the calls.
    if (calls.length > 1 && replies.length === calls.length) {
      const errors = replies.map((r) => errorOf(r));
      if (errors.every((e) => e !== undefined && isBatchRefusal(status, e))) {
        throw new Retryable("batch", describe((replies[0] as RpcReply).error), status);
      }
    }
    return calls.map((c, i) => {
      // A provider that fails a whole batch answers with one error object without an id.
      const reply = byId.get(first + i) ?? (replies.length === 1 && replies[0]?.error ? replies[0] : undefined);
      if (!reply) throw garbled(this.origin, c.method, status, body, `left ${c.method} unanswered`);
      if (calls.length > 1 && reply.id !== first + i && isBatchRefusal(status, errorOf(reply))) {
        throw new Retryable("batch", describe(reply.error), status);
      }
      return reply;
    });
  }

  /** A reply's result; throws `Retryable` for throttling, `RpcError` for any other error object. */
  private resultOf(reply: RpcReply, method: string, status: number): unknown {
    if (!reply.error) return reply.result;
    const { code, message } = errorOf(reply)!;
    if (isThrottling(code, message)) throw new Retryable("throttle", describe(reply.error), status);
    if (method.startsWith("eth_getBlockBy") && isUnknownBlock(message)) return null;
    if ((code === -32603 || /internal error|try again|temporar/i.test(message)) && !isExecutionFailure(message)) {
      const said = describe(reply.error);
      throw new Retryable("transient", said, status, undefined, new RpcError(code, message, method, status));
    }
    throw new RpcError(code, message, method, status, reply.error.data);
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A JSON-RPC error object's code and message, when it has one. */
function errorOf(value: unknown): { code: number; message: string } | undefined {
  const error = (value as RpcReply | undefined)?.error;
  if (!error || typeof error !== "object") return undefined;
  return {
    code: typeof error.code === "number" ? error.code : -32000,
    message: typeof error.message === "string" ? error.message : "unknown error",
  };
}

function describe(error: RpcReply["error"]): string {
  const { code, message } = errorOf({ error }) ?? { code: -32000, message: "unknown error" };
  return `${message} (JSON-RPC code ${code})`;
}

/** The first characters of an answer, on one line, for messages. */
function excerpt(body: string): string {
  return body.replace(/\s+/g, " ").trim().slice(0, 120);
}

/** An answer that is not JSON-RPC (cut off, garbled, an HTML error page): asked again, reported if it stays so. */
function garbled(origin: string, method: string, status: number, body: string, what?: string): Retryable {
  const said =
    what ??
    `answered what is not a JSON-RPC answer (HTTP ${status}, ${body.length} bytes: ${JSON.stringify(excerpt(body).slice(0, 60))})`;
  return new Retryable(
    "transient",
    said,
    status,
    undefined,
    new ChainmailError(
      "UPSTREAM_BAD_RESPONSE",
      `The JSON-RPC node at ${origin} ${said} to ${method}, again after retries.`,
      {
        hint: "The provider is failing (a cut or garbled answer); try again later or use another endpoint.",
        details: { upstream: RPC_UPSTREAM, status, method },
      },
    ),
  );
}

function serverError(origin: string, method: string, said: string, status: number): ChainmailError {
  return new ChainmailError(
    "UPSTREAM_SERVER_ERROR",
    `The JSON-RPC node at ${origin} failed ${method}: ${said}, again after retries.`,
    {
      hint: "The provider is failing; try again later or use another endpoint.",
      details: { upstream: RPC_UPSTREAM, status, method },
    },
  );
}

function rejected(origin: string, method: string, said: string, status: number): ChainmailError {
  const auth = status === 401 || status === 403;
  return new ChainmailError(
    auth ? "UPSTREAM_AUTH" : "UPSTREAM_REJECTED",
    `The JSON-RPC node at ${origin} refused ${method}: ${said}.`,
    {
      hint: auth
        ? "Check the API key in the --rpc URL (or INDEX_RPC_URL)."
        : "Check the --rpc URL (or INDEX_RPC_URL): it should be the provider's JSON-RPC endpoint.",
      details: { upstream: RPC_UPSTREAM, status, method },
    },
  );
}

/** Nothing reached the node: the one failure that says to check --rpc. */
function unreachable(error: ChainmailError): ChainmailError {
  return new ChainmailError("UPSTREAM_UNREACHABLE", error.shortMessage, {
    hint: "Nothing was sent. Check the --rpc URL (or INDEX_RPC_URL), the network and any proxy settings.",
    details: error.details,
    cause: error,
  });
}

/** `0x1a` → 26. */
export const hexToNumber = (hex: string): number => Number.parseInt(hex, 16);
export const toHex = (n: number | bigint): string => `0x${n.toString(16)}`;
