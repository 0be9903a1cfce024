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
