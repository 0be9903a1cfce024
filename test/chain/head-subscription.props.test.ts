/**
 * Properties of what the head subscription reads from a node's WebSocket (head-subscription.ts `messageOf`): any
 * message, hostile or not, is read without throwing as one of its four outcomes, and a `newHeads` notification
 * gives back its block number exactly. Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { messageOf } from "../../src/chain/head-subscription.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 19);
const options = { numRuns: RUNS, seed: SEED };

const outcome = (read: ReturnType<typeof messageOf>) =>
  read === undefined || read === "subscribed" || read === "refused" || Number.isSafeInteger(read.head);

describe("reading the head subscription's messages", () => {
  it("never throws on any text or JSON, own properties only", () => {
    const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
    const shaped = fc
      .record({
        id: fc.oneof(fc.constant(1), fc.jsonValue({ maxDepth: 1 })),
        method: fc.oneof(fc.constant("eth_subscription"), fc.string()),
        params: fc.jsonValue({ maxDepth: 3 }),
        result: fc.jsonValue({ maxDepth: 2 }),
      })
      .map((v) => JSON.stringify(v));
    const inherited = fc.constant('{"__proto__":{"id":1,"result":"0x1"}}');
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), json, shaped, inherited, fc.anything()), (data) => {
        expect(outcome(messageOf(data))).toBe(true);
      }),
      options,
    );
    expect(messageOf('{"__proto__":{"id":1,"result":"0x1"}}')).toBeUndefined();
    expect(messageOf("x".repeat(70_000))).toBe("refused");
  });

  it("reads a notification's block number exactly, and nothing from a number beyond 2^53", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const note = {
          jsonrpc: "2.0",
          method: "eth_subscription",
          params: { subscription: "0x1", result: { number: `0x${n.toString(16)}` } },
        };
        expect(messageOf(JSON.stringify(note))).toEqual({ head: n });
      }),
      options,
    );
    const beyond = { method: "eth_subscription", params: { result: { number: "0x20000000000000" } } };
    expect(messageOf(JSON.stringify(beyond))).toBeUndefined();
  });
});
