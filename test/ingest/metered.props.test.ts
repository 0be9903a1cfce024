/**
 * Property: whatever budget and throttling a metered endpoint applies (test/upstreams/metered.ts, drawn at random:
 * budget, window, 429 kind, `Retry-After`, a share of random 429s, a batch size limit, billing of 429s, with the
 * provider's plan known or stated), the index built through it equals the one built straight from anvil, with
 * every record once and unchanged, and the calls it reports are the calls the endpoint counted. A short chain (the
 * demo's marketplace activity and 600 mints); fixed seed (PROPS_SEED); PROPS_RUNS schedules (default 3).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { createActivity, createBulkActivity } from "../../src/demo/activity.js";
import { deployAll } from "../../src/demo/contracts.js";
import { type DevChain, startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";
import { allRows, FAST_RETRIES } from "../support/faults-chain.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Metering, startMeteredRpc } from "../upstreams/metered.js";

const RUNS = Math.min(Number(process.env.PROPS_RUNS ?? 3), 200);
const SEED = Number(process.env.PROPS_SEED ?? 31);

let anvil: DevChain;
let backend: IndexBackend;
let baseline: ActivityRow[];
let head: number;
let options: { seaport: string[]; ethTokens: string[]; priceFeed: string };

beforeAll(async () => {
  backend = await openBackend("metered-props");
  anvil = await startAnvil();
  const deployed = await deployAll(anvil.rpcUrl);
  await createActivity(anvil.rpcUrl, deployed);
  await createBulkActivity(anvil.rpcUrl, deployed, 600, 100);
  options = { seaport: [deployed.seaport], ethTokens: [deployed.weth], priceFeed: deployed.priceFeed };
  const db = await backend.target("baseline");
  head = (await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, ...options })).lastBlock;
  baseline = await allRows(db);
}, 180_000);

afterAll(async () => {
  await anvil?.stop();
  await backend?.close();
});

const metering: fc.Arbitrary<Metering> = fc.record(
  {
    unitsPerSecond: fc.integer({ min: 150, max: 3_000 }),
    window: fc.constantFrom("second" as const, "bucket" as const),
    flavour: fc.constantFrom("http" as const, "item" as const),
    retryAfterSeconds: fc.constantFrom(0, 1),
    billThrottled: fc.boolean(),
    randomShare: fc.double({ min: 0.01, max: 0.4, noNaN: true }),
    maxBatch: fc.integer({ min: 2, max: 40 }),
    maxBatchStatus: fc.constantFrom(200 as const, 413 as const),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  },
  { requiredKeys: ["seed"] },
);

/** The user's side: the provider named or not, a plan stated in CU or requests per second, or none. */
const plan = fc.record(
  {
    INDEX_RPC_PROVIDER: fc.constantFrom("alchemy", "generic"),
    INDEX_RPC_CU_PER_SECOND: fc.integer({ min: 100, max: 3_000 }).map(String),
    INDEX_RPC_REQUESTS_PER_SECOND: fc.integer({ min: 5, max: 200 }).map(String),
  },
  { requiredKeys: [] },
);

describe("the index through random budgets and throttling", () => {
  it("equals the index built straight from the node, and reports the calls the endpoint counted", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(metering, plan, fc.integer({ min: 1, max: 6 }), async (schedule, stated, concurrency) => {
        const proxy = await startMeteredRpc(anvil.rpcUrl, schedule);
        try {
          const db = await backend.target(`run_${run++}`);
          const result = await indexChain({
            rpcUrl: proxy.url,
            dbPath: db,
            follow: false,
            concurrency,
            config: loadConfig({ ...FAST_RETRIES, ...stated }),
            ...options,
          });
          expect(result.lastBlock).toBe(head);
          expect(result.records).toBe(baseline.length);
          expect(await allRows(db)).toEqual(baseline);
          // Refused batches aside (their items were sent, not served), every call sent was counted by the endpoint.
          if (proxy.meter.batchesRefused === 0) expect(result.rpc.calls).toEqual(proxy.meter.calls);
        } finally {
          await proxy.close();
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);
});
