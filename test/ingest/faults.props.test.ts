/**
 * Property: whatever mix of a hosted provider's faults strikes (test/upstreams/faulty-rpc.ts, drawn at random with
 * their rates, sizes and seed), the index built through them equals the one built straight from anvil, with every
 * record once and unchanged. Fixed seed (PROPS_SEED); PROPS_RUNS schedules (default 3: each indexes ~8,000
 * records; `npm run test:props` runs more).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { indexChain } from "../../src/ingest/indexer.js";
import { allRows, buildFaultChain, FAST_RETRIES, type FaultChain } from "../support/faults-chain.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Faults, startFaultyRpc } from "../upstreams/faulty-rpc.js";

const RUNS = Math.min(Number(process.env.PROPS_RUNS ?? 3), 200);
const SEED = Number(process.env.PROPS_SEED ?? 19);

let chain: FaultChain;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("faults-props");
  chain = await buildFaultChain(await backend.target("baseline"));
}, 180_000);

afterAll(async () => {
  await chain?.anvil.stop();
  await backend?.close();
});

const faults: fc.Arbitrary<Faults> = fc.record(
  {
    lag: fc.record({
      blocks: fc.integer({ min: 1, max: 40 }),
      ms: fc.integer({ min: 100, max: 1_500 }),
      answer: fc.constantFrom("[]" as const, "null" as const),
    }),
    truncateAt: fc.constantFrom(1_000, 2_000),
    itemThrottle: fc.double({ min: 0.01, max: 0.4, noNaN: true }),
    brokenBody: fc.record({
      chance: fc.double({ min: 0.01, max: 0.2, noNaN: true }),
      how: fc.constantFrom("cut" as const, "reset" as const),
    }),
    gateway504Over: fc.integer({ min: 1, max: 16 }),
    refuseBatches: fc.boolean(),
    throttleBurst: fc.record({ ms: fc.integer({ min: 50, max: 800 }), every: fc.integer({ min: 2_000, max: 5_000 }) }),
    rangeCap: fc.record({
      provider: fc.constantFrom("alchemy" as const, "infura" as const, "quicknode" as const, "geth" as const),
      blocks: fc.integer({ min: 1, max: 12 }),
    }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  },
  { requiredKeys: ["seed"] },
);

describe("the index through random fault schedules", () => {
  it("equals the index built straight from the node", async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(faults, fc.integer({ min: 1, max: 6 }), async (schedule, concurrency) => {
        const proxy = await startFaultyRpc(chain.anvil.rpcUrl, schedule);
        try {
          const db = await backend.target(`run_${run++}`);
          const result = await indexChain({
            rpcUrl: proxy.url,
            dbPath: db,
            follow: false,
            concurrency,
            config: loadConfig(FAST_RETRIES),
            ...chain.options,
          });
          expect(result.lastBlock).toBe(chain.head);
          expect(result.records).toBe(chain.baseline.length);
          expect(await allRows(db)).toEqual(chain.baseline);
        } finally {
          await proxy.close();
        }
      }),
      { numRuns: RUNS, seed: SEED },
    );
  }, 600_000);
});
