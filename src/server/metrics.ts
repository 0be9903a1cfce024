/**
 * Prometheus metrics (prom-client), one registry per app so several services in one process (tests, the demo)
 * keep their own counts.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { AttemptEvent } from "../core/http.js";
import type { IndexStatus } from "../sources/own-index/index.js";

export interface ServiceMetrics {
  registry: Registry;
  /** Records one answered request. `node` is a known node id or "" (never caller-chosen text). */
  observeRequest(labels: { route: string; node: string; status: number }, seconds: number): void;
  /** Wired to `RunContext.onUpstreamAttempt`. */
  observeAttempt(event: AttemptEvent & { node: string }): void;
  /** Reports the node requests running and waiting in line (admission.ts) at each scrape. */
  watchAdmission(state: () => { inFlight: number; queued: number }): void;
  /** Reports the shared upstream reads' totals at each scrape. */
  watchSharedReads(
    stats: () => { upstream: number; joined: number; cached: number; entries: number; bytes: number },
  ): void;
}

/** A short, bounded label for what an upstream attempt produced. */
function outcomeLabel(event: AttemptEvent): string {
  const { outcome } = event;
  if (outcome.kind === "timeout") return "timeout";
  if (outcome.kind === "network") return "network_error";
  if (outcome.status === 429) return "429";
  return `${Math.floor(outcome.status / 100)}xx`;
}

/**
 * `indexStatus`, when the service reads the own index: the index gauges are read from it at each scrape (one
 * small query), so every replica reports the shared index as it is.
 */
export function createMetrics(indexStatus?: () => Promise<IndexStatus>): ServiceMetrics {
  const registry = new Registry();
  if (indexStatus) indexGauges(registry, indexStatus);
  collectDefaultMetrics({ register: registry, prefix: "chainmail_" });
  const requests = new Counter({
    name: "chainmail_http_requests_total",
    help: "HTTP requests answered, by route, node and status",
    labelNames: ["route", "node", "status"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "chainmail_http_request_duration_seconds",
    help: "Time from receiving a request to answering it, by route, node and status",
    labelNames: ["route", "node", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const attempts = new Counter({
    name: "chainmail_upstream_attempts_total",
    help: "Upstream HTTP attempts made by nodes, by node, upstream and outcome",
    labelNames: ["node", "upstream", "outcome"] as const,
    registers: [registry],
  });
  const retries = new Counter({
    name: "chainmail_upstream_retries_total",
    help: "Upstream attempts that were followed by a retry, by node and upstream",
    labelNames: ["node", "upstream"] as const,
    registers: [registry],
  });
  return {
    registry,
    watchAdmission: (state) => admissionGauges(registry, state),
    watchSharedReads: (stats) => sharedReadsMetrics(registry, stats),
    observeRequest({ route, node, status }, seconds) {
      const labels = { route, node, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    observeAttempt(event) {
      attempts.inc({ node: event.node, upstream: event.upstream, outcome: outcomeLabel(event) });
      if (event.retryInMs !== undefined) retries.inc({ node: event.node, upstream: event.upstream });
    },
  };
}

function admissionGauges(registry: Registry, state: () => { inFlight: number; queued: number }): void {
  new Gauge({
    name: "chainmail_http_requests_running",
    help: "Node requests running now (at most CHAINMAIL_MAX_IN_FLIGHT)",
    registers: [registry],
    collect() {
      this.set(state().inFlight);
    },
  });
  new Gauge({
    name: "chainmail_http_requests_waiting",
    help: "Node requests waiting in line now (at most CHAINMAIL_MAX_QUEUED)",
    registers: [registry],
    collect() {
      this.set(state().queued);
    },
  });
}

function sharedReadsMetrics(registry: Registry, stats: Parameters<ServiceMetrics["watchSharedReads"]>[0]): void {
  const seen = { upstream: 0, joined: 0, cached: 0 };
  new Counter({
    name: "chainmail_upstream_reads_total",
    help: "Upstream reads (NFTPort, OpenSea pages) by how they were answered: upstream, joined (an identical read in flight), cached",
    labelNames: ["how"] as const,
    registers: [registry],
    collect() {
      const now = stats();
      for (const how of ["upstream", "joined", "cached"] as const) {
        this.inc({ how }, now[how] - seen[how]);
        seen[how] = now[how];
      }
    },
  });
  new Gauge({
    name: "chainmail_upstream_cache_bytes",
    help: "Bytes of upstream answers held by the cache (CHAINMAIL_CACHE_TTL_MS)",
    registers: [registry],
    collect() {
      this.set(stats().bytes);
    },
  });
}

function indexGauges(registry: Registry, indexStatus: () => Promise<IndexStatus>): void {
  // One read per scrape, shared by the gauges (prom-client collects them at the same time).
  let reading: Promise<IndexStatus | undefined> | undefined;
  const read = () => {
    reading ??= indexStatus()
      .catch(() => undefined)
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const gauge = (name: string, help: string, value: (status: IndexStatus | undefined) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      // Every worker of a service reads the same index: its figures are taken once, not added up (workers.ts).
      aggregator: "first",
      async collect() {
        const v = value(await read());
        if (v !== null) this.set(v);
      },
    });
  // The others keep their last values when a read fails: this one says whether they are current.
  gauge("chainmail_index_up", "1 when the last scrape could read the own index, else 0", (s) => (s ? 1 : 0));
  gauge("chainmail_index_last_block", "The last block fully in the own index", (s) => s?.lastBlock ?? null);
  gauge("chainmail_index_head_block", "The chain head the indexer last saw", (s) => s?.headBlock ?? null);
  gauge("chainmail_index_lag_blocks", "Blocks between the chain head the indexer last saw and the index", (s) =>
    s ? indexLag(s) : null,
  );
  gauge("chainmail_index_rows", "Records in the own index", (s) => s?.records ?? null);
}

/** Blocks the index is behind the head its writer last saw (null until both are known). */
export function indexLag(status: IndexStatus): number | null {
  if (status.headBlock === null) return null;
  return Math.max(0, status.headBlock - (status.lastBlock ?? -1));
}
