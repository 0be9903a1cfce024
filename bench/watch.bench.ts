/**
 * chainmail watch (issue 12): seconds from a sale's block to its email in the outbox, with `chainmail index`
 * following anvil and the watch following the index, both in this process. A sale is made (its block mined at once,
 * anvil automine), then the clock runs until the outbox's index line for that sale is written (its `date`).
 * Two settings side by side: the defaults (indexer polls the chain every 1 s, the watch polls the index every 2 s)
 * and tight polling (both every 100 ms). BENCH_WATCH_SALES scales the number of sales per setting.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { loadConfig } from "../src/core/config.js";
import { createActivity, createLiveSale } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { startAnvil } from "../src/demo/devchain.js";
import { indexChain } from "../src/ingest/indexer.js";
import { closeIndexSources } from "../src/sources/own-index/source.js";
import { listOutbox } from "../src/transports/outbox/store.js";
import { watch } from "../src/watch/watch.js";

const SALES = Number(process.env.BENCH_WATCH_SALES ?? 25);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "watch");

export default async function bench(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const chain = await startAnvil();
  try {
    const deployed = await deployAll(chain.rpcUrl);
    await createActivity(chain.rpcUrl, deployed);
    let nextToken = 1000n;
    console.log(`sales per setting: ${SALES}; latency = outbox line written - sale mined`);
    console.log("| setting | index poll | watch poll | p50 | p99 | max |");
    console.log("|---|---|---|---|---|---|");
    for (const [name, indexPollMs, watchPollMs] of [
      ["defaults", 1000, 2000],
      ["tight", 100, 100],
    ] as const) {
      const latencies = await run(name, chain.rpcUrl, deployed, indexPollMs, watchPollMs, () => nextToken++);
      latencies.sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!;
      const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
      console.log(
        `| ${name} | ${indexPollMs} ms | ${watchPollMs} ms | ${s(at(0.5))} | ${s(at(0.99))} | ${s(latencies.at(-1)!)} |`,
      );
    }
  } finally {
    await closeIndexSources();
    await chain.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(
  name: string,
  rpcUrl: string,
  deployed: Awaited<ReturnType<typeof deployAll>>,
  indexPollMs: number,
  watchPollMs: number,
  token: () => bigint,
): Promise<number[]> {
  const dbPath = join(dir, `${name}.sqlite`);
  const outbox = join(dir, `${name}-outbox`);
  const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: dbPath });
  const index = { rpcUrl, dbPath, seaport: [deployed.seaport], config };
  await indexChain({ ...index, follow: false });
  const stop = new AbortController();
  const indexer = indexChain({ ...index, follow: true, pollIntervalMs: indexPollMs, signal: stop.signal });
  const watcher = watch({
    config: {
      source: "index",
      poll_seconds: watchPollMs / 1000,
      from: { Email: "bench@chainmail.test" },
      rules: [
        {
          id: name,
          contract_address: deployed.erc721,
          mail: { to: [{ Email: "desk@example.com" }], subject: "#{{var:token_id}}" },
        },
      ],
    },
    env: { NFT_SOURCE: "index", INDEX_DB: dbPath, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: outbox },
    signal: stop.signal,
  });
  const minedAt = new Map<string, number>();
  try {
    await sleep(watchPollMs * 2); // the rule has started
    for (let i = 0; i < SALES; i++) {
      const id = token();
      await createLiveSale(rpcUrl, deployed, { tokenId: id, price: "1" });
      minedAt.set(`#${id}`, Date.now());
      // Spread over the poll cycles: a sale lands anywhere between two polls.
      await sleep(Math.round(Math.random() * (indexPollMs + watchPollMs)));
    }
    for (let waited = 0; waited < 60_000; waited += 100) {
      if ((await listOutbox(outbox)).length >= SALES) break;
      await sleep(100);
    }
  } finally {
    stop.abort();
    await Promise.all([indexer, watcher]);
  }
  const entries = await listOutbox(outbox);
  if (entries.length !== SALES) throw new Error(`${name}: ${entries.length} of ${SALES} sales were mailed`);
  return entries.map((e) => Date.parse(e.date) - minedAt.get(e.subject)!);
}
