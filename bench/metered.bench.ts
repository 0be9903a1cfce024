/**
 * The own index on a metered endpoint (issue 31): `chainmail index --once` (the built CLI) through
 * test/upstreams/metered.ts — a real JSON-RPC proxy in front of anvil billing Alchemy's classic compute units
 * (CU), throttling past a CU/s budget over 1-second windows with HTTP 429 (no Retry-After) or per-item 429 inside
 * a 200 batch, Alchemy's eth_getLogs range rule on. Two chains:
 * - sparse: one ERC-721 collection (`--contracts`), 200,000 blocks, a transfer every 100th block (2,000 records);
 * - dense: the whole chain with the demo marketplace (Seaport sales in ETH and WETH, the price feed), then 24,000
 *   mints, 500 a transaction, in 48 blocks spread over ~6,000.
 * Cases, INDEX_RPC_PROVIDER=alchemy in all but `generic`: the floor (no budget, INDEX_RPC_CU_PER_SECOND=1,000,000:
 * the same calls, never held back: the process's own time); generic (the provider not named: what the index spends
 * without Alchemy's rules); no budget (paced from the free plan up, never throttled); budgets 330 and 660 CU/s in
 * both 429 flavours; 30 % random 429s at 660 (both flavours) against the same flavour without them;
 * INDEX_RPC_CU_PER_SECOND stated as the budget. For each: CU billed against the least a client knowing Alchemy's
 * rules needs for the same records (see `least`), wall time against that least / budget, calls by method, 429s.
 * Every run's index must equal the one built straight from anvil, else the bench fails.
 *
 * The chains are mined once (anvil `--hardfork cancun --prune-history`) and kept as state files under
 * .bench-tmp/metered/ (keyed by the anvil version), so later runs load them in seconds.
 * BENCH_METERED_CASES: a comma-separated list of words; only the cases whose name holds one of them run.
 * BENCH_METERED_CLI runs another build's dist/cli/main.js instead of this one's.
 * BENCH_METERED_VERBOSE=1 prints each run's standard error (its progress lines).
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROVIDER } from "../src/chain/providers.js";
import { createActivity, createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { anvilBinary, type DevChain, startAnvil } from "../src/demo/devchain.js";
import type { ActivityRow } from "../src/sources/own-index/store.js";
import { allRows } from "../test/support/faults-chain.js";
import { address, erc721Transfer, installEmitters, rpcCall, SENDER } from "../test/support/index-helpers.js";
import { type Meter, type Metering, startMeteredRpc } from "../test/upstreams/metered.js";
import { loadAverage } from "./measure.js";

/** The CLI run (BENCH_METERED_CLI: another build's dist/cli/main.js, to compare builds run by run). */
const MAIN = process.env.BENCH_METERED_CLI ?? join(import.meta.dirname, "..", "dist", "cli", "main.js");
const dir = join(import.meta.dirname, "..", ".bench-tmp", "metered");
const runsDir = join(dir, "runs");
const CU = PROVIDER.alchemy.costs!.methods;
/** Runs of each case (BENCH_METERED_ROUNDS); the figures are the median run's. */
const ROUNDS = Number(process.env.BENCH_METERED_ROUNDS ?? 3);

/** The sparse chain: one collection's transfer every GAP blocks, BLOCKS blocks in all. */
const COLLECTION = address(0xc011);
const SPARSE_BLOCKS = 200_000;
const GAP = 100;
/** The dense chain: mints in transactions of PER_TX, one a block, EMPTY blocks between. */
const DENSE_MINTS = 24_000;
const PER_TX = 500;
const EMPTY = 125;
/** Blocks below the head whose headers a client checks before trusting the logs (the reorg window). */
const HEAD_WINDOW = 64;
/** Alchemy's eth_getLogs rule: any range of up to 2,000 blocks, or a longer one whose answer holds ≤ 10,000 logs. */
const RANGE_BLOCKS = 2_000;
const RANGE_LOGS = 10_000;

interface Chain {
  name: "sparse" | "dense";
  anvil: DevChain;
  head: number;
  flags: string[];
  /** The index built straight from anvil. */
  reference: ActivityRow[];
  least: Least;
}

interface Least {
  cu: number;
  how: string;
}

