/**
 * `chainmail serve` as several processes (CHAINMAIL_WORKERS): one process answers on one core, so a host with cores
 * to spare runs more, sharing the port (node:cluster; each worker accepts connections from the one socket). The
 * primary only supervises: it starts one worker and, once that one listens (so a bad setting is reported once, by
 * it), the others; it starts a worker again when one dies after it listened, ends the service when one cannot
 * start, passes SIGTERM/SIGINT on, and exits when all have.
 *
 * Each worker is a whole service with its own line (admission), its own upstream cache and its own connections;
 * /metrics, answered by any of them, reports all of them: the worker asks the primary, which gathers the registry of
 * every worker that listens and adds them up (prom-client's aggregation; the index gauges are taken once).
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

/** One worker's registry as JSON, what the aggregation adds up. */
type RegistryJson = Awaited<ReturnType<Registry["getMetricsAsJSON"]>>;

/** Messages between a worker and the primary. */
const LISTENING = "chainmail:listening";
const METRICS_ASKED = "chainmail:metrics?";
const METRICS = "chainmail:metrics";
const REGISTRY_ASKED = "chainmail:registry?";
const REGISTRY = "chainmail:registry";
/** A worker that dies this soon after it started is started again only after this long. */
const RESTART_AFTER_MS = 1_000;
/** How long the metrics of every worker may take to gather. */
const GATHER_TIMEOUT_MS = 5_000;

type Message = { type?: unknown; url?: unknown; id?: unknown; text?: unknown; error?: unknown; metrics?: unknown };

/** Whether this process is one of `chainmail serve`'s workers (started by `superviseWorkers`). */
export function isServeWorker(): boolean {
  return cluster.isWorker && process.env.CHAINMAIL_SERVE_WORKER === "1";
}

/** In a worker: tells the primary the service listens at `url` (it says so once for all). */
export function reportListening(url: string): void {
  process.send?.({ type: LISTENING, url });
}

/** In a worker: the metrics of every worker, added up, in Prometheus' text format; `registry` is this worker's. */
export function clusterMetrics(registry: Registry): () => Promise<string> {
  const asked = new Map<number, (message: Message) => void>();
  let next = 0;
  process.on("message", (message: Message) => {
    if (message?.type === REGISTRY_ASKED) {
      registry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: REGISTRY, id: message.id, metrics }),
        (err: Error) => process.send?.({ type: REGISTRY, id: message.id, error: err.message }),
      );
    } else if (message?.type === METRICS && typeof message.id === "number") {
      asked.get(message.id)?.(message);
      asked.delete(message.id);
    }
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      asked.set(id, (message) =>
        typeof message.text === "string"
          ? resolve(message.text)
          : reject(new Error(`the workers' metrics could not be gathered: ${String(message.error)}`)),
      );
      process.send?.({ type: METRICS_ASKED, id });
    });
}

/**
 * In the primary: runs `count` workers (this same command, in processes of their own) until a signal, or until one
 * cannot start. `say` writes a line for the operator. Resolves with the exit code, once every worker has exited.
 */
export function superviseWorkers(count: number, say: (line: string) => void): Promise<number> {
  // Each worker accepts its connections itself (unless NODE_CLUSTER_SCHED_POLICY says otherwise): handed round by
  // the primary instead, a new connection waited behind the handing of others (the slowest answer 1.2-1.7 s against
  // 0.3-0.7 s so, with 500 connections on 2 cores; BENCHMARKS.md), at the same throughput.
  if (process.env.NODE_CLUSTER_SCHED_POLICY === undefined) cluster.schedulingPolicy = cluster.SCHED_NONE;
  return new Promise((resolve) => {
    const supervisor = new Supervisor(count, say, resolve);
    cluster.on("message", (worker, message: Message) => supervisor.heard(worker, message));
    cluster.on("exit", (worker, code, signal) => supervisor.exited(worker, code, signal));
    process.once("SIGTERM", () => supervisor.stop("SIGTERM"));
    process.once("SIGINT", () => supervisor.stop("SIGINT"));
    supervisor.fork();
  });
}

class Supervisor {
  private readonly workers = new Map<Worker, { startedAt: number; listening: boolean }>();
  private readonly gather = gatherer(() =>
    [...this.workers].filter(([, state]) => state.listening).map(([worker]) => worker),
  );
  private stopping = false;
  private announced = false;
  private exitCode = 0;

