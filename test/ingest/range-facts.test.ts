/**
 * src/ingest/range-facts.ts holds types only: the facts a range read comes to, one tagged union. What it promises is
 * checked at the type level (these `expectTypeOf` lines fail `tsc --noEmit`, which runs over test/): which facts
 * the fetcher may say (LogsFact), which the range reader may (ReadFact: never the raw logs answer), and which facts
 * carry the density they saw (`seen`), so that the planner can learn from a cut, a pause or a moved chain too.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { Cut, LogsFact, NotYet, RangeFact, ReadFact, Refused, Seen } from "../../src/ingest/range-facts.js";

describe("range facts", () => {
  it("reads every fact by its kind, each kind naming one shape", () => {
    expectTypeOf<RangeFact["kind"]>().toEqualTypeOf<
      "logs" | "read" | "refused" | "dense end" | "cut" | "not yet" | "moved"
    >();
    expectTypeOf<Extract<RangeFact, { kind: "cut" }>>().toEqualTypeOf<Cut>();
    expectTypeOf<Extract<RangeFact, { kind: "not yet" }>>().toEqualTypeOf<NotYet>();
    expectTypeOf<Extract<RangeFact, { kind: "refused" }>>().toEqualTypeOf<Refused>();
  });

  it("lets the fetcher say logs, a refusal or a block not shown yet, and the range reader anything but raw logs", () => {
    expectTypeOf<LogsFact["kind"]>().toEqualTypeOf<"logs" | "refused" | "not yet">();
    expectTypeOf<ReadFact["kind"]>().toEqualTypeOf<"read" | "refused" | "dense end" | "cut" | "not yet" | "moved">();
  });

  it("carries the density seen on a read, a cut, a pause and a moved chain, never on a refusal", () => {
    expectTypeOf<Extract<RangeFact, { kind: "read" }>["seen"]>().toEqualTypeOf<Seen | undefined>();
    expectTypeOf<Cut["seen"]>().toEqualTypeOf<Seen | undefined>();
    expectTypeOf<NotYet["seen"]>().toEqualTypeOf<Seen | undefined>();
    expectTypeOf<Extract<RangeFact, { kind: "moved" }>["seen"]>().toEqualTypeOf<Seen | undefined>();
    expectTypeOf<Refused>().not.toHaveProperty("seen");
    expectTypeOf<Cut["capAt"]>().toEqualTypeOf<number | undefined>();
  });
});
