/**
 * src/server/metrics.ts on its own, read back from its Prometheus registry as a scrape would: requests by route,
 * node and status; upstream attempts by a short bounded outcome label and retries; the admission and shared-read
 * gauges read at each scrape; the index gauges from one read per scrape, which keep their last values (and say the
 * index is down) when a read fails. Each app's registry is its own.
 */
import { describe, expect, it } from "vitest";
import type { AttemptEvent } from "../../src/core/http.js";
import { createMetrics, indexLag } from "../../src/server/metrics.js";
import type { IndexStatus } from "../../src/sources/own-index/store.js";

/** The value of one sample in the registry's text exposition, or undefined when it is not there. */
async function sample(
  metrics: ReturnType<typeof createMetrics>,
  name: string,
  labels = "",
): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const wanted = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split("\n").find((l) => l.startsWith(wanted));
  return line === undefined ? undefined : Number(line.slice(wanted.length));
}

const attempt = (outcome: AttemptEvent["outcome"], retryInMs?: number): AttemptEvent & { node: string } => ({
  node: "nft-transactions-by-token",
  upstream: "NFTPort",
  attempt: 1,
  outcome,
  durationMs: 12,
  retryInMs,
});

describe("createMetrics", () => {
  it("counts answered requests and their latency by route, node and status", async () => {
    const metrics = createMetrics();
    metrics.observeRequest({ route: "/nodes/:id", node: "email-send", status: 200 }, 0.02);
    metrics.observeRequest({ route: "/nodes/:id", node: "email-send", status: 200 }, 0.3);
    metrics.observeRequest({ route: "/healthz", node: "", status: 503 }, 0.001);
    const labels = 'route="/nodes/:id",node="email-send",status="200"';
    expect(await sample(metrics, "chainmail_http_requests_total", labels)).toBe(2);
    expect(await sample(metrics, "chainmail_http_requests_total", 'route="/healthz",node="",status="503"')).toBe(1);
    expect(await sample(metrics, "chainmail_http_request_duration_seconds_count", labels)).toBe(2);
    expect(await sample(metrics, "chainmail_http_request_duration_seconds_sum", labels)).toBeCloseTo(0.32);
    expect(await sample(metrics, "chainmail_http_request_duration_seconds_bucket", `le="0.025",${labels}`)).toBe(1);
  });

  it("labels each upstream attempt by a bounded outcome and counts those followed by a retry", async () => {
    const metrics = createMetrics();
    metrics.observeAttempt(attempt({ kind: "response", status: 200, headers: {} }));
    metrics.observeAttempt(attempt({ kind: "response", status: 204, headers: {} }));
    metrics.observeAttempt(attempt({ kind: "response", status: 429, headers: {} }, 100));
    metrics.observeAttempt(attempt({ kind: "response", status: 503, headers: {} }, 200));
    metrics.observeAttempt(attempt({ kind: "response", status: 404, headers: {} }));
    metrics.observeAttempt(attempt({ kind: "timeout" }));
    metrics.observeAttempt(attempt({ kind: "network", code: "ECONNRESET", requestSent: true }, 0));
    const of = (outcome: string) =>
      sample(
        metrics,
        "chainmail_upstream_attempts_total",
        `node="nft-transactions-by-token",upstream="NFTPort",outcome="${outcome}"`,
      );
    expect(await of("2xx")).toBe(2);
    expect(await of("429")).toBe(1);
    expect(await of("5xx")).toBe(1);
    expect(await of("4xx")).toBe(1);
    expect(await of("timeout")).toBe(1);
    expect(await of("network_error")).toBe(1);
    // A retry in 0 ms is a retry.
    expect(
      await sample(metrics, "chainmail_upstream_retries_total", 'node="nft-transactions-by-token",upstream="NFTPort"'),
    ).toBe(3);
  });

  it("reads the admission gauges at each scrape", async () => {
    const metrics = createMetrics();
    const state = { inFlight: 3, queued: 7 };
    metrics.watchAdmission(() => state);
    expect(await sample(metrics, "chainmail_http_requests_running")).toBe(3);
    expect(await sample(metrics, "chainmail_http_requests_waiting")).toBe(7);
    state.inFlight = 0;
    expect(await sample(metrics, "chainmail_http_requests_running")).toBe(0);
  });

  it("turns the shared reads' running totals into counters, and reports the cache's bytes", async () => {
    const metrics = createMetrics();
    const stats = { upstream: 5, joined: 2, cached: 1, entries: 4, bytes: 2048 };
    metrics.watchSharedReads(() => stats);
    const how = (name: string) => sample(metrics, "chainmail_upstream_reads_total", `how="${name}"`);
    expect(await how("upstream")).toBe(5);
    stats.upstream = 9;
    stats.cached = 4;
    stats.bytes = 10;
    // Counted once, however often it is scraped.
    expect(await how("upstream")).toBe(9);
    expect(await how("upstream")).toBe(9);
    expect(await how("joined")).toBe(2);
    expect(await how("cached")).toBe(4);
    expect(await sample(metrics, "chainmail_upstream_cache_bytes")).toBe(10);
  });

  it("reads the index once per scrape; a failed read says down and keeps the last values", async () => {
    let reads = 0;
    let status: IndexStatus | Error = { lastBlock: 90, headBlock: 100, headSeenAt: 1, records: 1234 };
    const metrics = createMetrics(async () => {
      reads++;
      if (status instanceof Error) throw status;
      return status;
    });
    const text = await metrics.registry.metrics();
    expect(reads).toBe(1);
    const value = (name: string) => Number(new RegExp(`^${name} (.+)$`, "m").exec(text)?.[1]);
    expect(value("chainmail_index_up")).toBe(1);
    expect(value("chainmail_index_last_block")).toBe(90);
    expect(value("chainmail_index_head_block")).toBe(100);
    expect(value("chainmail_index_lag_blocks")).toBe(10);
    expect(value("chainmail_index_rows")).toBe(1234);

    status = new Error("database locked");
    expect(await sample(metrics, "chainmail_index_up")).toBe(0);
    expect(await sample(metrics, "chainmail_index_last_block")).toBe(90);
    expect(await sample(metrics, "chainmail_index_rows")).toBe(1234);
  });

  it("keeps each app's counts in its own registry", async () => {
    const one = createMetrics();
    const two = createMetrics();
    one.observeRequest({ route: "/metrics", node: "", status: 200 }, 0.01);
    expect(await sample(one, "chainmail_http_requests_total", 'route="/metrics",node="",status="200"')).toBe(1);
    expect(await sample(two, "chainmail_http_requests_total", 'route="/metrics",node="",status="200"')).toBeUndefined();
    // The process metrics carry the prefix.
    expect(await two.registry.metrics()).toMatch(/^chainmail_process_cpu_user_seconds_total /m);
  });
});

describe("indexLag", () => {
  it("is the blocks between the head seen and the index, never negative, null until the head is known", () => {
    expect(indexLag({ lastBlock: 90, headBlock: 100, headSeenAt: 0, records: 0 })).toBe(10);
    expect(indexLag({ lastBlock: 120, headBlock: 100, headSeenAt: 0, records: 0 })).toBe(0);
    expect(indexLag({ lastBlock: null, headBlock: 100, headSeenAt: 0, records: 0 })).toBe(101);
    expect(indexLag({ lastBlock: 5, headBlock: null, headSeenAt: null, records: 0 })).toBeNull();
  });
});
