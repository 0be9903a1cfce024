/** The watch file: every problem at once with field names (the nodes' error shape), and a property-based run. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { runCli } from "../support/helpers.js";

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

  it("retract and max_per_hour: where they apply, their templates, every problem named", () => {
    const base = { id: "r", contract_address: ADDRESS, mail: { to: [{ Email: "a@example.com" }] } };
    const file = (rules: object[]) => ({ source: "index", from: { Email: "w@example.com" }, rules });
    const found = problems(
      file([
        { ...base, id: "a", retract: true, confirmations: 2 },
        { ...base, id: "b", mail: { ...base.mail, retract_subject: "Undone {{var:token_ids}}" } },
        { ...base, id: "c", retract: true, mail: { ...base.mail, retract_text: "{{var:items}} {{var:nope}}" } },
        { ...base, id: "d", max_per_hour: 0 },
      ]),
    );
    expect(found.map((p) => p.field)).toEqual(["rules[3].max_per_hour"]);
    const cross = problems(
      file([
        { ...base, id: "a", retract: true, confirmations: 2 },
        { ...base, id: "b", mail: { ...base.mail, retract_subject: "Undone {{var:token_ids}}" } },
        { ...base, id: "c", retract: true, mail: { ...base.mail, retract_text: "{{var:items}} {{var:nope}}" } },
      ]),
    );
    expect(cross.map((p) => p.field)).toEqual([
      "rules[0].retract",
      "rules[1].mail.retract_subject",
      "rules[2].mail.retract_text",
    ]);
    expect(cross[0]!.message).toContain("only used with confirmations 0");
    expect(cross[2]!.message).toContain("unknown variables items, nope");
    // Accepted: a retraction's own template with a transaction's names, and an each rule's digest lines under a cap.
    const ok = parseWatchConfig(
      file([
        {
          ...base,
          retract: true,
          confirmations: 0,
          group: "transaction",
          max_per_hour: 100,
          mail: {
            ...base.mail,
            retract_subject: "Undone: {{var:count}} tokens ({{var:token_ids}}) in {{var:transaction_hash}}",
            item_text: "- {{var:summary}}",
          },
        },
      ]),
    );
    expect(ok.rules[0]).toMatchObject({ retract: true, max_per_hour: 100 });
  });

  it("retract, confirmations, max_per_hour and the retraction's template: refused exactly when the rules say", () => {
    const settings = fc.record(
      {
        retract: fc.boolean(),
        confirmations: fc.integer({ min: 0, max: 64 }),
        max_per_hour: fc.oneof(fc.integer({ min: -2, max: 20_000 }), fc.double({ min: 0, max: 5, noNaN: true })),
        retract_subject: fc.constantFrom("{{var:token_ids}} in {{var:transaction_hash}}", "{{var:items}}"),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(settings, ({ retract_subject, ...rest }) => {
        const rule = {
          id: "r",
          contract_address: ADDRESS,
          ...rest,
          mail: { to: [{ Email: "a@example.com" }], ...(retract_subject === undefined ? {} : { retract_subject }) },
        };
        const fields = problems({ source: "index", from: { Email: "w@example.com" }, rules: [rule] }).map(
          (p) => p.field,
        );
        const cap = rest.max_per_hour;
        const badCap = cap !== undefined && !(Number.isInteger(cap) && cap >= 1 && cap <= 10_000);
        const expected = badCap
          ? ["rules[0].max_per_hour"] // the schema's problems come first, alone
          : [
              ...(rest.retract && rest.confirmations ? ["rules[0].retract"] : []),
              // Each problem once: used without retract, and a name a retraction has not.
              ...(retract_subject !== undefined && !rest.retract ? ["rules[0].mail.retract_subject"] : []),
              ...(retract_subject?.includes("items") ? ["rules[0].mail.retract_subject"] : []),
            ];
        expect(fields).toEqual(expected);
      }),
      { seed: 35, numRuns: 300 },
    );
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

  it("refuses a type list that repeats a kind, naming the kind; accepts it with each kind once", () => {
    const kinds = fc.array(fc.constantFrom("transfer", "mint", "burn", "sale", "all"), { minLength: 1, maxLength: 7 });
    fc.assert(
      fc.property(kinds, (type) => {
        const found = problems({
          from: { Email: "w@example.com" },
          rules: [{ id: "r", type, mail: { to: [{ Email: "a@example.com" }] } }],
        });
        const repeated = type.find((kind, i) => type.indexOf(kind) !== i);
        if (repeated === undefined) expect(found).toEqual([]);
        else {
          expect(found).toHaveLength(1);
          expect(found[0]!.field).toBe("rules[0].type");
          // The first kind given a second time is named.
          expect(found[0]!.message).toContain(
            `is invalid: must be each item at most once ("${repeated}" is given more than once)`,
          );
        }
      }),
      { seed: 8, numRuns: 300 },
    );
  });

  it("refuses a lone surrogate in any string of the file, naming that field", () => {
    /** The paths of every string in a value, with a setter for each. */
    const strings = (value: unknown, path: string): string[] => {
      if (typeof value === "string") return [path];
      if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
      if (value && typeof value === "object")
        return Object.entries(value).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k));
      return [];
    };
    const setAt = (value: unknown, path: string, text: string): unknown => {
      const copy = structuredClone(value) as Record<string, unknown>;
      const keys = path.match(/[^.[\]]+/g)!;
      let at = copy as Record<string, unknown>;
      for (const key of keys.slice(0, -1)) at = at[key] as Record<string, unknown>;
      at[keys.at(-1)!] = text;
      return copy;
    };
    const lone = fc
      .tuple(fc.string({ maxLength: 8 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 8 }))
      .map(([a, c, b]) => `${a}${String.fromCharCode(c)}${b}`)
      .filter((text) => !(text as unknown as { isWellFormed(): boolean }).isWellFormed());
    const files = fc.uniqueArray(rule, { minLength: 1, maxLength: 3, selector: (r) => r.id }).map((rules) => ({
      from: { Email: "w@example.com", Name: "Watch" },
      store: "./data/watch.sqlite",
      rules,
    }));
    fc.assert(
      fc.property(
        files.chain((value) => fc.tuple(fc.constant(value), fc.constantFrom(...strings(value, "")), lone)),
        ([value, path, text]) => {
          const found = problems(setAt(value, path, text));
          expect(found.map((p) => p.field)).toContain(path);
          expect(found.find((p) => p.field === path)?.message).toMatch(/lone surrogate/);
        },
      ),
      { seed: 9, numRuns: 300 },
    );
  });

  it("chainmail watch refuses a file with a lone surrogate at start (exit 1), naming the field, sending nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chainmail-watch-config-"));
    try {
      const file = join(dir, "watch.json");
      // As a file holds it: the JSON escape of a lone surrogate.
      writeFileSync(
        file,
        '{"from":{"Email":"w@example.com"},"rules":[{"id":"r","mail":{"to":[{"Email":"a@example.com"}],"subject":"Hi \\ud800"}}]}',
      );
      const out = await runCli(["watch", "--config", file, "--once"], {
        env: { EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: join(dir, "outbox"), INDEX_DB: join(dir, "db.sqlite") },
      });
      expect(out.code).toBe(1);
      expect(JSON.parse(out.stdout).error.details.violations).toEqual([
        expect.objectContaining({ field: "rules[0].mail.subject" }),
      ]);
      expect(existsSync(join(dir, "outbox"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses hostile keys and oversized values as invalid_input", () => {
    const hostile = JSON.parse(
      `{"__proto__":{"polluted":1},"constructor":1,"rules":[{"id":"x","mail":{"to":[{"Email":"a@example.com"}]},"token_id":"${"9".repeat(79)}"}]}`,
    );
    const fields = problems(hostile).map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(["__proto__", "constructor", "rules[0].token_id"]));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(problems({ rules: Array.from({ length: 1_001 }, () => ({})) }).map((p) => p.field)).toContain("rules");
  });
});