  constructor(
    private readonly count: number,
    private readonly say: (line: string) => void,
    private readonly finish: (code: number) => void,
  ) {}

  fork(): void {
    if (this.stopping) return;
    this.workers.set(cluster.fork({ CHAINMAIL_SERVE_WORKER: "1" }), { startedAt: Date.now(), listening: false });
  }

  /** Stops every worker (a signal, or `undefined` when one could not start), then finishes. */
  stop(signal: NodeJS.Signals | undefined): void {
    if (this.stopping) return;
    this.stopping = true;
    if (signal) this.say(`${signal}, finishing requests in flight`);
    for (const worker of this.workers.keys()) worker.process.kill("SIGTERM");
    if (this.workers.size === 0) this.finish(this.exitCode);
  }

  heard(worker: Worker, message: Message): void {
    const state = this.workers.get(worker);
    if (message?.type === LISTENING && state && !state.listening) {
      state.listening = true;
      if (this.announced || this.stopping) return;
      // The first worker listens: the settings are sound, the others start now.
      this.announced = true;
      const url = String(message.url);
      this.say(`listening on ${url} (API page: ${url}/docs), ${this.count} workers`);
      for (let i = 1; i < this.count; i++) this.fork();
    } else if (message?.type === METRICS_ASKED) {
      const reply = (answer: { text: string } | { error: string }) =>
        worker.isConnected() && worker.send({ type: METRICS, id: message.id, ...answer });
      this.gather().then(
        (text) => reply({ text }),
        (err: Error) => reply({ error: err.message }),
      );
    } else if (message?.type === REGISTRY) this.gather.answer(worker, message);
  }

  exited(worker: Worker, code: number, signal: string): void {
    const state = this.workers.get(worker);
    this.workers.delete(worker);
    this.gather.gone(worker);
    if (!this.stopping && !state?.listening) {
      // A worker that could not start (it said why on stderr): the next would fail alike.
      this.exitCode = code || 1;
      this.stop(undefined);
    } else if (!this.stopping) {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      this.say(`a worker (pid ${worker.process.pid}) exited with ${how}; starting another`);
      setTimeout(() => this.fork(), Math.max(0, (state?.startedAt ?? 0) + RESTART_AFTER_MS - Date.now()));
    } else if (code !== 0 && signal !== "SIGTERM" && signal !== "SIGINT") this.exitCode ||= 1;
    if (this.stopping && this.workers.size === 0) this.finish(this.exitCode);
  }
}

/**
 * Gathers the registries of the workers that listen (one that is still starting has none to give yet) and adds
 * them up; `answer` and `gone` are fed the workers' replies and exits.
 */
function gatherer(listening: () => Worker[]) {
  let next = 0;
  const rounds = new Map<number, { waiting: Set<Worker>; got: RegistryJson[]; settle(error?: Error): void }>();
  const gather = () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const waiting = new Set(listening());
      const timer = setTimeout(() => round.settle(new Error("a worker did not answer in time")), GATHER_TIMEOUT_MS);
      const round = {
        waiting,
        got: [] as RegistryJson[],
        settle(error?: Error) {
          if (!rounds.delete(id)) return;
          clearTimeout(timer);
          if (error) reject(error);
          else AggregatorRegistry.aggregate(round.got).metrics().then(resolve, reject);
        },
      };
      rounds.set(id, round);
      for (const worker of waiting) worker.send({ type: REGISTRY_ASKED, id });
      if (waiting.size === 0) round.settle();
    });
  const done = (id: unknown, worker: Worker) => {
    const round = rounds.get(id as number);
    if (round?.waiting.delete(worker) && round.waiting.size === 0) round.settle();
  };
  return Object.assign(gather, {
    answer(worker: Worker, message: Message) {
      const round = rounds.get(message.id as number);
      if (!round?.waiting.has(worker)) return;
      if (typeof message.error === "string") round.settle(new Error(message.error));
      else {
        round.got.push(message.metrics as RegistryJson);
        done(message.id, worker);
      }
    },
    // A worker that exits mid-round is not waited for (its counts leave the sums, as a restarted process's do).
    gone(worker: Worker) {
      for (const id of [...rounds.keys()]) done(id, worker);
    },
  });
}
