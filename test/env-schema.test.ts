/**
 * The environment's one schema (src/core/env.ts): every variable's value is checked by it, refused with a message
 * naming the variable, its value and the rule, and docs/configuration.md's table is the schema's.
 */
import { readFileSync } from "node:fs";
import type { TSchema } from "@sinclair/typebox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { withTable } from "../scripts/configuration-table.js";
import { loadConfig } from "../src/core/config.js";
import { EnvSchema, ruleOf, setting } from "../src/core/env.js";
import { ChainmailError } from "../src/core/errors.js";

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    return (err as ChainmailError).toPayload();
  }
  throw new Error("not refused");
};

describe("the environment schema", () => {
  it("docs/configuration.md's table is the schema's (npx tsx scripts/configuration-table.ts writes it)", () => {
    const doc = readFileSync(new URL("../docs/configuration.md", import.meta.url), "utf8");
    expect(withTable(doc)).toBe(doc);
  });

  it("fills defaults and reads values by the schema's types", () => {
    expect(setting({}, "MAILJET_CONCURRENCY")).toBe(4);
    expect(setting({ MAILJET_CONCURRENCY: "" }, "MAILJET_CONCURRENCY")).toBe(4);
    expect(setting({ MAILJET_CONCURRENCY: "9" }, "MAILJET_CONCURRENCY")).toBe(9);
    expect(setting({}, "NFTPORT_TIMEOUT_MS")).toBeUndefined();
    expect(setting({ EMAIL_TRANSPORT: "smtp" }, "EMAIL_TRANSPORT")).toBe("smtp");
    const config = loadConfig({ CHAINMAIL_TIMEOUT_MS: "700", OPENSEA_TIMEOUT_MS: "900", INDEX_DATABASE_URL: "x.db" });
    expect([config.nftport.timeoutMs, config.opensea.timeoutMs, config.indexDb]).toEqual([700, 900, "x.db"]);
  });

  it("refuses a bad value naming the variable, the value and the rule", () => {
    expect(refusal(() => setting({ NFT_SOURCE: "foo" }, "NFT_SOURCE"))).toEqual({
      error: 'Setting NFT_SOURCE="foo" is invalid: must be one of nftport, index, opensea, index+opensea, service.',
      details: { code: "invalid_input", setting: "NFT_SOURCE" },
    });
    expect(refusal(() => loadConfig({ CHAINMAIL_TIMEOUT_MS: "abc" })).error).toBe(
      'Setting CHAINMAIL_TIMEOUT_MS="abc" is invalid: must be an integer >= 1.',
    );
    expect(refusal(() => setting({ CHAINMAIL_PORT: "70000" }, "CHAINMAIL_PORT")).error).toBe(
      'Setting CHAINMAIL_PORT="70000" is invalid: must be an integer from 0 to 65535.',
    );
    expect(refusal(() => loadConfig({ ETH_USD_FEED: "0x12" })).error).toBe(
      'Setting ETH_USD_FEED="0x12" is invalid: must be an address (0x followed by 40 hex digits).',
    );
  });

  it("every variable has a group, a description and a rule in words", () => {
    for (const [name, schema] of Object.entries(EnvSchema.properties)) {
      expect(schema["x-group"], name).toBeTypeOf("string");
      expect(schema.description, name).toBeTypeOf("string");
      expect(ruleOf(schema), name).not.toBe("");
    }
  });

  it("accepts a value exactly when it follows the rule, and refuses the others as invalid_input", () => {
    const names = Object.keys(EnvSchema.properties) as (keyof typeof EnvSchema.properties)[];
    const follows = (schema: TSchema, raw: string): boolean => {
      if (schema.type === "integer") {
        const n = Number(raw);
        return Number.isInteger(n) && n >= schema.minimum && (schema.maximum === undefined || n <= schema.maximum);
      }
      if (schema.anyOf) return schema.anyOf.some((v: TSchema) => v.const === raw);
      return schema.pattern === undefined || new RegExp(schema.pattern).test(raw);
    };
    const raws = fc.oneof(fc.string({ maxLength: 12 }), fc.integer({ min: -5, max: 70_000 }).map(String));
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        raws.filter((r) => r !== ""),
        (name, raw) => {
          const schema: TSchema = EnvSchema.properties[name];
          let outcome: unknown;
          try {
            outcome = setting({ [name]: raw }, name);
          } catch (err) {
            outcome = err;
          }
          if (follows(schema, raw)) expect(outcome).toBe(schema.type === "integer" ? Number(raw) : raw);
          else {
            expect(outcome).toBeInstanceOf(ChainmailError);
            expect((outcome as ChainmailError).toPayload().details).toEqual({ code: "invalid_input", setting: name });
            expect((outcome as ChainmailError).message).toBe(
              `Setting ${name}=${JSON.stringify(raw)} is invalid: must be ${ruleOf(schema)}.`,
            );
          }
        },
      ),
      { numRuns: Number(process.env.PROPS_RUNS ?? 300) },
    );
  });
});
