/**
 * The embedded demo (`npm start`): how long each phase takes, from nothing to "Running", and how fast the bulk
 * minter makes ERC-721 events for the ingestion bench. BENCH_DEMO_EVENTS scales the bulk part.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createActivity, createBulkActivity } from "../src/demo/activity.js";
import { deployAll } from "../src/demo/contracts.js";
import { startDemo } from "../src/demo/demo.js";
import { startAnvil } from "../src/demo/devchain.js";

const EVENTS = Number(process.env.BENCH_DEMO_EVENTS ?? 100_000);
const dir = join(import.meta.dirname, "..", ".bench-tmp", "demo");

const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;

export default async function bench(): Promise<void> {
  let t = process.hrtime.bigint();
  const chain = await startAnvil();
  const anvilMs = ms(t);
  try {
    t = process.hrtime.bigint();
    const deployed = await deployAll(chain.rpcUrl);
    const deployMs = ms(t);
    t = process.hrtime.bigint();
    const manifest = await createActivity(chain.rpcUrl, deployed);
    const activityMs = ms(t);
    console.log(
      `phases: anvil up ${anvilMs.toFixed(0)} ms, deployAll (7 contracts) ${deployMs.toFixed(0)} ms, ` +
        `createActivity (${manifest.records.length} records, blocks ${manifest.blocks.join("-")}) ${activityMs.toFixed(0)} ms`,
    );
    t = process.hrtime.bigint();
    const bulk = await createBulkActivity(chain.rpcUrl, deployed, EVENTS);
    const bulkS = ms(t) / 1000;
    console.log(
      `bulk: ${bulk.events} ERC-721 mint events in blocks ${bulk.blocks.join("-")} in ${bulkS.toFixed(2)} s = ` +
        `${Math.round(bulk.events / bulkS)} events/s`,
    );
  } finally {
    await chain.stop();
  }

  // The whole of `npm start` up to "Running" (index, service and the three retrievers included), then Ctrl-C.
  rmSync(dir, { recursive: true, force: true });
  try {
    t = process.hrtime.bigint();
    const demo = await startDemo({ port: 0, dataDir: dir, print: () => {} });
    const readyMs = ms(t);
    t = process.hrtime.bigint();
    await demo.stop();
    console.log(`startDemo: ready in ${readyMs.toFixed(0)} ms, stopped in ${ms(t).toFixed(0)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
