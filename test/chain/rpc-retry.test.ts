/**
 * How the JSON-RPC client waits out a provider (src/chain/rpc-retry.ts), on its own: `persist` retries what a retry
 * fixes, a bounded number of times within a time budget, throttling for as long as the throttle budget allows, and
 * nothing else; a `Retry-After` holds every call of the client; the notices say what the provider did and how long
 * chainmail waited. Real timers, a real pacer and the client's real HTTP engine's `wait`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Pacer } from "../../src/chain/pacer.js";
import { PROVIDER } from "../../src/chain/providers.js";
import { persist, Retryable, seconds, Throttle } from "../../src/chain/rpc-retry.js";
import type { RetryPolicy } from "../../src/core/config.js";
import { ChainmailError } from "../../src/core/errors.js";
import { testConfig } from "../support/helpers.js";

const pool = testConfig().pool;
const policy: RetryPolicy = { maxRetries: 3, baseDelayMs: 2, maxDelayMs: 10, budgetMs: 5_000 };

function throttle(budgetMs = Number.POSITIVE_INFINITY, signal?: AbortSignal) {
  const notices: string[] = [];
  const pacer = new Pacer({ provider: PROVIDER.generic, wait: (ms) => pool.wait(ms, signal) });
  return {
    notices,
    throttle: new Throttle("https://node.example", budgetMs, (m) => notices.push(m), signal, pool, pacer),
  };
}

/** An attempt failing with each of `failures` in turn, then answering "served"; counts its attempts. */
function attempts(failures: Error[]) {
  const counted = { n: 0 };
  const attempt = async () => {
    const failure = failures[counted.n++];
    if (failure) throw failure;
    return "served";
  };
  return { counted, attempt };
}

const transient = (n: number) => new Retryable("transient", `HTTP 502 #${n}`, 502, undefined, new Error(`final ${n}`));
const throttled = (retryAfterMs?: number) => new Retryable("throttle", "HTTP 429", 429, retryAfterMs);

describe("persist", () => {
  it("retries a transient failure up to maxRetries times, then throws the failure's final error", async () => {
    for (const failing of [0, 1, 3]) {
      const { counted, attempt } = attempts(Array.from({ length: failing }, (_, i) => transient(i)));
      expect(await persist(throttle().throttle, policy, undefined, attempt)).toBe("served");
      expect(counted.n).toBe(failing + 1);
    }
    const { counted, attempt } = attempts(Array.from({ length: 10 }, (_, i) => transient(i)));
    await expect(persist(throttle().throttle, policy, undefined, attempt)).rejects.toThrow("final 3");
    expect(counted.n).toBe(policy.maxRetries + 1);
  });

  it("starts no retry past its time budget", async () => {
    const { counted, attempt } = attempts(Array.from({ length: 10 }, (_, i) => transient(i)));
    const slow = { maxRetries: 100, baseDelayMs: 40, maxDelayMs: 40, budgetMs: 100 };
    const started = Date.now();
    await expect(persist(throttle().throttle, slow, undefined, attempt)).rejects.toThrow(/final \d/);
    expect(Date.now() - started).toBeLessThan(150);
    expect(counted.n).toBeLessThanOrEqual(5);
  });

  it("throws at once what a retry cannot fix: any other error, and a batch refused for its size", async () => {
    for (const failure of [new Error("bad request"), new Retryable("batch", "batch too large", 413)]) {
      const { counted, attempt } = attempts([failure]);
      await expect(persist(throttle().throttle, policy, undefined, attempt)).rejects.toBe(failure);
      expect(counted.n).toBe(1);
    }
  });

  it("asks again through throttling however long it lasts, not counting it against maxRetries", async () => {
    const { counted, attempt } = attempts(Array.from({ length: 8 }, () => throttled(1)));
    expect(await persist(throttle().throttle, { ...policy, maxRetries: 0 }, undefined, attempt)).toBe("served");
    expect(counted.n).toBe(9);
  });

  it("gives up on throttling once its budget is spent, saying how long and how often", async () => {
    const { counted, attempt } = attempts(Array.from({ length: 1_000 }, () => throttled(20)));
    const error = await persist(throttle(100).throttle, policy, undefined, attempt).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainmailError);
    expect(error).toMatchObject({ code: "upstream_rate_limited", details: { throttled_answers: counted.n } });
    expect((error as ChainmailError).details.waited_ms).toBeGreaterThanOrEqual(100);
    expect(counted.n).toBeGreaterThan(2);
  });

  it("stops retrying once its signal aborts", async () => {
    const abort = new AbortController();
    const failure = transient(0);
    let n = 0;
    const attempt = async () => {
      n++;
      abort.abort();
      throw failure;
    };
    await expect(persist(throttle(undefined, abort.signal).throttle, policy, abort.signal, attempt)).rejects.toBe(
      failure,
    );
    expect(n).toBe(1);
  });
});

describe("the throttle", () => {
  it("holds every call of the client for the Retry-After asked, and tells once, then that calls are served again", async () => {
    const { throttle: shared, notices } = throttle();
    const started = Date.now();
    const waiting = shared.throttled(throttled(300));
    // Another call of the same client waits its turn behind the pause too.
    await Promise.all([waiting, shared.turn()]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(notices).toEqual([
      "the JSON-RPC node at https://node.example is throttling (HTTP 429; Retry-After 300 ms): waiting, 0 ms so far",
    ]);
    shared.served();
    expect(notices[1]).toMatch(
      /^the JSON-RPC node at https:\/\/node\.example serves again after \d+ ms of throttling$/,
    );
    // Served without a run of throttling: nothing to tell.
    shared.served();
    expect(notices).toHaveLength(2);
  });

  it("waits no longer than what is left of its budget, so that a last try is made then", async () => {
    const { throttle: budgeted } = throttle(200);
    const started = Date.now();
    await budgeted.throttled(throttled(60_000));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});

describe("seconds", () => {
  it("says milliseconds under a second, seconds under a minute, then minutes and seconds", () => {
    expect([seconds(0), seconds(350.4), seconds(999), seconds(1_000), seconds(12_400), seconds(250_000)]).toEqual([
      "0 ms",
      "350 ms",
      "999 ms",
      "1 s",
      "12 s",
      "4 min 10 s",
    ]);
    fc.assert(
      fc.property(fc.integer({ min: 60_000, max: 10 ** 9 }), (ms) => {
        const [, minutes, rest] = /^(\d+) min (\d+) s$/.exec(seconds(ms))!;
        expect(Number(minutes) * 60 + Number(rest)).toBe(Math.round(ms / 1000));
        expect(Number(rest)).toBeLessThan(60);
      }),
    );
  });
});
