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
    let controller: Dispatcher.DispatchController | undefined;
    let cancelled: Error | undefined;
    let settled = false;
    let status = 0;
    let headers: IncomingHttpHeaders = {};
    let chunks: Buffer[] = [];
    let received = 0;
    // The body's one buffer when its length is announced: chunks are copied in as they come and dropped, instead
    // of all being kept and then copied again into one (a large answer's bytes held twice).
    let whole: Buffer | undefined;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      call.signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else {
        // A body shorter than announced keeps what came.
        const bytes = whole ? whole.subarray(0, received) : Buffer.concat(chunks);
        resolve({ status, headers, body: bytes.toString("utf8") });
      }
    };
    // Settled before the abort: aborting an answer midway reports it as cut off by the network (an answer that
    // trickles in past the deadline is a timeout, not a broken connection).
    const cancel = (reason: Error) => {
      cancelled = reason;
      settle(reason);
      controller?.abort(reason);
    };
    const onAbort = () => cancel(new Error("aborted"));
    const timer = setTimeout(() => cancel(new AttemptTimeout(status, received)), call.timeoutMs);
    if (call.signal?.aborted) return onAbort();
    call.signal?.addEventListener("abort", onAbort);
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
        {
          onRequestStart(started) {
            controller = started;
            if (cancelled) started.abort(cancelled);
            chunks = []; // a request retried by the pool starts over
            received = 0;
            whole = undefined;
          },
          onResponseStart(_, statusCode, responseHeaders) {
            status = statusCode;
            headers = responseHeaders;
            const length = Number(responseHeaders["content-length"]);
            if (call.maxBodyBytes !== undefined && length > call.maxBodyBytes) {
              cancel(new AnswerTooLarge(call.maxBodyBytes, status, length));
            } else if (length >= WHOLE_BODY_FROM && length <= WHOLE_BODY_UP_TO) whole = Buffer.allocUnsafe(length);
          },
          onResponseData(_, chunk) {
            received += chunk.length;
            if (call.maxBodyBytes !== undefined && received > call.maxBodyBytes) {
              cancel(new AnswerTooLarge(call.maxBodyBytes, status, undefined));
            } else if (whole && received <= whole.length) {
              chunk.copy(whole, received - chunk.length);
            } else {
              // More than announced (never from a sound server): gather what came, from the start.
              if (whole) chunks = [whole.subarray(0, received - chunk.length)];
              whole = undefined;
              chunks.push(chunk);
            }
          },
          onResponseEnd() {
            settle(undefined);
          },
          onResponseError(_, error) {
            settle(status ? new CutOffAnswer(error, status) : error);
          },
        },
      );
    } catch (err) {
      settle(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
