/**
 * The pacer (src/chain/pacer.ts) on its own, against a simulated provider on a simulated clock: the wait
 * it asks for advances the clock, so a minute of pacing runs in milliseconds and nothing depends on the machine's
 * speed. The provider bills Alchemy's table and throttles past a budget per 1-second window, or throttles a random
 * share of requests whatever the rate.
 */
import { describe, expect, it } from "vitest";
import { Pacer, type PacerOptions } from "../../src/chain/pacer.js";
import { PROVIDER } from "../../src/chain/providers.js";
import { seededRandom } from "../upstreams/provider-words.js";

interface Simulation {
  /** CU per 1-second window; undefined: no budget. */
  budget?: number;
  /** Share of requests throttled whatever the rate. */
  randomShare?: number;
  stated?: number;
  provider?: keyof typeof PROVIDER;
  seconds: number;
  /** Headers per batch (16 CU each). */
  batch?: number;
}

/** Sends header batches one after the other for `seconds` of simulated time; the rate over time and the outcome. */
/** A pacer on a simulated clock: the waits it asks for advance `clock.ms`, as the tests' round trips do. */
function onClock(options: Partial<PacerOptions> = {}) {
  const clock = { ms: 0 };
  const pacer = new Pacer({
    provider: PROVIDER.alchemy,
    ...options,
    wait: async (ms) => {
      clock.ms += ms;
    },
    now: () => clock.ms,
  });
  return { pacer, clock };
}

async function simulate(sim: Simulation) {
  const draw = seededRandom(3);
  const { pacer, clock } = onClock({ provider: PROVIDER[sim.provider ?? "alchemy"], unitsPerSecond: sim.stated });
  const calls = Array.from({ length: sim.batch ?? 3 }, () => ({ method: "eth_getBlockByNumber" }));
  let window = -1;
  let used = 0;
  let served = 0;
  let throttled = 0;
  let overBudget = 0;
  const rates: number[] = [];
  while (clock.ms < sim.seconds * 1000) {
    await pacer.take(calls);
    const sentAt = clock.ms;
    clock.ms += 5; // the round trip
    const cost = pacer.cost(calls);
    if (Math.floor(clock.ms / 1000) !== window) {
      window = Math.floor(clock.ms / 1000);
      used = 0;
    }
    let refused = sim.randomShare !== undefined && draw() < sim.randomShare;
    if (!refused && sim.budget !== undefined) {
      refused = used + cost > sim.budget;
      if (!refused) used += cost;
      else overBudget++;
    }
    if (refused) throttled++;
    else served += cost;
    pacer.answered(calls.length, refused ? calls.length : 0, cost, false, sentAt);
    rates.push(pacer.currentRate ?? 0);
  }
  return { pacer, rates, served, throttled, overBudget, clock: clock.ms };
}

