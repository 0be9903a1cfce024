/**
 * What the hosted-provider checks cost (issue 19): `chainmail index --once` over the 100,000-event chain of
 * index.bench.ts (10,000 ERC-721 mints a block, a chain young enough that every block is checked against its header
 * as one near the head), this build beside the build before the checks, as processes, rounds interleaved, medians
 * and the median of each round's own ratio.
 *
 * The build before the checks is made from git: BENCH_BASELINE_REF (default: the last commit before them) is
 * exported into the system's temp directory (outside the checkout, where lint and tests do not see it) and built
 * there once, with this checkout's node_modules.
 * BENCH_INDEX_EVENTS sets the chain's size, BENCH_INDEX_ROUNDS the rounds (default 7).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chainOf } from "./index.bench.js";
import { interleaved, loadAverage, median, type ProcessRun, pairedRatio, runProcess } from "./measure.js";

const EVENTS = Number(process.env.BENCH_INDEX_EVENTS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_INDEX_ROUNDS ?? 7);
/** The last commit of main before the checks (aa0cd34, "README split…"). */
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? "aa0cd34";
const root = join(import.meta.dirname, "..");
const dir = join(root, ".bench-tmp", "index-checks");

export default async function bench(): Promise<void> {
  const before = baselineBuild(BASELINE_REF);
  rmSync(join(dir, "runs"), { recursive: true, force: true });
  mkdirSync(join(dir, "runs"), { recursive: true });
  const chain = await chainOf(EVENTS);
  try {
    const records = `"records":${EVENTS}`;
    const run = (main: string, name: string) => () =>
      runProcess([process.execPath, main, "index", "--once", "--rpc", chain.rpcUrl, "--db", fresh(name)], {
        count: records,
      });
    const runs = await interleaved(ROUNDS, {
      checks: run(join(root, "dist", "cli", "main.js"), "checks"),
      before: run(before, "before"),
    });
    for (const [name, list] of Object.entries(runs) as [string, ProcessRun[]][]) {
      if (list.some((r) => r.counted !== 1)) console.log(`  ${name}: FAILED (did not report ${records})`);
    }
    const ms = (list: ProcessRun[]) => median(list.map((r) => r.ms));
    const rss = (list: ProcessRun[]) => median(list.map((r) => r.rssMiB));
    const cpu = (list: ProcessRun[]) => median(list.map((r) => r.cpuMs));
    console.log(
      `ingestion of ${EVENTS} events (every block checked as near the head), new SQLite file; median of ${ROUNDS} ` +
        `interleaved rounds (load ${await loadAverage()}):`,
    );
    for (const [name, list] of [
      ["with the checks", runs.checks],
      [`before them (${BASELINE_REF})`, runs.before],
    ] as const) {
      console.log(
        `  ${name.padEnd(28)} ${(ms(list) / 1000).toFixed(2)} s  CPU ${(cpu(list) / 1000).toFixed(2)} s  ${rss(list).toFixed(0)} MiB`,
      );
    }
    const paired = pairedRatio(
      runs.checks.map((r) => r.ms),
      runs.before.map((r) => r.ms),
    );
    const pairedCpu = pairedRatio(
      runs.checks.map((r) => r.cpuMs),
      runs.before.map((r) => r.cpuMs),
    );
    console.log(`  time ratio (median of the rounds' own): ${paired.toFixed(3)}×   goal: ≤ 1.10×`);
    console.log(`  CPU time ratio (median of the rounds' own): ${pairedCpu.toFixed(3)}×`);
  } finally {
    await chain.stop();
    rmSync(join(dir, "runs"), { recursive: true, force: true });
  }
}

/** The CLI built from `ref`, made once in the temp directory. */
function baselineBuild(ref: string): string {
  const sha = execFileSync("git", ["rev-parse", "--short", ref], { cwd: root, encoding: "utf8" }).trim();
  const tree = join(tmpdir(), `chainmail-bench-baseline-${sha}`);
  const main = join(tree, "dist", "cli", "main.js");
  if (existsSync(main)) return main;
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(tree, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${sha} | tar -x -C ${JSON.stringify(tree)}`], { cwd: root });
  symlinkSync(join(root, "node_modules"), join(tree, "node_modules"));
  execFileSync(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"],
    {
      cwd: tree,
    },
  );
  execFileSync(process.execPath, ["scripts/bundle-cli.mjs"], { cwd: tree });
  console.log(`baseline: ${ref} (${sha}) built in ${tree}`);
  return main;
}

function fresh(name: string): string {
  const file = join(dir, "runs", `${name}.sqlite`);
  for (const suffix of ["", "-wal", "-shm", "-index.lock"]) rmSync(file + suffix, { force: true });
  return file;
}
