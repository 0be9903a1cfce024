/**
 * Upstream reads shared between the callers of one process (the HTTP service, where many workflows ask the same
 * pages of one metered key): a pool in front of another that
 * - answers identical GETs in flight with one upstream exchange (single-flight), and
 * - with `ttlMs` > 0, answers a repeat from the last 2xx answer while it is younger than `ttlMs`, counted from when
 *   its exchange began (so no answer given is older than that, whenever the upstream produced it).
 * "Identical" is a SHA-256 digest of the method, the URL and every header, credential headers included: callers
 * with different API keys or tokens never share an exchange or an entry, and no credential is kept as a key.
 * The cache is bounded in entries and bytes (least recently used first out). POSTs (mail, JSON-RPC) pass through.
 *
 * `fresh` is the same pool for a caller that asked for a fresh answer (`Cache-Control: no-cache`): it neither reads
 * the cache nor joins an exchange begun before it, and its answer refreshes the cache for the others.
 */
import { createHash } from "node:crypto";
import type { Answer, Exchange, UpstreamPool } from "../upstream-pool.js";

export interface SharedReadsOptions {
  /** How long a 2xx answer may answer repeats; 0: never (only exchanges in flight are shared). */
  ttlMs: number;
  maxEntries: number;
  /** Bytes of answer bodies (UTF-16 length × 2, what a string costs), at most. */
  maxBytes: number;
  /** The clock, for tests. */
  now?: () => number;
}

export interface SharedReads {
  pool: UpstreamPool;
  fresh: UpstreamPool;
  /** Exchanges made upstream, answers from an exchange in flight, answers from the cache; entries and bytes held. */
  stats(): { upstream: number; joined: number; cached: number; entries: number; bytes: number };
}

interface Entry {
  answer: Answer;
  startedAt: number;
  bytes: number;
}

interface Flight {
  answer: Promise<Answer>;
  startedAt: number;
}

export function sharedReads(inner: UpstreamPool, options: SharedReadsOptions): SharedReads {
  const now = options.now ?? Date.now;
  const cache = new AnswerCache(options, now);
  const flights = new Map<string, Flight>();
  const counts = { upstream: 0, joined: 0, cached: 0 };

  const fly = (key: string, request: Exchange): Flight => {
    const startedAt = now();
    counts.upstream++;
    // The exchange itself is nobody's to cancel (others may be waiting on it); each caller stops waiting on its
    // own signal. The attempt's timeout still bounds it.
    const answer = inner.exchange({ ...request, signal: undefined }).then((a) => {
      cache.keep(key, a, startedAt);
      return a;
    });
    const flight: Flight = { startedAt, answer };
    const forget = () => {
      if (flights.get(key) === flight) flights.delete(key);
    };
    answer.then(forget, forget);
    flights.set(key, flight);
    return flight;
  };

  const shared: UpstreamPool = {
    exchange(request) {
      if (!isShareable(request)) return inner.exchange(request);
      const key = digest(request);
      const cached = cache.get(key);
      if (cached) {
        counts.cached++;
        return Promise.resolve(cached);
      }
      const flying = flights.get(key);
      if (flying) counts.joined++;
      return waitFor((flying ?? fly(key, request)).answer, request.signal);
    },
    wait: (ms, signal) => inner.wait(ms, signal),
  };
  const fresh: UpstreamPool = {
    exchange(request) {
      if (!isShareable(request)) return inner.exchange(request);
      return fly(digest(request), request).answer.then(copy);
    },
    wait: (ms, signal) => inner.wait(ms, signal),
  };
  return { pool: shared, fresh, stats: () => ({ ...counts, entries: cache.size, bytes: cache.bytes }) };
}

/** The 2xx answers kept for repeats, bounded in entries and bytes, least recently used first out. */
class AnswerCache {
  // A Map iterates in insertion order: re-inserting on use makes its first key the least recently used.
  private readonly entries = new Map<string, Entry>();
  bytes = 0;

  constructor(
    private readonly options: SharedReadsOptions,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** A copy of the answer kept for `key`, if it is younger than the TTL. */
  get(key: string): Answer | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.startedAt >= this.options.ttlMs) {
      this.drop(key, entry);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    return copy(entry.answer);
  }

  keep(key: string, answer: Answer, startedAt: number): void {
    const { ttlMs, maxBytes, maxEntries } = this.options;
    if (ttlMs <= 0 || answer.status < 200 || answer.status > 299) return;
    const size = answer.body.length * 2;
    if (size > maxBytes) return;
    const old = this.entries.get(key);
    // An answer whose exchange began before the one kept is not newer.
    if (old && old.startedAt > startedAt) return;
    if (old) this.drop(key, old);
    this.entries.set(key, { answer, startedAt, bytes: size });
    this.bytes += size;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= maxEntries && this.bytes <= maxBytes) break;
      this.drop(oldest, entry);
    }
  }

  private drop(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}

const isShareable = (request: Exchange): boolean => request.method === "GET" && request.body === undefined;

/** The digest of everything that makes a request: method, URL, headers (credentials too), answer size limit. */
function digest(request: Exchange): string {
  const headers = Object.entries(request.headers ?? {})
    .map(([name, value]) => [name.toLowerCase(), value])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
  return createHash("sha256")
    .update(JSON.stringify([request.method, request.url, headers, request.maxBodyBytes ?? null]))
    .digest("base64");
}

/** Each caller gets its own headers object (callers may add to it); the body is a string, shared safely. */
const copy = (answer: Answer): Answer => ({ status: answer.status, headers: { ...answer.headers }, body: answer.body });

function waitFor(answer: Promise<Answer>, signal: AbortSignal | undefined): Promise<Answer> {
  if (!signal) return answer.then(copy);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    signal.addEventListener("abort", stop, { once: true });
    answer.then(
      (a) => {
        signal.removeEventListener("abort", stop);
        resolve(copy(a));
      },
      (err) => {
        signal.removeEventListener("abort", stop);
        reject(err);
      },
    );
  });
}