interface Case {
  name: string;
  /** CU/s; 0: never throttled (the floor: what the run costs in time with nothing in its way). */
  budget: number;
  flavour: "http" | "item";
  random?: number;
  stated?: boolean;
  /** INDEX_RPC_PROVIDER; default alchemy. `generic`: the index not told the provider (nothing paced either). */
  provider?: string;
  /** INDEX_RPC_CU_PER_SECOND when not the budget: the floor states a rate so high that nothing is held back. */
  statedRate?: number;
}

const CASES: Case[] = [
  { name: "floor", budget: 0, flavour: "http", statedRate: 1_000_000 },
  { name: "generic", budget: 0, flavour: "http", provider: "generic" },
  { name: "no budget", budget: 0, flavour: "http" },
  { name: "660 http", budget: 660, flavour: "http" },
  { name: "660 item", budget: 660, flavour: "item" },
  { name: "330 http", budget: 330, flavour: "http" },
  { name: "330 item", budget: 330, flavour: "item" },
  { name: "660 http random30", budget: 660, flavour: "http", random: 0.3 },
  { name: "660 item random30", budget: 660, flavour: "item", random: 0.3 },
  { name: "330 http stated", budget: 330, flavour: "http", stated: true },
  { name: "660 item stated", budget: 660, flavour: "item", stated: true },
];

interface Outcome {
  chain: Chain;
  kase: Case;
  /** The median run's wall time, and every round's. */
  ms: number;
  walls: number[];
  meter: Meter;
  records: number;
  reported?: { cu?: number; throttled_share?: number; rate_per_second?: number | null };
  failure?: string;
}

export default async function bench(): Promise<void> {
  rmSync(runsDir, { recursive: true, force: true });
  mkdirSync(runsDir, { recursive: true });
  const wanted = (process.env.BENCH_METERED_CASES ?? "").split(",").filter(Boolean);
  const chosen = (name: string) => wanted.length === 0 || wanted.some((w) => name.includes(w));
  const outcomes: Outcome[] = [];
  for (const [name, build] of [
    ["sparse", sparseChain],
    ["dense", denseChain],
  ] as const) {
    // A chain none of whose cases is chosen is not loaded (the sparse one takes a while).
    if (!CASES.some((kase) => chosen(`${name} ${kase.name}`))) continue;
    const chain = await build();
    try {
      console.log(
        `${chain.name}: head ${chain.head}, ${chain.reference.length} records in ${new Set(chain.reference.map((r) => r.block_number)).size} blocks; ` +
          `least ${chain.least.cu} CU = ${chain.least.how}`,
      );
      // Rounds over every case in turn, so that a slow stretch of the shared machine does not fall on one case.
      const cases = CASES.filter((kase) => chosen(`${chain.name} ${kase.name}`));
      const runs = new Map<Case, Outcome[]>(cases.map((kase) => [kase, []]));
      for (let round = 0; round < ROUNDS; round++) {
        for (const kase of cases) {
          const outcome = await runCase(chain, kase);
          if (outcome.failure) console.log(`  ${kase.name}, round ${round + 1}: FAILED ${outcome.failure}`);
          runs.get(kase)!.push(outcome);
        }
      }
      for (const kase of cases) {
        outcomes.push(medianRun(runs.get(kase)!));
        console.log(`  ${line(outcomes.at(-1)!, outcomes)}`);
      }
    } finally {
      await chain.anvil.stop();
    }
  }
  console.log(`\nload ${await loadAverage()}`);
  console.log(table(outcomes));
  const failed = outcomes.filter((o) => o.failure);
  if (failed.length > 0)
    throw new Error(`metered bench: ${failed.map((o) => `${o.chain.name} ${o.kase.name}: ${o.failure}`).join("; ")}`);
}

async function runCase(chain: Chain, kase: Case): Promise<Outcome> {
  const metering: Metering = {
    ...(kase.budget > 0 ? { unitsPerSecond: kase.budget } : {}),
    window: "second",
    flavour: kase.flavour,
    logRangeRule: true,
    ...(kase.random ? { randomShare: kase.random, seed: 31 } : {}),
  };
  const proxy = await startMeteredRpc(chain.anvil.rpcUrl, metering);
  const db = join(runsDir, `${chain.name}-${kase.name.replace(/\W+/g, "-")}.sqlite`);
  // A new index each round (the previous round's file, WAL and lock removed).
  for (const suffix of ["", "-wal", "-shm", "-index.lock"]) rmSync(db + suffix, { force: true });
  const env: Record<string, string> = { INDEX_RPC_PROVIDER: kase.provider ?? "alchemy" };
  if (kase.stated) env.INDEX_RPC_CU_PER_SECOND = String(kase.budget);
  if (kase.statedRate) env.INDEX_RPC_CU_PER_SECOND = String(kase.statedRate);
  try {
    const run = await cli(["index", "--once", "--rpc", proxy.url, "--db", db, ...chain.flags], env);
    if (process.env.BENCH_METERED_VERBOSE) console.log(run.stderr);
    const outcome: Outcome = { chain, kase, ms: run.ms, walls: [run.ms], meter: proxy.meter, records: 0 };
    if (run.code !== 0) return { ...outcome, failure: `exit ${run.code}: ${run.stderr.slice(-800)}` };
    const final = JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { records: number; rpc?: Outcome["reported"] };
    outcome.records = final.records;
    outcome.reported = final.rpc;
    const mismatch = compare(chain.reference, await allRows(db));
    return mismatch ? { ...outcome, failure: mismatch } : outcome;
  } finally {
    await proxy.close();
  }
}

