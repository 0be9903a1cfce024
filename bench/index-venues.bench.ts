/**
 * What each marketplace venue added to the index costs (issue 25), this build against a baseline build (another
 * checkout's `dist/`, e.g. main before the venues came, built with `npm run build`), side by side:
 *
 * 1. Ingestion: `chainmail index --once` of each build over the same anvil holding BENCH_INDEX_EVENTS ERC-721 mints
 *    (default 100,000; the chain index.bench.ts mines and caches), each into a new SQLite file; whole chain, no
 *    address filter, so every venue's topics are asked for. Wall time and the indexer's CPU time (user + system,
 *    less swayed by a shared machine's load), interleaved rounds, medians and the median of each round's ratio.
 * 2. Decoding: each build's venue table over every log of the real mainnet transactions in
 *    test/fixtures/index-mainnet (each with its transaction's logs, as the indexer hands them over): looked up by
 *    topic, and decoded when a venue reads it; in the same process, rounds interleaved; time per log.
 *
 *   BENCH_BASELINE_DIST=/path/to/baseline/dist npm run bench -- index-venues
 *
 * BENCH_VENUES_ROUNDS sets the rounds (default 7).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { RawLog } from "../src/ingest/decode.js";
import type { VenueTable } from "../src/ingest/venues/index.js";
import { chainOf } from "./index.bench.js";
import { interleaved, loadAverage, median, ratio, runProcess } from "./measure.js";

const EVENTS = Number(process.env.BENCH_INDEX_EVENTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_VENUES_ROUNDS ?? 7);
const DECODE_REPEAT = 2_000;
const here = import.meta.dirname;
const THIS_DIST = join(here, "..", "dist");
const FIXTURES = join(here, "..", "test", "fixtures", "index-mainnet");
const dir = join(here, "..", ".bench-tmp", "index-venues");

export default async function bench(): Promise<void> {
  const baseline = process.env.BENCH_BASELINE_DIST;
  if (!baseline || !existsSync(join(baseline, "cli", "main.js"))) {
    console.log(
      "  skipped: set BENCH_BASELINE_DIST to a baseline build's dist/ (e.g. main's, built with npm run build)",
    );
    return;
  }
  const builds = { this: THIS_DIST, baseline } as const;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const chain = await chainOf(EVENTS);
  try {
    const records = `"records":${EVENTS}`;
    const runs = await interleaved(ROUNDS, {
      this: () => runProcess(indexArgv(builds.this, chain.rpcUrl, "this"), { count: records }),
      baseline: () => runProcess(indexArgv(builds.baseline, chain.rpcUrl, "baseline"), { count: records }),
    });
    for (const [name, list] of Object.entries(runs)) {
      if (list.some((r) => r.counted !== 1)) console.log(`  ${name}: FAILED (did not index ${EVENTS} records)`);
    }
    const ms = (name: keyof typeof runs) => median(runs[name].map((r) => r.ms));
    const cpu = (name: keyof typeof runs) => median(runs[name].map((r) => r.cpuMs));
    console.log(
      `ingestion of ${EVENTS} ERC-721 mints, whole chain, new SQLite file; median of ${ROUNDS} interleaved rounds ` +
        `(load ${await loadAverage()}):`,
    );
    for (const name of ["this", "baseline"] as const) {
      console.log(
        `  ${name.padEnd(9)} ${(ms(name) / 1000).toFixed(2)} s  ${Math.round(EVENTS / (ms(name) / 1000))} records/s` +
          `  CPU ${(cpu(name) / 1000).toFixed(2)} s`,
      );
    }
    console.log(
      `  wall, this / baseline: ${ratio(ms("this"), ms("baseline"))} (medians); ` +
        pairedRatio(runs.this, runs.baseline),
    );
    const cpuRuns = (name: keyof typeof runs) => runs[name].map((r) => ({ ms: r.cpuMs }));
    console.log(
      `  CPU, this / baseline: ${ratio(cpu("this"), cpu("baseline"))} (medians); ` +
        pairedRatio(cpuRuns("this"), cpuRuns("baseline")),
    );
  } finally {
    await chain.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const work = marketplaceLogs();
  const tables = {
    this: await tableOf(builds.this),
    baseline: await tableOf(builds.baseline),
  };
  const decodes = await interleaved(ROUNDS, {
    this: async () => decodeAll(tables.this, work),
    baseline: async () => decodeAll(tables.baseline, work),
  });
  const per = (name: keyof typeof decodes) => median(decodes[name]);
  console.log(
    `decoding the ${work.length} logs of the real mainnet transactions × ${DECODE_REPEAT}; ${ROUNDS} interleaved ` +
      "rounds, medians (best):",
  );
  for (const name of ["this", "baseline"] as const)
    console.log(`  ${name.padEnd(9)} ${per(name).toFixed(0)} ns per log (${Math.min(...decodes[name]).toFixed(0)})`);
  console.log(
    `  this / baseline: ${ratio(per("this"), per("baseline"))} (medians), ` +
      `${ratio(Math.min(...decodes.this), Math.min(...decodes.baseline))} (best); ` +
      pairedRatio(
        decodes.this.map((ms) => ({ ms })),
        decodes.baseline.map((ms) => ({ ms })),
      ),
  );
}

/** The median of the rounds' own ratios: both builds ran back to back in each round, under the same load. */
function pairedRatio(ours: readonly { ms: number }[], theirs: readonly { ms: number }[]): string {
  const ratios = ours.map((r, i) => r.ms / theirs[i]!.ms);
  const sorted = [...ratios].sort((a, b) => a - b);
  return `per round ${median(ratios).toFixed(3)}× (range ${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
}

function indexArgv(dist: string, rpc: string, name: string): string[] {
  const db = join(dir, `${name}.sqlite`);
  for (const suffix of ["", "-wal", "-shm", "-index.lock"]) rmSync(db + suffix, { force: true });
  return [process.execPath, join(dist, "cli", "main.js"), "index", "--once", "--rpc", rpc, "--db", db];
}

async function tableOf(dist: string): Promise<VenueTable> {
  const module = (await import(pathToFileURL(join(dist, "sources", "index", "venues", "index.js")).href)) as {
    venueTable(): VenueTable;
  };
  return module.venueTable();
}

interface Work {
  log: RawLog;
  logs: RawLog[];
}

/** Every log of the fixtures, with its transaction's logs. */
function marketplaceLogs(): Work[] {
  const out: Work[] = [];
  for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith(".json"))) {
    const fixture = JSON.parse(readFileSync(join(FIXTURES, file), "utf8")) as {
      logs: Omit<RawLog, "blockNumber" | "blockHash">[];
    };
    const logs = fixture.logs.map((l) => ({ ...l, blockNumber: "0x1", blockHash: `0x${"ab".repeat(32)}` }));
    for (const log of logs) out.push({ log, logs });
  }
  return out;
}

/** Nanoseconds per log for `table` to look up and decode every log `DECODE_REPEAT` times. */
function decodeAll(table: VenueTable, work: readonly Work[]): number {
  let records = 0;
  const started = process.hrtime.bigint();
  for (let r = 0; r < DECODE_REPEAT; r++) {
    for (const { log, logs } of work) {
      const venue = table.byTopic.get(log.topics[0]!);
      if (!venue) continue;
      if (venue.addresses !== "any" && !venue.addresses.includes(log.address.toLowerCase())) continue;
      records += venue.decode(log, { logs })?.length ?? 0;
    }
  }
  const ns = Number(process.hrtime.bigint() - started);
  if (records === 0) throw new Error("nothing decoded");
  return ns / (DECODE_REPEAT * work.length);
}
