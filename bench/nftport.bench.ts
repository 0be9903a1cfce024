/**
 * NFT retrievers against the local NFTPort server (loopback):
 * 1. time per page of `runNode` next to a bare `fetch` + `JSON.parse` of the same URL (the floor), as a ratio;
 * 2. records/s of `chainmail run --all` over 20 and 200 pages of 50, with the CLI process's peak RSS, to show
 *    memory stays flat however many pages.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { request } from "undici";
import { loadConfig } from "../src/core/config.js";
import { runNode } from "../src/core/node.js";
import { nftTransactionsByContract } from "../src/nodes/index.js";
import { startNftport, VALID_KEY } from "../test/upstreams/nftport.js";
import { syntheticRecords } from "../test/upstreams/nftport-data.js";

const SMALL = "0x4444444444444444444444444444444444444444"; // 20 pages of 50
const LARGE = "0x5555555555555555555555555555555555555555"; // 200 pages of 50
const BIG_INTS = "0x6666666666666666666666666666666666666666"; // ERC-1155 rows, quantities beyond 2^53
const MAIN = join(import.meta.dirname, "..", "dist", "cli", "main.js");

async function timePerPage(label: string, iterations: number, once: () => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.min(200, iterations); i++) await once(); // warm-up: JIT, connection pool
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await once();
  const perPage = Number(process.hrtime.bigint() - start) / 1e6 / iterations;
  console.log(`  ${label.padEnd(44)} ${perPage.toFixed(3)} ms/page`);
  return perPage;
}

function runCli(contract: string, baseUrl: string): Promise<{ ms: number; records: number; maxRssKb: number }> {
  return new Promise((resolve, reject) => {
    const input = JSON.stringify({
      query: { contract_address: contract, page_size: 50 },
      params: { api_key: VALID_KEY },
    });
    const started = process.hrtime.bigint();
    // GNU time reports the child's peak RSS on stderr.
    const child = spawn(
      "/usr/bin/time",
      ["-f", "maxrss_kb=%M", process.execPath, MAIN, "run", "nft-transactions-by-contract", "--all", "--input", input],
      {
        env: { PATH: process.env.PATH ?? "", NFTPORT_BASE_URL: baseUrl },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let records = 0;
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      records += chunk.split('"transaction_date"').length - 1;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const rss = /maxrss_kb=(\d+)/.exec(stderr);
      if (code !== 0 || !rss) return reject(new Error(`CLI exited ${code}: ${stderr}`));
      resolve({ ms, records, maxRssKb: Number(rss[1]) });
    });
  });
}

export default async function bench(): Promise<void> {
  const byContract = new Map([
    [SMALL, syntheticRecords(SMALL, 20 * 50, 15_000_000)],
    [LARGE, syntheticRecords(LARGE, 200 * 50, 16_000_000)],
    [BIG_INTS, syntheticRecords(BIG_INTS, 50, 17_000_000, true)],
  ]);
  const upstream = await startNftport({ byContract });
  const config = loadConfig({ NFTPORT_BASE_URL: upstream.url });
  try {
    const iterations = 1000;
    console.log(`per page (50 records, first page), ${iterations} iterations after 200 warm-up:`);
    for (const [label, contract] of [
      ["ERC-721 rows (fast JSON path)", SMALL],
      ["ERC-1155 rows, quantities > 2^53 (exact path)", BIG_INTS],
    ] as const) {
      const url = `${upstream.url}/v0/transactions/nfts/${contract}?chain=ethereum&type=all&page_size=50`;
      const bare = await timePerPage(`fetch + JSON.parse, ${label}`, iterations, async () => {
        const res = await fetch(url, { headers: { authorization: VALID_KEY } });
        JSON.parse(await res.text());
      });
      const pooled = await timePerPage(`undici request + JSON.parse, ${label}`, iterations, async () => {
        const res = await request(url, { headers: { authorization: VALID_KEY }, dispatcher: config.dispatcher });
        JSON.parse(await res.body.text());
      });
      const node = await timePerPage(`runNode, ${label}`, iterations, async () => {
        const out = await runNode(
          nftTransactionsByContract,
          { query: { contract_address: contract, page_size: 50 }, params: { api_key: VALID_KEY } },
          { config },
        );
        if (!out.data) throw new Error(out.error?.error);
      });
      console.log(
        `  ratio runNode / bare fetch: ${(node / bare).toFixed(2)}; runNode / undici request: ${(node / pooled).toFixed(2)}`,
      );
    }

    console.log("chainmail run --all (page_size 50, stdout to a pipe), median of 3 processes, startup included:");
    for (const [pages, contract] of [
      [20, SMALL],
      [200, LARGE],
    ] as const) {
      // Median of three runs.
      const runs = [
        await runCli(contract, upstream.url),
        await runCli(contract, upstream.url),
        await runCli(contract, upstream.url),
      ];
      const r = runs.sort((a, b) => a.ms - b.ms)[1]!;
      if (r.records !== pages * 50) throw new Error(`expected ${pages * 50} records, got ${r.records}`);
      console.log(
        `  ${String(pages).padStart(3)} pages: ${r.records} records in ${(r.ms / 1000).toFixed(2)} s = ${Math.round((r.records / r.ms) * 1000)} records/s, peak RSS ${(r.maxRssKb / 1024).toFixed(1)} MiB`,
      );
    }
  } finally {
    await upstream.close();
  }
}
