/**
 * What the benchmarks share: wall time and peak memory of a run, contenders measured side by side in interleaved
 * rounds (medians), processes timed with their peak RSS, and local upstreams in processes of their own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** Wall time and peak memory of one async run, for the benchmarks (memory sampled every 5 ms). */
export interface Measured<T> {
  value: T;
  wall: number;
  /** e.g. `204 MiB (+43)`: the peak and its growth over the start. */
  rss: string;
  heap: string;
}

export async function measure<T>(run: () => Promise<T>): Promise<Measured<T>> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  let peakRss = base.rss;
  let peakHeap = base.heapUsed;
  const sampler = setInterval(() => {
    const now = process.memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 5);
  const start = performance.now();
  try {
    const value = await run();
    const wall = performance.now() - start;
    return { value, wall, rss: mib(peakRss, base.rss), heap: mib(peakHeap, base.heapUsed) };
  } finally {
    clearInterval(sampler);
  }
}

const mib = (peak: number, from: number) =>
  `${(peak / 2 ** 20).toFixed(0)} MiB (+${((peak - from) / 2 ** 20).toFixed(0)})`;

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * Runs every contender once per round, the order rotating from round to round so that none always runs first
 * or last on a machine whose load drifts; returns each one's figures by name, one per round.
 */
export async function interleaved<K extends string, T>(
  rounds: number,
  contenders: Record<K, () => Promise<T>>,
): Promise<Record<K, T[]>> {
  const names = Object.keys(contenders) as K[];
  const out = Object.fromEntries(names.map((n) => [n, [] as T[]])) as Record<K, T[]>;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      out[name].push(await contenders[name]());
    }
  }
  return out;
}

export interface ProcessRun {
  ms: number;
  /** CPU time of the process, user + system (GNU time's %U + %S): less swayed by other load than the wall time. */
  cpuMs: number;
  /** Peak resident set size of the process (GNU time's %M). */
  rssMiB: number;
  /** Times `count` (if given) occurs in its standard output. */
  counted: number;
  stdoutBytes: number;
  /** The last line it printed (a summary the process reports about itself). */
  lastLine: string;
}

/**
 * Runs one process to its end under GNU time: wall time from spawn to exit, peak RSS, and how often `count`
 * occurs in what it printed (stdout is read as it comes and not kept). Fails when it exits non-zero.
 */
export function runProcess(
  argv: readonly string[],
  options: { env?: Record<string, string>; count?: string } = {},
): Promise<ProcessRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("/usr/bin/time", ["-f", "maxrss_kb=%M cpu_s=%U+%S", ...argv], {
      env: { PATH: process.env.PATH ?? "", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let counted = 0;
    let bytes = 0;
    let tail = "";
    let end = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      bytes += Buffer.byteLength(chunk);
      end = (end + chunk).slice(-4096);
      if (!options.count) return;
      // Keep the end of the previous chunk so that a needle split across two chunks is still found once.
      const text = tail + chunk;
      counted += text.split(options.count).length - 1;
      tail = text.slice(-(options.count.length - 1));
      if (tail.includes(options.count)) tail = "";
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = performance.now() - started;
      const rss = /maxrss_kb=(\d+)/.exec(stderr);
      const cpu = /cpu_s=([\d.]+)\+([\d.]+)/.exec(stderr);
      if (code !== 0 || !rss) return reject(new Error(`${argv.join(" ")} exited ${code}: ${stderr.slice(0, 2000)}`));
      const lastLine = end.trimEnd().split("\n").at(-1) ?? "";
      const cpuMs = cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : Number.NaN;
      resolve({ ms, cpuMs, rssMiB: Number(rss[1]) / 1024, counted, stdoutBytes: bytes, lastLine });
    });
  });
}

export interface Upstream {
  url: string;
  close(): Promise<void>;
}

/** Starts a local upstream (bench/upstream.ts) in a process of its own. */
export async function startUpstream(kind: "nftport" | "mailjet" | "opensea", options: object = {}): Promise<Upstream> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "upstream.ts"), kind, JSON.stringify(options)],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  const exited = once(child, "exit").then(([code]) => {
    throw new Error(`the ${kind} upstream exited (${code}) before it listened`);
  });
  const [first] = (await Promise.race([once(lines, "line"), exited])) as [string];
  exited.catch(() => {}); // it will exit when closed
  lines.close();
  const { url } = JSON.parse(first) as { url: string };
  return {
    url,
    close: async () => {
      const exited = once(child, "exit");
      child.stdin!.end();
      await exited;
    },
  };
}

/** `a / b` printed for a table, e.g. `1.07×`. */
export const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;

/** The machine's load average, to print next to figures measured on a shared machine. */
export async function loadAverage(): Promise<string> {
  const { loadavg } = await import("node:os");
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

/**
 * `a / b` from figures measured in the same interleaved rounds: the median of each round's own ratio, so that a
 * slow stretch of a shared machine weighs on both sides of a ratio instead of on one median.
 */
export const pairedRatio = (a: readonly number[], b: readonly number[]): number => median(a.map((x, i) => x / b[i]!));
