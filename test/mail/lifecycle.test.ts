/**
 * src/mail/lifecycle.ts on its own: the state a message is in is its highest-ranked fact, whatever the order or the
 * repeats of its facts (a property over shuffles and duplicates), bounces keep whether they were hard or soft, and
 * which facts suppress a recipient at once. The store applies it in test/mail/store.props.test.ts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  FACT_RANK,
  type Fact,
  foldFacts,
  lifecycleOf,
  MAIL_STATES,
  reasonRank,
  SUPPRESSION_REASONS,
  suppressionOf,
  transition,
} from "../../src/mail/lifecycle.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 43);

const FACTS = Object.keys(FACT_RANK) as Fact[];
/** The documented order, weakest first. */
const ORDER: Fact[] = [
  "queued",
  "sent",
  "delivered",
  "opened",
  "clicked",
  "soft_bounce",
  "hard_bounce",
  "blocked",
  "unsubscribed",
  "spam",
];

describe("lifecycleOf", () => {
  it("ranks the facts in the documented order, each with a rank of its own", () => {
    expect([...FACTS].sort((a, b) => FACT_RANK[a] - FACT_RANK[b])).toEqual(ORDER);
    expect(new Set(Object.values(FACT_RANK)).size).toBe(ORDER.length);
  });

  it("puts a message in the state named by the fact; both bounces are `bounced`, saying which", () => {
    expect(lifecycleOf("opened")).toEqual({ state: "opened", rank: FACT_RANK.opened });
    expect(lifecycleOf("soft_bounce")).toEqual({ state: "bounced", bounce: "soft", rank: FACT_RANK.soft_bounce });
    expect(lifecycleOf("hard_bounce")).toEqual({ state: "bounced", bounce: "hard", rank: FACT_RANK.hard_bounce });
    for (const fact of FACTS) expect(MAIL_STATES).toContain(lifecycleOf(fact).state);
    expect(lifecycleOf("opened")).not.toHaveProperty("bounce");
  });
});

describe("transition and foldFacts", () => {
  it("keeps the higher-ranked state: an open that arrives before its send, a soft bounce after a hard one", () => {
    expect(transition(lifecycleOf("opened"), "sent").state).toBe("opened");
    expect(transition(lifecycleOf("sent"), "opened").state).toBe("opened");
    expect(transition(lifecycleOf("hard_bounce"), "soft_bounce")).toEqual(lifecycleOf("hard_bounce"));
    expect(transition(lifecycleOf("soft_bounce"), "hard_bounce").bounce).toBe("hard");
    expect(transition(undefined, "queued")).toEqual(lifecycleOf("queued"));
  });

  it("a repeated fact changes nothing; a message without facts has no state", () => {
    const current = lifecycleOf("clicked");
    expect(transition(current, "clicked")).toBe(current);
    expect(foldFacts([])).toBeUndefined();
    expect(foldFacts(["delivered", "spam", "opened"])).toEqual(lifecycleOf("spam"));
  });

  it("property: the state after any facts is that of the highest-ranked one, whatever their order and repeats", () => {
    const facts = fc.array(fc.constantFrom(...FACTS), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(facts, fc.array(fc.nat(), { minLength: 12, maxLength: 12 }), (list, keys) => {
        const strongest = [...list].sort((a, b) => FACT_RANK[b] - FACT_RANK[a])[0]!;
        const shuffled = list
          .map((fact, i) => ({ fact, key: keys[i]! }))
          .sort((a, b) => a.key - b.key)
          .map((x) => x.fact);
        expect(foldFacts(list)).toEqual(lifecycleOf(strongest));
        expect(foldFacts(shuffled)).toEqual(foldFacts(list));
        expect(foldFacts([...list, ...list])).toEqual(foldFacts(list));
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("suppression", () => {
  it("a hard bounce, a block, an unsubscribe or a spam report suppresses at once; nothing else does", () => {
    const suppressing = FACTS.filter((fact) => suppressionOf(fact) !== undefined);
    expect(suppressing).toEqual(["hard_bounce", "blocked", "unsubscribed", "spam"]);
    for (const fact of suppressing) expect(suppressionOf(fact)).toBe(fact);
    expect(suppressionOf("soft_bounce")).toBeUndefined();
  });

  it("ranks the reasons strongest last, a manual entry weakest", () => {
    expect(SUPPRESSION_REASONS.map(reasonRank)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(reasonRank("manual")).toBeLessThan(reasonRank("soft_bounce"));
    expect(reasonRank("spam")).toBeGreaterThan(reasonRank("unsubscribed"));
  });
});
