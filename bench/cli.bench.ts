/**
 * The command line as processes, side by side with the same job done by hand, against the local NFTPort server in
 * a process of its own. Wall time from spawn to exit and peak RSS (GNU time) of each process; rounds interleaved,
 * medians.
 * 1. `chainmail run nft-transactions-by-contract --all` over 600 pages of 50 next to a plain `fetch` loop on
 *    `continuation` (bench/peers/fetch-all.mjs), and both again over 60 pages: memory must stay flat as pages grow.
 *    Next to both, the barest loop (bench/peers/undici-all.mjs: undici `request` + `JSON.parse`): the marginal cost
 *    of a page, (600 pages − 60 pages) / 540, wall and CPU time, start-up cancelled out.
 * 2. Start-up: `chainmail --version`, `chainmail nodes` and a one-page `chainmail run` next to `node -e 0`.
 */
import { join } from "node:path";
import { VALID_KEY } from "../test/upstreams/nftport.js";
import {
  interleaved,
  loadAverage,
  median,
  type ProcessRun,
  pairedRatio,
  ratio,
  runProcess,
  startUpstream,
} from "./measure.js";
import { REAL_CONTRACT, REAL_TOKEN } from "./upstream.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");
const PEER = join(import.meta.dirname, "peers", "fetch-all.mjs");
const BARE = join(import.meta.dirname, "peers", "undici-all.mjs");
const LARGE = "0x6000000000000000000000000000000000000600"; // 600 pages of 50
const SMALL = "0x6000000000000000000000000000000000000060"; // 60 pages of 50

const range = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;

