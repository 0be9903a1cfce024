/**
 * src/watch/run.ts's email ids on their own. Every email the watch journals carries a CustomID that names its intent
 * (a rule's record or records, a retraction, an hour's overflow digest, a scheduled digest): the same intent always
 * gets the same id, so a send retried after a crash is known to Mailjet and the journal as the one already sent,
 * and two different intents never share one, or one would be taken for the other and never sent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MessageResult } from "../../src/schemas/email.js";
import { customIdOf, errorText, followUpIdOf, scheduledIdOf } from "../../src/watch/run.js";

const SEED = 20261128;
const RUNS = 300;

/** A rule id as the watch's configuration allows it. */
const ruleId = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
/** A record key as recordKeys gives it: 24 hex characters, `.2`, `.3`… for a repeat in one transaction. */
const recordKey = fc
  .tuple(fc.stringMatching(/^[0-9a-f]{24}$/), fc.integer({ min: 1, max: 4 }))
  .map(([id, n]) => (n === 1 ? id : `${id}.${n}`));
const keyList = fc.uniqueArray(recordKey, { minLength: 1, maxLength: 6 });
/** A digest slot: a whole minute between 2020 and 2100. */
const slot = fc.integer({ min: 26_297_280, max: 68_374_080 }).map((minute) => minute * 60_000);

type Intent =
  | { family: "records"; rule: string; keys: string[] }
  | { family: "r" | "h"; rule: string; keys: string[] }
  | { family: "scheduled"; rule: string; slot: number };

const intent: fc.Arbitrary<Intent> = fc.oneof(
  fc.record({ family: fc.constant("records" as const), rule: ruleId, keys: keyList }),
  fc.record({ family: fc.constantFrom("r" as const, "h" as const), rule: ruleId, keys: keyList }),
  fc.record({ family: fc.constant("scheduled" as const), rule: ruleId, slot }),
);

function idOf(i: Intent): string {
  if (i.family === "records") return customIdOf(i.rule, i.keys);
  if (i.family === "scheduled") return scheduledIdOf(i.rule, i.slot);
  return followUpIdOf(i.rule, i.family, i.keys);
}

/** Whether two intents are the same: the same family, rule and records (in order) or slot. */
function same(a: Intent, b: Intent): boolean {
  if (a.family !== b.family || a.rule !== b.rule) return false;
  if (a.family === "scheduled" || b.family === "scheduled") {
    return a.family === "scheduled" && b.family === "scheduled" && a.slot === b.slot;
  }
  return a.keys.join(",") === b.keys.join(",");
}

describe("the watch's email ids", () => {
  it("name one record readably, and several, retractions and overflow digests by a digest of their keys", () => {
    const key = "0123456789abcdef01234567";
    expect(customIdOf("whales", [key])).toBe(`cw.whales.${key}`);
    expect(customIdOf("whales", [key, `${key}.2`])).toMatch(/^cw\.whales\.d[0-9a-f]{24}$/);
    expect(followUpIdOf("whales", "r", [key])).toMatch(/^cw\.whales\.r[0-9a-f]{24}$/);
    expect(followUpIdOf("whales", "h", [key])).toMatch(/^cw\.whales\.h[0-9a-f]{24}$/);
    expect(scheduledIdOf("daily", Date.UTC(2026, 10, 29, 7))).toBe("cw.daily.s20261129T0700Z");
  });

  it("give the same intent the same id, whenever it is asked", () => {
    fc.assert(
      fc.property(intent, (i) => {
        expect(idOf(structuredClone(i))).toBe(idOf(i));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("never give two different intents the same id, across rules and kinds of email", () => {
    fc.assert(
      fc.property(intent, intent, (a, b) => {
        if (same(a, b)) expect(idOf(a)).toBe(idOf(b));
        else expect(idOf(a)).not.toBe(idOf(b));
      }),
      { numRuns: RUNS * 3, seed: SEED },
    );
  });

  it("give the same rule's records four different ids as records, retraction, overflow digest and schedule", () => {
    fc.assert(
      fc.property(ruleId, keyList, slot, (rule, keys, at) => {
        const ids = [
          customIdOf(rule, keys),
          followUpIdOf(rule, "r", keys),
          followUpIdOf(rule, "h", keys),
          scheduledIdOf(rule, at),
        ];
        expect(new Set(ids).size).toBe(4);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("stay short and plain (a rule id of 64 characters leaves every id within 100 ASCII characters)", () => {
    fc.assert(
      fc.property(intent, (i) => {
        const id = idOf(i);
        expect(id).toMatch(/^cw\.[A-Za-z0-9_-]{1,64}\.[0-9a-zA-Z.]+$/);
        expect(id.length).toBeLessThanOrEqual(100);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("errorText", () => {
  it("joins a failed message's errors as `code: message`, and is empty when there are none", () => {
    const entry = (ErrorCode: string, ErrorMessage: string) => ({
      ErrorIdentifier: "1ab23cd4-e567-8901-2345-6789f0gh1i2j",
      ErrorCode,
      StatusCode: 400,
      ErrorMessage,
      ErrorRelatedTo: ["To[0].Email"],
    });
    const failed: MessageResult = {
      Status: "error",
      Errors: [entry("mj-0013", '"x" is an invalid email address.'), entry("mj-0004", "Type mismatch.")],
    };
    expect(errorText(failed)).toBe('mj-0013: "x" is an invalid email address.; mj-0004: Type mismatch.');
    expect(errorText({ Status: "success" })).toBe("");
  });
});
