/**
 * The own index's ingestion side by side with the same job written by hand (issue 13), as processes:
 * `chainmail index --once` (whole chain, no address filter: every marketplace decoder on, as issue 9 measured)
 * next to bench/peers/lean-index.mjs (a bare `eth_getLogs` loop over one block at a time + one prepared
 * better-sqlite3 insert of the same rows, a transaction per range), both into a new SQLite file, and
 * bench/peers/getlogs-reader.mjs (only the `eth_getLogs` calls over the same blocks, undici + `JSON.parse`, nothing
 * stored: the floor, what fetching alone costs), over the same anvil. Wall time from spawn to exit and peak RSS (GNU time); rounds interleaved, medians. Two chains 10× apart
 * (100,000 and 1,000,000 ERC-721 mint events, 10,000 per block from the demo bulk minter): memory must not grow
 * with the number of events.
 *
 * The chains are mined once and kept as anvil state files in the system's temp directory (keyed by their size
 * and the anvil version), so later runs load them instead of mining again.
 * BENCH_INDEX_EVENTS sets the small size (the large one is 10×; BENCH_INDEX_LARGE=0 leaves it out), BENCH_INDEX_ROUNDS
 * the rounds (default 5).
 * Page latency on 1,000,000 records is in index-store.bench.ts, parallel backfill in index-backfill.bench.ts.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { anvilBinary, type DevChain, startAnvil } from "../src/demo/devchain.js";
import { interleaved, loadAverage, median, type ProcessRun, ratio, runProcess } from "./measure.js";

const SMALL = Number(process.env.BENCH_INDEX_EVENTS ?? 100_000);
const SIZES = process.env.BENCH_INDEX_LARGE === "0" ? [SMALL] : [SMALL, SMALL * 10];
const ROUNDS = Number(process.env.BENCH_INDEX_ROUNDS ?? 5);
/** Mints per block (BENCH_INDEX_PER_BLOCK): 10,000 by default, a known provider cap, so the checks meet their worst case. */
const PER_BLOCK = Number(process.env.BENCH_INDEX_PER_BLOCK ?? 10_000);
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const PEER = join(import.meta.dirname, "peers", "lean-index.mjs");
const READER = join(import.meta.dirname, "peers", "getlogs-reader.mjs");
const dir = join(import.meta.dirname, "..", ".bench-tmp", "index");
const stateDir = join(tmpdir(), "chainmail-bench-index");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const chains: DevChain[] = [];
  try {
    for (const events of SIZES) chains.push(await chainOf(events));
    const contenders: Record<string, () => Promise<ProcessRun & { failure?: string }>> = {};
    SIZES.forEach((events, i) => {
      const rpc = chains[i]!.rpcUrl;
      const records = `"records":${events}`;
      const chainmail =
        (db: string, env: Record<string, string> = {}) =>
        () =>
          orFailure(
            runProcess([process.execPath, MAIN, "index", "--once", "--rpc", rpc, "--db", fresh(db)], {
              count: records,
              env,
            }),
          );
      contenders[`chainmail ${events}`] = chainmail(`chainmail-${events}`);
      // The same, told the endpoint refuses answers over its cap (as Infura, Alchemy and QuickNode do): a block of
      // exactly 10,000 logs is then whole, where an unknown endpoint's is checked against the block's receipts.
      contenders[`chainmail refusing ${events}`] = chainmail(`chainmail-refusing-${events}`, {
        INDEX_RPC_PROVIDER: "infura",
      });
      contenders[`lean ${events}`] = () =>
        runProcess([process.execPath, PEER, rpc, fresh(`lean-${events}`), "1"], { count: records });
      contenders[`getLogs ${events}`] = () =>
        runProcess([process.execPath, READER, rpc, "1"], { count: `"logs":${events}` });
    });
    const runs = await interleaved(ROUNDS, contenders);
    for (const [name, list] of Object.entries(runs)) {
      const failed = list.find((r) => r.counted !== 1);
      if (failed) console.log(`  ${name}: FAILED (${failed.failure ?? "did not report the expected record count"})`);
    }
    const ms = (list: ProcessRun[]) => median(list.map((r) => r.ms));
    const rss = (list: ProcessRun[]) => median(list.map((r) => r.rssMiB));
    const cpu = (list: ProcessRun[]) => median(list.map((r) => r.cpuMs));
    const figure = (list: ProcessRun[]) =>
      `${(ms(list) / 1000).toFixed(2)} s / ${(cpu(list) / 1000).toFixed(2)} s CPU / ${rss(list).toFixed(0)} MiB`;
    console.log(
      `ingestion, new SQLite file, ${PER_BLOCK} ERC-721 mints per block; median of ${ROUNDS} interleaved rounds ` +
        `(load ${await loadAverage()}):`,
    );
    console.log("  time / CPU time / peak RSS of each process");
    console.log(
      "     events  chainmail index --once          lean getLogs + insert           getLogs reader alone            " +
        "× lean  × reader  records/s (chainmail)",
    );
    for (const events of SIZES) {
      const lean = runs[`lean ${events}`]!;
      const reader = runs[`getLogs ${events}`]!;
      for (const [label, ours] of [
        ["", runs[`chainmail ${events}`]!],
        ["  (INDEX_RPC_PROVIDER=infura: refuses over its cap)", runs[`chainmail refusing ${events}`]!],
      ] as const) {
        console.log(
          `  ${String(events).padStart(9)}  ${figure(ours).padEnd(30)}  ${figure(lean).padEnd(30)}  ${figure(reader).padEnd(30)}  ` +
            `${ratio(ms(ours), ms(lean)).padStart(6)}  ${ratio(ms(ours), ms(reader)).padStart(8)}  ${Math.round(events / (ms(ours) / 1000))}${label}`,
        );
      }
    }
    console.log(
      `  goal (issue 24): at ${SMALL} events time ≤ 1.2× the getLogs reader alone, chainmail's peak RSS ≤ 150 MiB; ` +
        "flat from the small to the large chain",
    );
  } finally {
    await Promise.all(chains.map((c) => c.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A run that failed, kept as a figure (e.g. out of memory) rather than ending the bench. */
async function orFailure(run: Promise<ProcessRun>): Promise<ProcessRun & { failure?: string }> {
  try {
    return await run;
  } catch (err) {
    const message = (err as Error).message;
    const rss = /maxrss_kb=(\d+)/.exec(message);
    const code = /exited (\S+)/.exec(message)?.[1];
    return {
      ms: Number.NaN,
      cpuMs: Number.NaN,
      rssMiB: rss ? Number(rss[1]) / 1024 : Number.NaN,
      counted: 0,
      stdoutBytes: 0,
      lastLine: "",
      failure: `exit ${code}`,
    };
  }
}

/** A path for a new index file (the previous round's file and its WAL removed). */
function fresh(name: string): string {
  const file = join(dir, `${name}.sqlite`);
  for (const suffix of ["", "-wal", "-shm", "-index.lock"]) rmSync(file + suffix, { force: true });
  return file;
}

/** An anvil holding `events` bulk mints: loaded from the cached state file, or mined and then cached. */
export async function chainOf(events: number): Promise<DevChain> {
  const version = execFileSync(anvilBinary(), ["--version"], { encoding: "utf8" }).split("\n")[0]!.replace(/\W+/g, "-");
  const file = join(stateDir, `bulk-${events}-${PER_BLOCK}-${version}.json`);
  if (existsSync(file)) {
    const started = Date.now();
    const chain = await startAnvil({ loadState: file });
    console.log(
      `chain: ${events} ERC-721 mint events loaded from ${file} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return chain;
  }
  mkdirSync(stateDir, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  const made = Date.now();
  const miner = await startAnvil({ dumpState: partial });
  try {
    await createBulkActivity(miner.rpcUrl, await deployAll(miner.rpcUrl), events, PER_BLOCK);
  } finally {
    await miner.stop();
  }
  renameSync(partial, file);
  console.log(
    `chain: ${events} ERC-721 mint events mined in ${((Date.now() - made) / 1000).toFixed(1)} s, kept in ${file}`,
  );
  return startAnvil({ loadState: file });
}