export default async function bench(): Promise<void> {
  const upstream = await startUpstream("nftport", { paged: { [LARGE]: 600, [SMALL]: 60 } });
  const env = { NFTPORT_BASE_URL: upstream.url };
  const node = process.execPath;
  const all = (contract: string) => () =>
    runProcess(
      [
        node,
        MAIN,
        "run",
        "nft-transactions-by-contract",
        "--all",
        "--input",
        JSON.stringify({ query: { contract_address: contract, page_size: 50 }, params: { api_key: VALID_KEY } }),
      ],
      { env, count: '"transaction_date"' },
    );
  const loop = (contract: string) => () =>
    runProcess([node, PEER, upstream.url, contract, VALID_KEY], { count: '"transaction_date"' });
  const bare = (contract: string) => () =>
    runProcess([node, BARE, upstream.url, contract, VALID_KEY], { count: '"transaction_date"' });
  const onePage = [
    "run",
    "nft-transactions-by-token",
    "--input",
    JSON.stringify({
      query: { contract_address: REAL_CONTRACT, token_id: REAL_TOKEN },
      params: { api_key: VALID_KEY },
    }),
  ];
  try {
    const paging = await interleaved(ROUNDS, {
      all600: all(LARGE),
      loop600: loop(LARGE),
      all60: all(SMALL),
      loop60: loop(SMALL),
      bare600: bare(LARGE),
      bare60: bare(SMALL),
    });
    for (const [name, runs] of Object.entries(paging)) {
      const records = name.endsWith("600") ? 30_000 : 3_000;
      if (runs.some((r) => r.counted !== records)) throw new Error(`${name}: expected ${records} records`);
    }
    const ms = (runs: ProcessRun[]) => median(runs.map((r) => r.ms));
    const rss = (runs: ProcessRun[]) => median(runs.map((r) => r.rssMiB));
    console.log(
      `--all, one contract, page_size 50, stdout to a pipe; median of ${ROUNDS} interleaved rounds (load ${await loadAverage()}):`,
    );
    console.log("  pages  chainmail run --all       fetch loop                 time ratio  RSS ratio");
    // Ratios: the median of each round's own ratio (the two ran side by side in that round).
    const paired = (ours: ProcessRun[], theirs: ProcessRun[], of: (r: ProcessRun) => number) =>
      `${pairedRatio(ours.map(of), theirs.map(of)).toFixed(2)}×`;
    for (const pages of [600, 60] as const) {
      const ours = paging[`all${pages}`];
      const theirs = paging[`loop${pages}`];
      console.log(
        `  ${String(pages).padStart(5)}  ${(ms(ours) / 1000).toFixed(2)} s, ${rss(ours).toFixed(0)} MiB peak RSS   ` +
          `${(ms(theirs) / 1000).toFixed(2)} s, ${rss(theirs).toFixed(0)} MiB peak RSS   ` +
          `${paired(ours, theirs, (r) => r.ms).padStart(10)}  ${paired(ours, theirs, (r) => r.rssMiB).padStart(9)}`,
      );
    }
    console.log(
      `  peak RSS at 600 pages / at 60: chainmail ${ratio(rss(paging.all600), rss(paging.all60))}, ` +
        `fetch loop ${ratio(rss(paging.loop600), rss(paging.loop60))}`,
    );
    console.log("  goal at 600 pages: time ≤ 1.00× and RSS ≤ 1.00× of the loop; RSS flat from 60 to 600 pages");
    // What each page beyond the first 60 costs: (600 pages − 60 pages) / 540, round by round (start-up cancels out).
    const marginal = (runs600: ProcessRun[], runs60: ProcessRun[], of: (r: ProcessRun) => number) =>
      runs600.map((r, i) => (of(r) - of(runs60[i]!)) / 540);
    const wall = (r: ProcessRun) => r.ms;
    const cpu = (r: ProcessRun) => r.cpuMs;
    console.log("  marginal cost per page, (600 pages − 60 pages) / 540, ms (median of the rounds' own figures):");
    const ours = { wall: marginal(paging.all600, paging.all60, wall), cpu: marginal(paging.all600, paging.all60, cpu) };
    for (const [label, runs600, runs60] of [
      ["chainmail run --all", paging.all600, paging.all60],
      ["undici + JSON.parse loop", paging.bare600, paging.bare60],
      ["fetch loop", paging.loop600, paging.loop60],
    ] as const) {
      const w = marginal(runs600, runs60, wall);
      const c = marginal(runs600, runs60, cpu);
      const vs =
        label === "chainmail run --all"
          ? ""
          : `   chainmail of it: wall ${median(ours.wall.map((x, i) => x / w[i]!)).toFixed(2)}× (${range(ours.wall.map((x, i) => x / w[i]!))}), CPU ${median(ours.cpu.map((x, i) => x / c[i]!)).toFixed(2)}× (${range(ours.cpu.map((x, i) => x / c[i]!))})`;
      console.log(`    ${label.padEnd(26)} wall ${median(w).toFixed(3)}   CPU ${median(c).toFixed(3)}${vs}`);
    }
    console.log("  goal: chainmail's marginal cost per page ≤ 1.5× the undici + JSON.parse loop's");

    const start = await interleaved(ROUNDS * 2, {
      bare: () => runProcess([node, "-e", "0"]),
      // The same again: how far two runs of one command differ on this machine at this moment (A/A).
      bareAgain: () => runProcess([node, "-e", "0"]),
      version: () => runProcess([node, MAIN, "--version"]),
      nodes: () => runProcess([node, MAIN, "nodes"]),
      run: () => runProcess([node, MAIN, ...onePage], { env }),
    });
    console.log(
      `start-up, median of ${ROUNDS * 2} interleaved rounds, ratios the medians of the rounds' own (load ${await loadAverage()}):`,
    );
    for (const [name, label] of [
      ["bare", "node -e 0"],
      ["bareAgain", "node -e 0 again (A/A)"],
      ["version", "chainmail --version"],
      ["nodes", "chainmail nodes"],
      ["run", "chainmail run (one real page)"],
    ] as const) {
      const runs = start[name];
      console.log(
        `  ${label.padEnd(30)} ${(ms(runs) / 1000).toFixed(3)} s, ${rss(runs).toFixed(0)} MiB peak RSS` +
          (name === "bare"
            ? ""
            : `   ${pairedRatio(
                runs.map((r) => r.ms),
                start.bare.map((r) => r.ms),
              ).toFixed(2)}× of node -e 0 ` +
              `(rounds ${range(runs.map((r, i) => r.ms / start.bare[i]!.ms))}), CPU time ` +
              `${pairedRatio(
                runs.map((r) => r.cpuMs),
                start.bare.map((r) => r.cpuMs),
              ).toFixed(2)}× ` +
              `(${range(runs.map((r, i) => r.cpuMs / start.bare[i]!.cpuMs))})`),
      );
    }
    console.log("  goals: chainmail --version ≤ 1.3× node -e 0; nodes and a one-page run ≤ 0.20 s");
  } finally {
    await upstream.close();
  }
}
