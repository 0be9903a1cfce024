/**
 * Cold start of `chainmail --version` next to `node -e 0` (and `node -e 0` again: A/A, the noise), a one-line ES
 * module (the floor of any ES module entry) and, with BENCH_OTHER_CLI=<another build's dist/cli/main.js>, another
 * build's. Each is spawned to its end in interleaved rounds (the order rotating); medians of wall time, and each
 * ratio is the median of the rounds' own ratios to `node -e 0`, with its range.
 * Usage: node bench/cold-start.mjs [rounds, default 40]   (after `npm run build`)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";

const rounds = Number(process.argv[2] ?? 40);
const dir = mkdtempSync(join(tmpdir(), "chainmail-cold-start-"));
const oneLine = join(dir, "version.mjs");
writeFileSync(oneLine, 'process.stdout.write("0.1.0\\n");\n');
const commands = {
  "node -e 0": ["-e", "0"],
  "node -e 0 again (A/A)": ["-e", "0"],
  "chainmail --version": [join(import.meta.dirname, "..", "dist", "cli", "main.js"), "--version"],
  "a one-line .mjs": [oneLine],
  ...(process.env.BENCH_OTHER_CLI ? { "other build --version": [process.env.BENCH_OTHER_CLI, "--version"] } : {}),
};
const names = Object.keys(commands);
const times = Object.fromEntries(names.map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(round + i) % names.length];
    const started = performance.now();
    const run = spawnSync(process.execPath, commands[name]);
    if (run.status !== 0) throw new Error(`${name} exited ${run.status}: ${run.stderr}`);
    times[name].push(performance.now() - started);
  }
}
rmSync(dir, { recursive: true, force: true });
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const bare = times["node -e 0"];
console.log(
  `node ${process.version}, ${rounds} interleaved rounds (load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}):`,
);
for (const name of names) {
  const ratios = times[name].map((ms, i) => ms / bare[i]);
  const range = `${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`;
  console.log(
    `  ${name.padEnd(24)} ${median(times[name]).toFixed(1).padStart(6)} ms` +
      (name === "node -e 0" ? "" : `   ${median(ratios).toFixed(2)}× of node -e 0 (rounds ${range})`),
  );
}
console.log("  goal: chainmail --version ≤ 1.3× node -e 0");