/** The run of median wall time, with every round's wall time; the first failure if any round failed. */
function medianRun(rounds: Outcome[]): Outcome {
  const failed = rounds.find((o) => o.failure);
  if (failed)
    return {
      ...failed,
      failure: `${rounds.filter((o) => o.failure).length} of ${rounds.length} rounds: ${failed.failure}`,
    };
  const sorted = [...rounds].sort((a, b) => a.ms - b.ms);
  return { ...sorted[(sorted.length - 1) >> 1]!, walls: rounds.map((o) => o.ms) };
}

/** Where an index differs from the reference: lost, added (duplicated) or changed rows; undefined when equal. */
function compare(reference: ActivityRow[], rows: ActivityRow[]): string | undefined {
  const key = (r: ActivityRow) => JSON.stringify(r);
  const want = new Map<string, number>();
  for (const r of reference) want.set(key(r), (want.get(key(r)) ?? 0) + 1);
  let extra = 0;
  for (const r of rows) {
    const n = want.get(key(r)) ?? 0;
    if (n === 0) extra++;
    else want.set(key(r), n - 1);
  }
  const lost = [...want.values()].reduce((a, b) => a + b, 0);
  if (lost === 0 && extra === 0 && rows.length === reference.length) return undefined;
  return `index differs from anvil's: ${rows.length} rows for ${reference.length}, ${lost} missing, ${extra} not in the reference`;
}

/** Runs the CLI to its end: exit code, output, wall time. */
function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout = (stdout + d).slice(-100_000);
    });
    child.stderr.on("data", (d) => {
      stderr = (stderr + d).slice(-20_000);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr, ms: performance.now() - started }));
  });
}

const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function line(o: Outcome, all: Outcome[]): string {
  if (o.failure) return `${o.kase.name}: FAILED ${o.failure}`;
  const leastMs = (o.chain.least.cu / o.kase.budget) * 1000;
  const calls = Object.entries(o.meter.calls)
    .map(([m, n]) => `${m.replace(/^eth_/, "")} ${n}${o.meter.throttled[m] ? ` (${o.meter.throttled[m]} 429)` : ""}`)
    .join(", ");
  const clean =
    o.kase.random && all.find((c) => c.chain === o.chain && c.kase.name === `${o.kase.budget} ${o.kase.flavour}`);
  const vsClean = clean && !clean.failure ? `, ${(o.ms / clean.ms).toFixed(2)}× clean` : "";
  return (
    `${o.kase.name}: ${o.meter.units} CU (${(o.meter.units / o.chain.least.cu).toFixed(2)}× least), ` +
    `${seconds(o.ms)}${o.kase.budget > 0 ? ` (${(o.ms / leastMs).toFixed(2)}× least/budget ${seconds(leastMs)})` : ""}${vsClean}; ` +
    `${sum(o.meter.calls)} calls in ${o.meter.requests} requests, ${sum(o.meter.throttled)} answered 429 ` +
    `(${o.meter.throttledRequests} whole requests), ${o.meter.rangesRefused} log ranges refused; ${calls}; settled at ${o.reported?.rate_per_second ?? "–"}/s`
  );
}

/**
 * The markdown table BENCHMARKS.md takes. "over floor": the wall time less the chain's `floor` run (no budget, a
 * stated rate nothing reaches: process start, reading, decoding, storing), against least / budget.
 */
