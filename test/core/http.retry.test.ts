import { describe, expect, it } from "vitest";
import type { RetryPolicy } from "../../src/core/config.js";
import { backoff, retryAfterMs, retryReads, retryUndelivered, scrub } from "../../src/core/http.js";

const policy: RetryPolicy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, budgetMs: 10_000 };
const response = (status: number, retryAfter?: string) => ({
  kind: "response" as const,
  status,
  headers: retryAfter === undefined ? {} : { "retry-after": retryAfter },
});

describe("retryAfterMs", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("reads delay-seconds", () => {
    expect(retryAfterMs("3", now)).toBe(3000);
    expect(retryAfterMs(" 0 ", now)).toBe(0);
    expect(retryAfterMs(["2", "9"], now)).toBe(2000);
  });
  it("reads an HTTP date, relative to now, never negative", () => {
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(retryAfterMs("Wed, 31 Dec 2025 23:59:00 GMT", now)).toBe(0);
  });
  it("ignores what it cannot read", () => {
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs("", now)).toBeUndefined();
    expect(retryAfterMs("soon", now)).toBeUndefined();
    expect(retryAfterMs("-5", now)).toBeUndefined();
  });
});

describe("backoff", () => {
  it("grows exponentially with jitter between half and the full step, capped at maxDelayMs", () => {
    for (let attempt = 1; attempt <= 6; attempt++) {
      const ceiling = Math.min(1000, 100 * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const wait = backoff(attempt, policy, { kind: "timeout" })!;
        expect(wait).toBeGreaterThanOrEqual(ceiling / 2);
        expect(wait).toBeLessThanOrEqual(ceiling);
      }
    }
  });
  it("is jittered: not every wait is the same", () => {
    const waits = new Set(Array.from({ length: 20 }, () => backoff(4, policy, { kind: "timeout" })));
    expect(waits.size).toBeGreaterThan(1);
  });
  it("uses Retry-After when present and within maxDelayMs", () => {
    expect(backoff(1, policy, response(429, "1"))).toBe(1000);
  });
  it("gives up (undefined) when Retry-After asks for more than maxDelayMs", () => {
    expect(backoff(1, policy, response(429, "2"))).toBeUndefined();
  });
});

describe("retry predicates", () => {
  it("reads retry 429, 5xx, timeouts and network errors, never other 4xx or 2xx", () => {
    expect(retryReads(response(429))).toBe(true);
    expect(retryReads(response(503))).toBe(true);
    expect(retryReads({ kind: "timeout" })).toBe(true);
    expect(retryReads({ kind: "network", code: "ECONNRESET", requestSent: true })).toBe(true);
    expect(retryReads(response(404))).toBe(false);
    expect(retryReads(response(422))).toBe(false);
    expect(retryReads(response(200))).toBe(false);
  });
  it("sends retry only what cannot have been delivered", () => {
    expect(retryUndelivered(response(429))).toBe(true);
    expect(retryUndelivered({ kind: "network", code: "ECONNREFUSED", requestSent: false })).toBe(true);
    expect(retryUndelivered({ kind: "network", code: "ECONNRESET", requestSent: true })).toBe(false);
    expect(retryUndelivered(response(500))).toBe(false);
    expect(retryUndelivered({ kind: "timeout" })).toBe(false);
  });
});

describe("scrub", () => {
  it("replaces every occurrence of every secret", () => {
    expect(scrub("key=abcd-1234 again abcd-1234", ["abcd-1234"])).toBe("key=[REDACTED] again [REDACTED]");
  });

  it("redacts a secret that contains another whole, whatever their order", () => {
    // An SMTP password and its URL-encoded form: "pass%" inside "pass%25".
    expect(scrub("url=pass%25 raw=pass%", ["pass%", "pass%25"])).toBe("url=[REDACTED] raw=[REDACTED]");
  });
});
