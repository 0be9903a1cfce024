/**
 * What the loopback providers (faulty-rpc.ts, metered.ts) share: Alchemy's throttling and log-cap words as its
 * endpoints answer them, and the seeded generator their faults are drawn from.
 */

/** Alchemy's message for a call over the plan's compute units per second (HTTP 429, or an item's 429 in a batch). */
export const ALCHEMY_THROTTLE_MESSAGE =
  "Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput";

const hex = (n: number) => `0x${n.toString(16)}`;

/** Alchemy's refusal of an `eth_getLogs` answer over 10K logs, naming the range `[from, end]` that works. */
export function alchemyLogCapError(id: unknown, from: number, end: number) {
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: -32602,
      message: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [${hex(from)}, ${hex(end)}]`,
    },
  };
}

/** A small seeded generator (mulberry32): the same seed draws the same faults. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