function table(outcomes: Outcome[]): string {
  const rows = [
    "| chain | case | CU | CU / least | wall (median, range) | least / budget | wall / (least / budget) | over floor / (least / budget) | vs clean | calls (429) | by method |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  for (const o of outcomes) {
    if (o.failure) {
      rows.push(`| ${o.chain.name} | ${o.kase.name} | FAILED: ${o.failure.split("\n")[0]} | | | | | | | | |`);
      continue;
    }
    const leastMs = (o.chain.least.cu / o.kase.budget) * 1000;
    const floor = outcomes.find((c) => c.chain === o.chain && c.kase.name === "floor" && !c.failure);
    const clean =
      o.kase.random &&
      outcomes.find((c) => c.chain === o.chain && c.kase.name === `${o.kase.budget} ${o.kase.flavour}`);
    const methods = Object.entries(o.meter.calls)
      .map(([m, n]) => `${m.replace(/^eth_/, "")} ${n}${o.meter.throttled[m] ? ` (${o.meter.throttled[m]})` : ""}`)
      .join(", ");
    const range = `${(Math.min(...o.walls) / 1000).toFixed(1)}–${(Math.max(...o.walls) / 1000).toFixed(1)}`;
    const budgeted =
      o.kase.budget > 0
        ? `${seconds(leastMs)} | ${(o.ms / leastMs).toFixed(2)}× | ${floor ? `${((o.ms - floor.ms) / leastMs).toFixed(2)}×` : ""}`
        : "– | – | –";
    rows.push(
      `| ${o.chain.name} | ${o.kase.name} | ${o.meter.units} | ${(o.meter.units / o.chain.least.cu).toFixed(2)}× | ` +
        `${seconds(o.ms)} (${range}) | ${budgeted} | ` +
        `${clean && !clean.failure ? `${(o.ms / clean.ms).toFixed(2)}×` : ""} | ${sum(o.meter.calls)} (${sum(o.meter.throttled)}) | ${methods} |`,
    );
  }
  return rows.join("\n");
}

/** Blocks holding logs and how many, straight from anvil (`filter`: e.g. one address). */
async function logsPerBlock(rpcUrl: string, head: number, filter: object): Promise<Map<number, number>> {
  const per = new Map<number, number>();
  for (let from = 0; from <= head; from += 10_000) {
    const to = Math.min(head, from + 9_999);
    const logs = await rpcCall<{ blockNumber: string }[]>(rpcUrl, "eth_getLogs", [
      { ...filter, fromBlock: `0x${from.toString(16)}`, toBlock: `0x${to.toString(16)}` },
    ]);
    for (const log of logs) per.set(Number(log.blockNumber), (per.get(Number(log.blockNumber)) ?? 0) + 1);
  }
  return per;
}

/**
 * The fewest eth_getLogs calls Alchemy's rule allows over blocks 0..head: ranges taken greedily from the start, each
 * as long as the rule lets it be (2,000 blocks, or longer while it holds ≤ 10,000 logs). Greedy is optimal: a range
 * that may end at block b may also end at any block before b.
 */
function fewestLogCalls(perBlock: Map<number, number>, head: number): number {
  let calls = 0;
  for (let from = 0; from <= head; ) {
    let to = Math.min(head, from + RANGE_BLOCKS - 1);
    let logs = 0;
    for (let b = from; b <= to; b++) logs += perBlock.get(b) ?? 0;
    while (to < head && logs + (perBlock.get(to + 1) ?? 0) <= RANGE_LOGS) logs += perBlock.get(++to) ?? 0;
    calls++;
    from = to + 1;
  }
  return calls;
}

/** The least CU for a chain's records: the head window's headers, the fewest eth_getLogs, plus `extra`. */
function least(perBlock: Map<number, number>, head: number, extra: { cu: number; how: string }[] = []): Least {
  const logCalls = fewestLogCalls(perBlock, head);
  const parts = [
    {
      cu: HEAD_WINDOW * CU.eth_getBlockByNumber!,
      how: `the head and the ${HEAD_WINDOW - 1} headers below it (the reorg window) × ${CU.eth_getBlockByNumber}`,
    },
    {
      cu: logCalls * CU.eth_getLogs!,
      how: `${logCalls} eth_getLogs (Alchemy's 2K-block / 10K-log rule) × ${CU.eth_getLogs}`,
    },
    ...extra,
  ];
  return { cu: parts.reduce((a, p) => a + p.cu, 0), how: parts.map((p) => p.how).join(" + ") };
}