describe("the pacer", () => {
  it("starts at 0.9x the provider's smallest plan and doubles while nothing is throttled (slow start)", async () => {
    const { rates } = await simulate({ seconds: 3 });
    expect(rates[0]).toBeCloseTo(297, 0);
    expect(Math.max(...rates)).toBeGreaterThanOrEqual(297 * 8);
  });

  it("is not paced until throttled where the provider's plan is unknown", async () => {
    const { pacer } = await simulate({ seconds: 1, provider: "generic" });
    expect(pacer.currentRate).toBeUndefined();
    expect(pacer.usage()).toMatchObject({ unit: "requests", throttledShare: 0 });
  });

  it("lowers the rate by 0.7x on a throttled answer, at most once per half second", async () => {
    const { pacer } = onClock();
    await pacer.take([{ method: "eth_getLogs" }]);
    pacer.answered(1, 1);
    expect(pacer.currentRate).toBeCloseTo(297 * 0.7, 5);
    pacer.answered(1, 1);
    expect(pacer.currentRate).toBeCloseTo(297 * 0.7, 5);
    expect(pacer.usage()).toMatchObject({ calls: { eth_getLogs: 1 }, units: 75, unit: "CU" });
  });

  it("lowers the rate multiplicatively on throttling and settles near the budget", async () => {
    const { pacer, rates, served, throttled } = await simulate({ budget: 660, seconds: 60 });
    const settled = rates.slice(-200);
    expect(Math.min(...settled)).toBeGreaterThan(660 * 0.4);
    expect(Math.max(...settled)).toBeLessThan(660 * 1.6);
    // What got through is most of the budget, and throttled requests are few.
    expect(served / 60).toBeGreaterThan(660 * 0.6);
    expect(throttled / (pacer.usage().calls.eth_getBlockByNumber! / 3)).toBeLessThan(0.2);
    expect(pacer.usage().randomThrottling).toBe(false);
  });

  it("never exceeds a stated cap, and does not slow-start past it", async () => {
    const { rates, served, clock } = await simulate({ stated: 400, seconds: 20 });
    expect(Math.max(...rates)).toBeLessThanOrEqual(400);
    expect(served / (clock / 1000)).toBeLessThanOrEqual(400 * 1.05);
  });

  it("takes 429s at the same share whatever the rate as independent, and does not slow down for them", async () => {
    const { pacer, rates } = await simulate({ randomShare: 0.3, seconds: 60 });
    expect(pacer.usage().randomThrottling).toBe(true);
    // It went back to (at least) where it started.
    expect(rates.at(-1)).toBeGreaterThanOrEqual(297);
  });

  it("takes a batch's items throttled here and there as independent at once, and a throttled tail as the budget's", async () => {
    const { pacer } = onClock();
    const calls = Array.from({ length: 10 }, () => ({ method: "eth_getBlockByNumber" }));
    await pacer.take(calls);
    pacer.answered(10, 3, pacer.cost(calls), true);
    expect(pacer.currentRate).toBeCloseTo(297, 5);
    expect(pacer.usage().randomThrottling).toBe(true);
    pacer.answered(10, 3, pacer.cost(calls), false);
    expect(pacer.currentRate).toBeCloseTo(297 * 0.7, 5);
  });

  it("after an outage (every call refused for seconds) goes back to the pace before it, not to where it fell", async () => {
    const { pacer, clock } = onClock({ unitsPerSecond: 660 });
    const calls = [{ method: "eth_getBlockByNumber" }];
    const before = pacer.currentRate!;
    for (const end of [3_000, 6_000]) {
      const refused = end === 3_000;
      while (clock.ms < end) {
        await pacer.take(calls);
        clock.ms += 5;
        pacer.answered(1, refused ? 1 : 0, pacer.cost(calls));
      }
      if (refused) expect(pacer.currentRate!).toBeLessThan(before * 0.5);
    }
    expect(pacer.currentRate!).toBeGreaterThanOrEqual(before * 0.9);
  });

  it("still lowers the rate for a budget once 429s were judged independent", async () => {
    const { pacer, served, overBudget } = await simulate({ randomShare: 0.3, budget: 660, seconds: 60 });
    expect(pacer.usage().randomThrottling).toBe(true);
    // Most of the budget is used (the random 429s do not hold it back), and the budget's own 429s stay a minority.
    expect(served / 60).toBeGreaterThan(660 * 0.6);
    expect(overBudget / (pacer.usage().calls.eth_getBlockByNumber! / 3)).toBeLessThan(0.3);
  });

  it("judges a request refused whole by the next ones sent after it: one served, the 429 was not the budget's", async () => {
    const { pacer, clock } = onClock();
    const header = [{ method: "eth_getBlockByNumber" }];
    // Enough answers for the rate to be judged (a decrease needs them), all served.
    for (let i = 0; i < 10; i++) {
      await pacer.take(header);
      pacer.answered(1, 0, 16, false, clock.ms);
      clock.ms += 10;
    }
    const before = pacer.currentRate!;
    await pacer.take(header);
    const refusedSent = clock.ms;
    clock.ms += 10;
    pacer.answered(1, 1, 16, false, refusedSent);
    // The next request, sent after that answer, is served: a budget that ran out would have refused it too.
    await pacer.take(header);
    pacer.answered(1, 0, 16, false, clock.ms);
    expect(pacer.currentRate).toBeGreaterThanOrEqual(before);
    // Refused again instead: once more is not yet the budget (random 429s come two in a row often enough); twice
    // more in a row is, and the rate falls.
    clock.ms += 600;
    await pacer.take(header);
    const then = pacer.currentRate!;
    const sent = clock.ms;
    clock.ms += 10;
    pacer.answered(1, 1, 16, false, sent);
    await pacer.take(header);
    pacer.answered(1, 1, 16, false, clock.ms);
    expect(pacer.currentRate).toBeCloseTo(then, 5);
    clock.ms += 10;
    await pacer.take(header);
    pacer.answered(1, 1, 16, false, clock.ms);
    expect(pacer.currentRate).toBeCloseTo(then * 0.7, 5);
  });

  it("prices batches by the provider's costs, else counts requests", () => {
    const wait = async () => {};
    const alchemy = new Pacer({ provider: PROVIDER.alchemy, wait });
    expect(alchemy.cost([{ method: "eth_getLogs" }, { method: "eth_getBlockByNumber" }])).toBe(91);
    expect(alchemy.maxPieceCost).toBeCloseTo(297, 0);
    const infura = new Pacer({ provider: PROVIDER.infura, wait });
    expect(infura.cost([{ method: "eth_getLogs" }, { method: "eth_getBlockByNumber" }])).toBe(2);
    expect(infura.unit).toBe("requests");
    const stated = new Pacer({ provider: PROVIDER.alchemy, requestsPerSecond: 25, wait });
    expect(stated.unit).toBe("requests");
    expect(stated.currentRate).toBeCloseTo(22.5, 5);
  });

  it("lets calls read ahead of need go only when no needed call waits, in the budget left over", async () => {
    const { pacer, clock } = onClock({ unitsPerSecond: 300 });
    const headers = Array.from({ length: 10 }, () => ({ method: "eth_getBlockByNumber" }));
    const order: string[] = [];
    // The bucket is emptied first, so that every call below waits its turn.
    await pacer.take(headers);
    const spare = [1, 2].map((n) => pacer.take(headers, true).then(() => order.push(`ahead ${n}`)));
    const needed = [1, 2].map((n) => pacer.take([{ method: "eth_getLogs" }]).then(() => order.push(`logs ${n}`)));
    await Promise.all([...spare, ...needed]);
    expect(order).toEqual(["logs 1", "logs 2", "ahead 1", "ahead 2"]);
    // At the paced rate all the same: the 470 CU after the first batch at 0.9 × 300 CU/s.
    expect(clock.ms).toBeGreaterThan(((75 * 2 + 160 * 2) / 270) * 1000 * 0.9);
  });

  it("keeps a stated plan in every one-second window, whatever mix of small and large calls it paces", async () => {
    const { pacer, clock } = onClock({ unitsPerSecond: 330 });
    // In turn: a batch of a second of the plan (18 headers: 288 CU), a logs call and a header: the bucket (59 CU)
    // goes into debt for the large ones.
    const mix = [
      Array.from({ length: 18 }, () => ({ method: "eth_getBlockByNumber" })),
      [{ method: "eth_getLogs" }],
      [{ method: "eth_getBlockByNumber" }],
    ];
    const released: { at: number; cost: number }[] = [];
    for (let i = 0; i < 300; i++) {
      const calls = mix[i % 3]!;
      await pacer.take(calls);
      released.push({ at: clock.ms, cost: pacer.cost(calls) });
      clock.ms += 3;
    }
    // Every window a provider might count in (starting at any release) holds at most the plan.
    for (const start of released) {
      const inWindow = released.filter((r) => r.at >= start.at && r.at < start.at + 1000);
      expect(inWindow.reduce((sum, r) => sum + r.cost, 0)).toBeLessThanOrEqual(330);
    }
  });

  it("does not raise the rate for calls read ahead of need (they are not demand)", async () => {
    const { pacer, clock } = onClock();
    const header = [{ method: "eth_getBlockByNumber" }];
    while (clock.ms < 5_000) {
      await pacer.take(header, true);
      pacer.answered(1, 0, 16);
    }
    expect(pacer.currentRate).toBeCloseTo(297, 0);
    // Needed calls held back raise it as before (slow start).
    const start = clock.ms;
    while (clock.ms < start + 2_000) {
      await pacer.take(header);
      pacer.answered(1, 0, 16);
    }
    expect(pacer.currentRate).toBeGreaterThan(297 * 2);
  });

  it("does not slow down in its first seconds for whole requests refused at random (30 %), on almost every draw", async () => {
    // 40 runs of 5 seconds, as short as a whole collection's history takes: two random refusals in a row right after
    // another once lowered the pace in 12 of them (and ended slow start); a budget needs three in a row now.
    let slowed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const draw = seededRandom(seed);
      const { pacer, clock } = onClock();
      const batch = Array.from({ length: 3 }, () => ({ method: "eth_getBlockByNumber" }));
      let lowest = Number.POSITIVE_INFINITY;
      while (clock.ms < 5_000) {
        await pacer.take(batch);
        const sentAt = clock.ms;
        clock.ms += 5;
        pacer.answered(3, draw() < 0.3 ? 3 : 0, 48, false, sentAt);
        lowest = Math.min(lowest, pacer.currentRate!);
      }
      if (lowest < 297) slowed++;
    }
    expect(slowed).toBeLessThanOrEqual(3);
  });

  it("does not slow down for items refused at random in small batches, whatever their place in the batch", async () => {
    const draw = seededRandom(11);
    const { pacer, clock } = onClock();
    const batch = Array.from({ length: 3 }, () => ({ method: "eth_getBlockByNumber" }));
    while (clock.ms < 5_000) {
      await pacer.take(batch);
      const sentAt = clock.ms;
      clock.ms += 5;
      // 30 % of items refused, each on its own: often the last one or two, as a budget's tail would be.
      const refused = batch.map(() => draw() < 0.3);
      const throttled = refused.filter(Boolean).length;
      const scattered = throttled > 0 && refused.lastIndexOf(false) > refused.indexOf(true);
      pacer.answered(3, throttled, 48, scattered, sentAt);
    }
    // Slow start went on: the pace is well above where it began (a decrease for each tail would sink it).
    expect(pacer.currentRate).toBeGreaterThan(297 * 2);
  });
});
