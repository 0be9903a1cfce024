/**
 * Where every upstream call goes: one interface, one implementation per HTTP engine (undici's dispatchers,
 * Node's own client, a workflow host's request helper), chosen in one place (`pools/choose.ts` for a process of
 * its own; a host builds its own and passes it in the config). core/http.ts adds what every engine shares on top:
 * retries, backoff, secret scrubbing, the errors a person can act on.
 *
 * This file imports nothing at run time but core/errors.ts (which imports nothing): a host that forbids timers,
 * `process` or other HTTP libraries inside a package (n8n) still bundles it and core/http.ts.
 */
import { ChainmailError } from "./errors.js";

/** One request as an engine carries it out. */
export interface Exchange {
  method: "GET" | "POST";
  url: string;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  /** The attempt's deadline: past it the engine gives up and rejects with `AttemptTimeout`. */
  timeoutMs: number;
  /** Past this many bytes of answer the engine gives up and rejects with `AnswerTooLarge`. */
  maxBodyBytes?: number | undefined;
  /** Cancels the exchange; the engine then rejects (any error). */
  signal?: AbortSignal | undefined;
}

/** A whole answer, any status. Header names in lower case. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface UpstreamPool {
  /**
   * One request and its whole answer, whatever the status. Rejects with `AttemptTimeout`, `AnswerTooLarge`,
   * `CutOffAnswer` (the connection broke midway through the body), or the connection's error carrying its code
   * (`ECONNREFUSED`, `ECONNRESET`, …) on itself or a `cause`.
   */
  exchange(request: Exchange): Promise<Answer>;
  /** Resolves after `ms` (0: once pending I/O has run), or rejects when `signal` aborts. Between retries. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * An attempt cut off at its deadline: before the answer began (`status` 0) or while its body came in (`received`
 * bytes of it by then). An answer that trickles in past the deadline is a timeout, never a broken connection.
 * core/http.ts words it for the caller.
 */
export class AttemptTimeout extends ChainmailError {
  override name = "AttemptTimeout";
  constructor(
    readonly status = 0,
    readonly received = 0,
  ) {
    super("UPSTREAM_TIMEOUT", "the attempt's time was up", { details: { status, received_bytes: received } });
  }
}

/** An answer cut off at `Exchange.maxBodyBytes`; `bytes` is its announced length, when it had one. */
export class AnswerTooLarge extends ChainmailError {
  override name = "AnswerTooLarge";
  constructor(
    readonly limit: number,
    readonly status: number,
    readonly bytes: number | undefined,
  ) {
    super(
      "UPSTREAM_BAD_RESPONSE",
      `the answer is larger than ${limit} bytes${bytes === undefined ? "" : ` (${bytes})`}`,
      {
        details: { status, max_bytes: limit, ...(bytes === undefined ? {} : { bytes }) },
      },
    );
  }
}

/**
 * An answer that broke off after its status line: the connection failed midway through the body. The socket's
 * own error (its `code`, e.g. ECONNRESET) is the `cause`.
 */
export class CutOffAnswer extends ChainmailError {
  override name = "CutOffAnswer";
  constructor(
    override readonly cause: Error,
    readonly status: number,
  ) {
    super("UPSTREAM_UNREACHABLE", cause.message, { cause, details: { status, truncated: true } });
  }
}

/** `http://host:port/path?query` as undici's origin and path, without parsing the URL twice per request. */
export function splitUrl(url: string): { origin: string; path: string } {
  const slash = url.indexOf("/", url.indexOf("//") + 2);
  return slash === -1 ? { origin: url, path: "/" } : { origin: url.slice(0, slash), path: url.slice(slash) };
}
