/**
 * The upstream pool over an undici dispatcher: undici's own Agent and proxy agents, and anything else that
 * speaks its `dispatch` handler API (node-http-pool.ts).
 */
import type { IncomingHttpHeaders } from "node:http";
import { setImmediate, setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import {
  type Answer,
  AnswerTooLarge,
  AttemptTimeout,
  CutOffAnswer,
  type Exchange,
  splitUrl,
  type UpstreamPool,
} from "../upstream-pool.js";

/** The one method of undici's Dispatcher this pool calls. */
export type DispatchOnly = Pick<Dispatcher, "dispatch">;

/** Announced lengths between these get one buffer up front (small answers come in one chunk anyway). */
const WHOLE_BODY_FROM = 64 * 1024;
const WHOLE_BODY_UP_TO = 256 * 2 ** 20;

export function dispatcherPool(dispatcher: DispatchOnly): UpstreamPool {
  return {
    exchange: (request) => exchange(dispatcher, request),
    wait: (ms, signal) => (ms === 0 ? setImmediate(undefined, { signal }) : sleep(ms, undefined, { signal })),
  };
}

/**
 * One request and its whole answer, through the dispatcher's own handler API rather than undici's `request`: the
 * attempt's deadline is one timer that aborts the exchange, instead of an AbortSignal per attempt (undici listens
 * on a signal through EventTarget, which cost more than the rest of a loopback request), and the body is gathered
 * as it arrives, without a stream in between. Settles once: on the answer, on an error, or when the time is up
 * or the caller's signal fires (an exchange still queued for a connection is aborted as soon as it starts).
 */
function exchange(dispatcher: DispatchOnly, call: Exchange): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const answer = new AnswerGatherer(call, resolve, reject);
    if (call.signal?.aborted) return answer.abort();
    call.signal?.addEventListener("abort", answer.abort);
    const { origin, path } = splitUrl(call.url);
    try {
      dispatcher.dispatch(
        {
          origin,
          path,
          method: call.method,
          headers: call.headers,
          body: call.body,
          // The deadline is the timer; these only stop undici's own longer defaults from interfering.
          headersTimeout: call.timeoutMs + 1_000,
          bodyTimeout: call.timeoutMs + 1_000,
        },
        answer,
      );
    } catch (err) {
      answer.settle(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/** The dispatch handler of one exchange: gathers the answer and settles its promise once. */
class AnswerGatherer implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private cancelled: Error | undefined;
  private settled = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private chunks: Buffer[] = [];
  private received = 0;
  // The body's one buffer when its length is announced: chunks are copied in as they come and dropped, instead
  // of all being kept and then copied again into one (a large answer's bytes held twice).
  private whole: Buffer | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly call: Exchange,
    private readonly resolve: (answer: Answer) => void,
    private readonly reject: (error: Error) => void,
  ) {
    this.timer = setTimeout(() => this.cancel(new AttemptTimeout(this.status, this.received)), call.timeoutMs);
  }

  /** The caller's signal fired (an arrow: it is the abort listener). */
  readonly abort = () => this.cancel(new Error("aborted"));

  settle(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.call.signal?.removeEventListener("abort", this.abort);
    if (error) return this.reject(error);
    // A body shorter than announced keeps what came.
    const bytes = this.whole ? this.whole.subarray(0, this.received) : Buffer.concat(this.chunks);
    this.resolve({ status: this.status, headers: this.headers, body: bytes.toString("utf8") });
  }

  // Settled before the abort: aborting an answer midway reports it as cut off by the network (an answer that
  // trickles in past the deadline is a timeout, not a broken connection).
  private cancel(reason: Error): void {
    this.cancelled = reason;
    this.settle(reason);
    this.controller?.abort(reason);
  }

  onRequestStart(started: Dispatcher.DispatchController): void {
    this.controller = started;
    if (this.cancelled) started.abort(this.cancelled);
    this.chunks = []; // a request retried by the pool starts over
    this.received = 0;
    this.whole = undefined;
  }

  onResponseStart(_: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    const length = Number(headers["content-length"]);
    const max = this.call.maxBodyBytes;
    if (max !== undefined && length > max) this.cancel(new AnswerTooLarge(max, statusCode, length));
    else if (length >= WHOLE_BODY_FROM && length <= WHOLE_BODY_UP_TO) this.whole = Buffer.allocUnsafe(length);
  }

  onResponseData(_: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    const max = this.call.maxBodyBytes;
    if (max !== undefined && this.received > max) {
      this.cancel(new AnswerTooLarge(max, this.status, undefined));
    } else if (this.whole && this.received <= this.whole.length) {
      chunk.copy(this.whole, this.received - chunk.length);
    } else {
      // More than announced (never from a sound server): gather what came, from the start.
      if (this.whole) this.chunks = [this.whole.subarray(0, this.received - chunk.length)];
      this.whole = undefined;
      this.chunks.push(chunk);
    }
  }

  onResponseEnd(): void {
    this.settle(undefined);
  }

  onResponseError(_: Dispatcher.DispatchController, error: Error): void {
    this.settle(this.status ? new CutOffAnswer(error, this.status) : error);
  }
}