/** A chain from its cached state file, or mined by `make` and cached (with the facts `make` returns). */
async function cached<T>(name: string, make: (rpcUrl: string) => Promise<T>): Promise<{ anvil: DevChain; facts: T }> {
  const version = execFileSync(anvilBinary(), ["--version"], { encoding: "utf8" }).split("\n")[0]!.replace(/\W+/g, "-");
  const file = join(dir, `${name}-${version}.json`);
  const factsFile = `${file}.facts`;
  const options = { hardfork: "cancun", pruneHistory: true };
  if (existsSync(file) && existsSync(factsFile)) {
    const started = Date.now();
    const anvil = await startAnvil({ ...options, loadState: file });
    console.log(`${name}: chain loaded from ${file} in ${seconds(Date.now() - started)}`);
    return { anvil, facts: JSON.parse(readFileSync(factsFile, "utf8")) as T };
  }
  mkdirSync(dir, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  const started = Date.now();
  const miner = await startAnvil({ ...options, dumpState: partial });
  let facts: T;
  try {
    facts = await make(miner.rpcUrl);
  } finally {
    await miner.stop();
  }
  renameSync(partial, file);
  writeFileSync(factsFile, JSON.stringify(facts));
  console.log(`${name}: chain mined in ${seconds(Date.now() - started)}, kept in ${file}`);
  return { anvil: await startAnvil({ ...options, loadState: file }), facts };
}

const mine = (rpcUrl: string, blocks: number) => rpcCall(rpcUrl, "anvil_mine", [`0x${blocks.toString(16)}`]);
const headOf = async (rpcUrl: string) => Number(await rpcCall<string>(rpcUrl, "eth_blockNumber"));

/** The index straight from anvil, with these flags. */
async function reference(name: string, rpcUrl: string, flags: string[]): Promise<ActivityRow[]> {
  const db = join(runsDir, `${name}-reference.sqlite`);
  const run = await cli(["index", "--once", "--rpc", rpcUrl, "--db", db, ...flags], {});
  if (run.code !== 0) throw new Error(`the reference index of ${name} failed: ${run.stderr.slice(-2000)}`);
  return allRows(db);
}

async function sparseChain(): Promise<Chain> {
  const { anvil } = await cached("sparse", async (rpcUrl) => {
    const chain = { rpcUrl, rpc: <T>(m: string, p: unknown[] = []) => rpcCall<T>(rpcUrl, m, p), stop: async () => {} };
    await installEmitters(chain, [COLLECTION]);
    // A transfer in every GAP-th block up to SPARSE_BLOCKS: mints, then transfers of minted tokens.
    for (let token = 1; (await headOf(rpcUrl)) + GAP <= SPARSE_BLOCKS; token++) {
      await mine(rpcUrl, GAP - 1);
      await erc721Transfer(chain, COLLECTION, token % 2 ? address(0) : SENDER, SENDER, token);
    }
    await mine(rpcUrl, SPARSE_BLOCKS - (await headOf(rpcUrl)));
    return {};
  });
  const head = await headOf(anvil.rpcUrl);
  const flags = ["--contracts", COLLECTION];
  const per = await logsPerBlock(anvil.rpcUrl, head, { address: COLLECTION });
  return {
    name: "sparse",
    anvil,
    head,
    flags,
    reference: await reference("sparse", anvil.rpcUrl, flags),
    least: least(per, head),
  };
}

async function denseChain(): Promise<Chain> {
  const { anvil, facts } = await cached("dense", async (rpcUrl) => {
    const deployed = await deployAll(rpcUrl);
    await createActivity(rpcUrl, deployed);
    for (let left = DENSE_MINTS; left > 0; left -= PER_TX) {
      await mine(rpcUrl, EMPTY);
      await createBulkActivity(rpcUrl, deployed, Math.min(PER_TX, left), PER_TX);
    }
    await mine(rpcUrl, 20);
    return { seaport: deployed.seaport, weth: deployed.weth, priceFeed: deployed.priceFeed };
  });
  const head = await headOf(anvil.rpcUrl);
  const flags = ["--seaport", facts.seaport, "--eth-tokens", facts.weth, "--price-feed", facts.priceFeed];
  const per = await logsPerBlock(anvil.rpcUrl, head, {});
  // The records priced in WETH and in ETH/USD need the token's and the feed's decimals(): one eth_call each.
  const decimals = { cu: 2 * CU.eth_call!, how: `2 decimals() eth_calls (WETH, the price feed) × ${CU.eth_call}` };
  const rows = await reference("dense", anvil.rpcUrl, flags);
  return { name: "dense", anvil, head, flags, reference: rows, least: least(per, head, [decimals]) };
}
