/**
 * `chainmail index` through a metered endpoint (test/upstreams/metered.ts: a real JSON-RPC proxy in front of anvil
 * billing Alchemy's compute units and throttling past a budget): the index built through it must hold exactly the
 * records of the index built straight from anvil — none lost, duplicated, added or changed — the command must exit
 * 0, and what it reports spending must be what the proxy counted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRows, buildFaultChain, FAST_RETRIES, type FaultChain } from "../support/faults-chain.js";
import { runCli } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Metering, startMeteredRpc } from "../upstreams/metered.js";

let chain: FaultChain;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("metered");
  chain = await buildFaultChain(await backend.target("baseline"));
}, 180_000);

afterAll(async () => {
  await chain?.anvil.stop();
  await backend?.close();
});

interface Reported {
  last_block: number;
  records: number;
  rpc: {
    calls: Record<string, number>;
    cu?: number;
    throttled_share: number;
    rate_per_second: number | null;
    random_throttling?: boolean;
  };
}

/** `chainmail index --once` through a metered proxy; its exit, report, the index it built and the proxy's meter. */
async function indexThrough(name: string, metering: Metering, env: Record<string, string> = {}) {
  const proxy = await startMeteredRpc(chain.anvil.rpcUrl, metering);
  const db = await backend.target(name);
  try {
    const run = await runCli(["index", "--once", "--rpc", proxy.url, "--db", db, ...chain.flags], {
      env: { ...FAST_RETRIES, INDEX_RPC_PROVIDER: "alchemy", ...env },
    });
    const reported = run.code === 0 ? (JSON.parse(run.stdout.trim()) as Reported) : undefined;
    return { ...run, reported, rows: await allRows(db), meter: proxy.meter };
  } finally {
    await proxy.close();
  }
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);

describe("the index through a metered endpoint", { timeout: 120_000 }, () => {
  it("reports the calls and compute units the provider billed (no budget)", async () => {
    const run = await indexThrough("clean", {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(chain.baseline);
    expect(run.reported!.rpc.calls).toEqual(run.meter.calls);
    expect(run.reported!.rpc.cu).toBe(run.meter.units);
    expect(run.reported!.rpc.throttled_share).toBe(0);
  });

  it("keeps to a CU/s budget answered with HTTP 429 (throttled calls billed, as the report counts them)", async () => {
    // Alchemy's free plan: slow start runs past it within the run (about 1,150 CU), so it throttles.
    const run = await indexThrough("http429", { unitsPerSecond: 330, billThrottled: true });
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(chain.baseline);
    expect(run.reported!.rpc.calls).toEqual(run.meter.calls);
    expect(run.reported!.rpc.cu).toBe(run.meter.units);
    // Every throttled call was asked again: the share the report gives is the proxy's.
    expect(run.reported!.rpc.throttled_share).toBeCloseTo(total(run.meter.throttled) / total(run.meter.calls), 3);
    expect(run.reported!.rpc.rate_per_second).toBeGreaterThan(0);
    expect(total(run.meter.throttled)).toBeGreaterThan(0);
  });

  it("keeps to a 10-second bucket answered with per-item 429 inside 200 batches (throttled items not billed)", async () => {
    // A bucket of 600 CU refilled at 60 CU/s, less than the run (about 1,150 CU) needs in its first seconds: it empties.
    const run = await indexThrough("item429", { unitsPerSecond: 60, window: "bucket", flavour: "item" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(chain.baseline);
    expect(total(run.meter.throttled)).toBeGreaterThan(0);
    expect(run.reported!.rpc.calls).toEqual(run.meter.calls);
    expect(run.reported!.rpc.cu).toBeGreaterThanOrEqual(run.meter.units);
  });

  it("honours Retry-After", async () => {
    const run = await indexThrough("retryafter", { unitsPerSecond: 330, retryAfterSeconds: 1 });
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(chain.baseline);
    expect(total(run.meter.throttled)).toBeGreaterThan(0);
  });

  for (const flavour of ["http", "item"] as const) {
    it(`retries 30 % random 429s (${flavour}) and loses nothing`, async () => {
      const run = await indexThrough(`random_${flavour}`, { randomShare: 0.3, flavour, seed: 7 });
      expect(run.code, run.stderr).toBe(0);
      expect(run.rows).toEqual(chain.baseline);
      expect(total(run.meter.throttled)).toBeGreaterThan(0);
      expect(run.reported!.rpc.calls).toEqual(run.meter.calls);
      // Items of a batch refused here and there are told from a budget at once (HTTP 429s need the rates compared).
      if (flavour === "item") expect(run.reported!.rpc.random_throttling).toBe(true);
    });
  }

  for (const status of [200, 413] as const) {
    it(`sends smaller batches where every item of a larger one is refused "batch too large" (HTTP ${status})`, async () => {
      // A plan that lets the head window's headers go in batches of more than 7 (read ahead, a batch is cut to what
      // the pacer's bucket holds: 3 headers at the smallest plan).
      const run = await indexThrough(
        `batch_${status}`,
        { maxBatch: 7, maxBatchStatus: status },
        { INDEX_RPC_CU_PER_SECOND: "20000" },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.rows).toEqual(chain.baseline);
      expect(run.meter.batchesRefused).toBeGreaterThan(0);
      // The size is learnt: batches of 100 halved to 50, 25, 12, 6, then kept (a few refusals, not one per batch).
      expect(run.meter.batchesRefused).toBeLessThanOrEqual(4 * 4);
      expect(run.stderr).toMatch(
        /refuses a batch of \d+ requests \(.*batch too large.*\): sending at most \d+ at a time/,
      );
    });
  }
});
