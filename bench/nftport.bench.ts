/**
 * One page through `runNode`, side by side with what a user would write by hand, against the local NFTPort server
 * in a process of its own (loopback):
 * 1. the real 50-record page of contract 0xa49a…efc8 token 11 (test/fixtures/nftport): `runNode` next to a bare
 *    undici `request` + `JSON.parse` loop;
 * 2. the same page holding one integer beyond 2^53: `runNode` next to undici + plain `JSON.parse` (which rounds
 *    it) and undici + a lossless parse (lossless-json, unsafe integers as bigint).
 * Each contender pages ITERATIONS times per round; rounds are interleaved, the times are medians and each ratio is
 * the median of the rounds' own ratios.
 * chainmail is the built library (dist/index.js, what `import "chainmail"` loads; `npm run bench` builds it
 * first), not the TypeScript sources through tsx, whose transform wraps every closure a call creates.
 */

import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parse as parseLossless, parseNumberAndBigInt } from "lossless-json";
import { request } from "undici";
import { VALID_KEY } from "../test/upstreams/nftport.js";
import { interleaved, loadAverage, median, pairedRatio, startUpstream } from "./measure.js";
import { BIG_INT_CONTRACT, BIG_QUANTITY, REAL_CONTRACT, REAL_TOKEN } from "./upstream.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const ITERATIONS = 100;

/** Milliseconds per call of `once`, over ITERATIONS calls. */
async function perCall(once: () => Promise<void>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < ITERATIONS; i++) await once();
  return (performance.now() - start) / ITERATIONS;
}

export default async function bench(): Promise<void> {
  const library = pathToFileURL(join(import.meta.dirname, "..", "dist", "index.js")).href;
  const { loadConfig, nftTransactionsByToken, runNode }: typeof import("../src/index.js") = await import(library);
  const upstream = await startUpstream("nftport");
  const config = loadConfig({ NFTPORT_BASE_URL: upstream.url });
  const headers = { authorization: VALID_KEY, accept: "application/json" };
  const urlOf = (contract: string) =>
    `${upstream.url}/v0/transactions/nfts/${contract}/${REAL_TOKEN}?chain=ethereum&type=all&page_size=50`;
  const viaNode = (contract: string) => async () => {
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: contract, token_id: REAL_TOKEN, page_size: 50 }, params: { api_key: VALID_KEY } },
      { config },
    );
    if (out.data?.transactions.length !== 50) throw new Error(out.error?.error ?? "not a page of 50");
  };
  const bare = (contract: string, parse: (text: string) => unknown) => async () => {
    const res = await request(urlOf(contract), { headers });
    const page = parse(await res.body.text()) as { transactions: unknown[] };
    if (page.transactions.length !== 50) throw new Error("not a page of 50");
  };
  const plain = (text: string) => JSON.parse(text);
  const lossless = (text: string) => parseLossless(text, null, parseNumberAndBigInt);
  try {
    // The exact path must keep the one big quantity exact, where plain JSON.parse rounds it.
    const check = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: BIG_INT_CONTRACT, token_id: REAL_TOKEN }, params: { api_key: VALID_KEY } },
      { config },
    );
    const quantities = check.data?.transactions.map((r) => r.quantity);
    if (!quantities?.includes(BIG_QUANTITY)) throw new Error("the quantity beyond 2^53 did not come back exact");

    const real = { undici: bare(REAL_CONTRACT, plain), runNode: viaNode(REAL_CONTRACT) };
    const big = {
      plain: bare(BIG_INT_CONTRACT, plain),
      lossless: bare(BIG_INT_CONTRACT, lossless),
      runNode: viaNode(BIG_INT_CONTRACT),
    };
    for (const once of [...Object.values(real), ...Object.values(big)]) await perCall(once); // warm-up: JIT, pools
    const load = await loadAverage();

    const a = await interleaved(ROUNDS, { undici: () => perCall(real.undici), runNode: () => perCall(real.runNode) });
    const [undici, node] = [median(a.undici), median(a.runNode)];
    console.log(
      `real 50-record page (by token), ms/page, median of ${ROUNDS} interleaved rounds of ${ITERATIONS} (load ${load}):`,
    );
    console.log(`  undici request + JSON.parse  ${undici.toFixed(3)}`);
    const realRatio = pairedRatio(a.runNode, a.undici).toFixed(2);
    console.log(`  runNode                      ${node.toFixed(3)}   ratio ${realRatio}× (goal ≤ 1.05×)`);

    const b = await interleaved(ROUNDS, {
      plain: () => perCall(big.plain),
      lossless: () => perCall(big.lossless),
      runNode: () => perCall(big.runNode),
    });
    const [p, l, n] = [median(b.plain), median(b.lossless), median(b.runNode)];
    console.log(`same page with one integer beyond 2^53, ms/page (load ${await loadAverage()}):`);
    console.log(`  undici + JSON.parse (rounds it)     ${p.toFixed(3)}`);
    console.log(`  undici + lossless-json (exact)      ${l.toFixed(3)}`);
    console.log(
      `  runNode (exact)                     ${n.toFixed(3)}   ratio ${pairedRatio(b.runNode, b.plain).toFixed(2)}× of plain (goal ≤ 1.30×), ${pairedRatio(b.runNode, b.lossless).toFixed(2)}× of lossless`,
    );
  } finally {
    await upstream.close();
  }
}
