/** The watch file: every problem at once with field names (the nodes' error shape), and a property-based run. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../src/core/errors.js";
import { parseWatchConfig } from "../src/watch/config.js";

const ADDRESS = "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0";

function problems(value: unknown): { field: string; message: string }[] {
  try {
    parseWatchConfig(value);
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    const payload = (err as ChainmailError).toPayload();
    expect(payload.details.code).toBe("invalid_input");
    const violations = payload.details.violations as { field: string; message: string }[];
    expect(violations.length).toBeGreaterThan(0);
    return violations;
  }
  return [];
}

describe("watch configuration", () => {
  it("accepts a minimal file and fills in the defaults", () => {
    const config = parseWatchConfig(
      { from: { Email: "w@example.com" }, rules: [{ id: "r", mail: { to: [{ Email: "a@example.com" }] } }] },
      "index",
    );
    expect(config).toMatchObject({ source: "index", pollMs: 2000, reorgDepth: 12 });
    expect(config.rules[0]).toMatchObject({ type: ["sale"], mode: "each", kind: "on-chain" });
  });

  it("reports every problem of the file at once, each naming its field", () => {
    const found = problems({
      poll_seconds: 0,
      extra: true,
      rules: [
        {
          id: "bad id!",
          token_id: "12",
          type: ["bid"],
          min_price: { eth: 1, usd: 2 },
          mode: "digest",
          mail: { to: [{ Email: "not an address" }], subject: "{{var:nope}}" },
        },
      ],
    });
    expect(found.map((p) => p.field).sort()).toEqual(["extra", "poll_seconds", "rules[0].id"].sort());
    // Schema problems first; the rules across fields follow once the shapes are right.
    const cross = problems({
      rules: [
        {
          id: "a",
          token_id: "12",
          type: ["bid"],
          min_price: { eth: 1, usd: 2 },
          mode: "digest",
          mail: { to: [{ Email: "not an address" }], subject: "{{var:nope}} {{var:count}}" },
        },
        { id: "a", contract_address: ADDRESS, mail: { to: [{ Email: "b@example.com" }], item_text: "x" } },
      ],
    });
    expect(cross.map((p) => p.field)).toEqual([
      "rules[0].contract_address",
      "rules[0].type",
      "rules[0].min_price",
      "rules[0].digest",
      "rules[0].mail.from",
      "rules[0].mail.to[0].Email",
      "rules[0].mail.subject",
      "rules[1].id",
      "rules[1].mail.item_text",
      "rules[1].mail.from",
    ]);
    expect(cross.find((p) => p.field === "rules[0].mail.subject")?.message).toContain("unknown variable nope");
  });

  it("never throws anything but invalid_input, whatever the file holds", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        // problems() asserts that anything thrown is invalid_input; each violation names a field.
        for (const v of problems(value)) expect(typeof v.field).toBe("string");
      }),
      { seed: 12, numRuns: 400 },
    );
  });

  const email = fc
    .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.constantFrom("example.com", "chainmail.test"))
    .map(([local, domain]) => ({ Email: `${local}@${domain}` }));
  const rule = fc.record(
    {
      id: fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
      contract_address: fc.constant(ADDRESS),
      type: fc.subarray(["transfer", "mint", "burn", "sale", "bid", "list", "all"] as const, { minLength: 1 }),
      min_price: fc.oneof(
        fc.record({ eth: fc.double({ min: 0, max: 1e6, noNaN: true }) }),
        fc.record({ usd: fc.nat() }),
      ),
      mode: fc.constant("each" as const),
      start_block: fc.nat(),
      mail: fc.record(
        {
          to: fc.array(email, { minLength: 1, maxLength: 5 }),
          subject: fc.constantFrom("{{var:summary}}", 'Sale {{var:token_id}} {{var:missing:"-"}}', "plain"),
          text: fc.string({ maxLength: 200 }).map((s) => s.replace(/\{\{/g, "{")),
        },
        { requiredKeys: ["to"] },
      ),
    },
    { requiredKeys: ["id", "contract_address", "mail"] },
  );

  it("accepts every valid file the generator makes (no false refusals)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(rule, { minLength: 1, maxLength: 5, selector: (r) => r.id }), (rules) => {
        const config = parseWatchConfig({ from: { Email: "w@example.com" }, rules });
        expect(config.rules.map((r) => r.id)).toEqual(rules.map((r) => r.id));
      }),
      { seed: 7, numRuns: 200 },
    );
  });

  it("refuses hostile keys and oversized values as invalid_input", () => {
    const hostile = JSON.parse(
      `{"__proto__":{"polluted":1},"constructor":1,"rules":[{"id":"x","mail":{"to":[{"Email":"a@example.com"}]},"token_id":"${"9".repeat(79)}"}]}`,
    );
    const fields = problems(hostile).map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(["__proto__", "constructor", "rules[0].token_id"]));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(problems({ rules: Array.from({ length: 201 }, () => ({})) }).map((p) => p.field)).toContain("rules");
  });
});
