/**
 * How the JSON-RPC client waits out a provider: throttled calls (HTTP 429, or a 429 inside a 200 answer) are asked
 * again at the pace the pacer (pacer.ts) settles on, which throttling lowers; a `Retry-After` pauses every call of
 * the client for the wait asked. A run of throttling may last until a time budget is spent (minutes by default; a
 * follower has none and waits on). Failures a retry fixes (a cut or garbled answer, a 5xx, a dropped connection)
 * are retried a few times with backoff. Messages say what the provider did and how long chainmail waited.
 */

import type { RetryPolicy } from "../core/config.js";
import { ChainmailError } from "../core/errors.js";
import type { UpstreamPool } from "../core/upstream-pool.js";
import type { Pacer } from "./pacer.js";

/** The upstream name in messages, logs and `details.upstream`. */
export const RPC_UPSTREAM = "JSON-RPC node";

/** A failure of one exchange that waiting and asking again may fix. */
export class Retryable extends Error {
  override name = "Retryable";
  constructor(
    readonly kind: "throttle" | "transient" | "batch",
    /** What the provider did, in its words where it gave some: for messages. */
    readonly said: string,
    readonly status: number | undefined,
    /** The wait a throttling answer asked for (`Retry-After`). */
    readonly retryAfterMs?: number | undefined,
    /** The error to report once retries are spent (a transient failure). */
    readonly final?: Error,
  ) {
    super(said);
  }
}

/** Every call of one client waits its turn behind a `Retry-After` pause; a run of throttling is timed and told. */
export class Throttle {
  private pausedUntil = 0;
  /** When the current run of throttled answers began, and how many there were. */
  private streak: { since: number; answers: number; said: string; lastNotice: number } | undefined;

  constructor(
    private readonly origin: string,
    /** How long a run of throttling may last before the call fails; Infinity for a follower. */
    private readonly budgetMs: number,
    private readonly notice: ((message: string) => void) | undefined,
    private readonly signal: AbortSignal | undefined,
    /** The client's HTTP engine, whose `wait` every pause goes through (a workflow host keeps the timers). */
    private readonly pool: Pick<UpstreamPool, "wait">,
    /** The pace calls go at (throttling has already lowered it): for messages and `Retry-After`. */
    private readonly pacer: Pacer,
  ) {}

  /** Waits until no throttle pause holds. */
  async turn(): Promise<void> {
    for (let wait = this.pausedUntil - Date.now(); wait > 0; wait = this.pausedUntil - Date.now()) {
      await this.sleep(wait);
    }
  }

  /** Waits `ms`, or rejects when the client's signal aborts. */
  sleep(ms: number): Promise<void> {
    return this.pool.wait(ms, this.signal);
  }

  /**
   * A throttled answer: the call is asked again at the paced rate (the pacer lowered it), after the `Retry-After`
   * asked, if any, which holds every call; throws once the budget is spent.
   */
  async throttled(failure: Retryable): Promise<void> {
    const now = Date.now();
    this.streak ??= { since: now, answers: 0, said: failure.said, lastNotice: 0 };
    const streak = this.streak;
    streak.answers++;
    streak.said = failure.said;
    const elapsed = now - streak.since;
    if (elapsed >= this.budgetMs) throw this.exhausted(elapsed);
    if (failure.retryAfterMs !== undefined) {
      // The last wait ends at the budget, so that a last try is made then.
      const wait = Math.min(failure.retryAfterMs, Math.max(0, this.budgetMs - elapsed));
      this.pausedUntil = Math.max(this.pausedUntil, now + wait);
      this.pacer.pausedFor();
    }
    if (now - streak.lastNotice >= 30_000) {
      streak.lastNotice = now;
      const asked =
        failure.retryAfterMs === undefined ? "no Retry-After" : `Retry-After ${seconds(failure.retryAfterMs)}`;
      const rate = this.pacer.currentRate;
      const pace = rate === undefined ? "" : ` at ${Math.round(rate)} ${this.pacer.unit}/s`;
      this.notice?.(
        `the JSON-RPC node at ${this.origin} is throttling (${failure.said}; ${asked}): waiting${pace}, ${seconds(elapsed)} so far`,
      );
    }
    await this.turn();
  }

  /** An answer that was not throttled: a run of throttling is over. */
  served(): void {
    if (!this.streak) return;
    if (this.streak.lastNotice > 0) {
      this.notice?.(
        `the JSON-RPC node at ${this.origin} serves again after ${seconds(Date.now() - this.streak.since)} of throttling`,
      );
    }
    this.streak = undefined;
  }

  private exhausted(elapsed: number): ChainmailError {
    const streak = this.streak!;
    return new ChainmailError(
      "UPSTREAM_RATE_LIMITED",
      `The JSON-RPC node at ${this.origin} kept throttling for ${seconds(elapsed)} (${streak.answers} answers, the last: ${streak.said}); chainmail waited that long before giving up.`,
      {
        hint: "Try again later, read fewer ranges at once (--concurrency), or allow a longer wait (INDEX_RPC_THROTTLE_BUDGET_MS); `chainmail index` without --once waits as long as it takes.",
        details: { upstream: RPC_UPSTREAM, waited_ms: elapsed, throttled_answers: streak.answers },
      },
    );
  }
}

/** Retries `attempt` while it fails in ways a retry fixes: throttling through `throttle`, the rest with backoff. */
export async function persist<T>(
  throttle: Throttle,
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attempt: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  for (let failures = 0; ; ) {
    await throttle.turn();
    try {
      const value = await attempt();
      throttle.served();
      return value;
    } catch (err) {
      if (!(err instanceof Retryable) || err.kind === "batch" || signal?.aborted) throw err;
      if (err.kind === "throttle") {
        await throttle.throttled(err);
        continue;
      }
      throttle.served();
      failures++;
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(30, failures - 1));
      const wait = Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
      if (failures > policy.maxRetries || Date.now() - started + wait > policy.budgetMs) {
        throw err.final ?? err;
      }
      await throttle.sleep(wait);
    }
  }
}

/** `12 s`, `4 min 10 s`, `350 ms`. */
export function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
