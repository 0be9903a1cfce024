/**
 * Property-based test of `parseJson`'s fast path against the exact parser it replaced: for generated JSON text
 * (integers on both sides of 2^53, integer and float literals that round to the same double, floats with 16+
 * digits and exponents, strings full of digits, brackets, quotes and escapes, keys like `__proto__` and "0",
 * nesting around MAX_JSON_DEPTH), `parseJson` gives exactly what lossless-json gives with unsafe integers as
 * bigints, or throws JsonTooDeepError when the text nests deeper than MAX_JSON_DEPTH.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { isInteger, parse as parseLossless } from "lossless-json";
import { describe, expect, it } from "vitest";
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson } from "../../src/core/json.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261123);
const settings = { numRuns: RUNS, seed: SEED };

/** The exact reference: every number literal read by itself, integers beyond 2^53 as bigints. */
const exact = (text: string): unknown =>
  parseLossless(text, null, (literal) => {
    if (!isInteger(literal)) return Number(literal);
    const n = Number(literal);
    return Number.isSafeInteger(n) ? n : BigInt(literal);
  });

/** JSON as a tree of literals, so that a number keeps the exact text it is written with. */
type Json =
  | { number: string }
  | { string: string }
  | { literal: "true" | "false" | "null" }
  | { array: Json[] }
  | { object: [string, Json][] };

const TWO_53 = 2n ** 53n;
// Integers around 2^53 and far beyond it, on both sides of zero: neighbours that round to the same double.
const bigIntegerLiteral = fc
  .tuple(fc.constantFrom(TWO_53, 10n ** 20n, 2n ** 64n, 10n ** 77n), fc.bigInt({ min: -3n, max: 3n }), fc.boolean())
  .map(([base, offset, negative]) => String((negative ? -1n : 1n) * (base + offset)));
const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom("0", "-0", "9007199254740991", "-9007199254740991", "1000000000000000"),
  bigIntegerLiteral,
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
  // Floats that round to the same double as an integer literal beside them: they must stay numbers.
  fc.constantFrom("9007199254740992.0", "9.007199254740992e15", "1e20", "1E+20", "1e77", "12345678901234567.5"),
);
const stringValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("a:12345678901234567890", '[{"x":1e20}]', '\\"', "\u0000", "9007199254740993", "]]]}}}"),
);
const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("__proto__", "constructor", "0", "1", "10", "q"));

const tree = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberLiteral.map((number) => ({ number })),
    stringValue.map((string) => ({ string })),
    fc.constantFrom("true", "false", "null").map((literal) => ({ literal }) as Json),
    fc.array(tie("json"), { maxLength: 5 }).map((array) => ({ array })),
    fc.uniqueArray(fc.tuple(key, tie("json")), { maxLength: 5, selector: ([k]) => k }).map((object) => ({ object })),
  ),
})).json;

/** `value` inside `levels` arrays and objects, alternating. */
const wrapped = (value: Json, levels: number): Json => {
  let out = value;
  for (let i = 0; i < levels; i++) out = i % 2 ? { array: [out, { number: "1" }] } : { object: [["w", out]] };
  return out;
};

const depthOf = (value: Json): number =>
  "array" in value
    ? 1 + Math.max(0, ...value.array.map(depthOf))
    : "object" in value
      ? 1 + Math.max(0, ...value.object.map(([, v]) => depthOf(v)))
      : 0;

/**
 * A value as text that tells apart what `toEqual` may not: bigint from number, -0 from 0, key order, a key
 * named `constructor` or `__proto__`, and anything not a plain array or object.
 */
const canonical = (value: unknown): string => {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (Object.getPrototypeOf(value) !== Object.prototype) return "(not a plain object)";
  return `{${Object.keys(value)
    .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
    .join(",")}}`;
};

const write = (value: Json, space: string): string => {
  if ("number" in value) return value.number;
  if ("string" in value) return JSON.stringify(value.string);
  if ("literal" in value) return value.literal;
  if ("array" in value) return `[${space}${value.array.map((v) => write(v, space)).join(`,${space}`)}${space}]`;
  const entries = value.object.map(([k, v]) => `${JSON.stringify(k)}${space}:${space}${write(v, space)}`);
  return `{${space}${entries.join(`,${space}`)}${space}}`;
};

const document = fc
  .tuple(
    tree,
    fc.oneof(fc.constant(0), fc.integer({ min: MAX_JSON_DEPTH - 12, max: MAX_JSON_DEPTH + 2 })),
    fc.constantFrom("", " ", "\n  "),
  )
  .map(([value, levels, space]) => {
    const json = wrapped(value, levels);
    return { text: write(json, space), depth: depthOf(json) };
  });

describe("parseJson against the exact parser (property)", () => {
  it("gives the exact parser's value, bigints beyond 2^53 included, or refuses nesting beyond the limit", () => {
    fc.assert(
      fc.property(document, ({ text, depth }) => {
        if (depth > MAX_JSON_DEPTH) {
          expect(() => parseJson(text)).toThrow(JsonTooDeepError);
          expect(() => parseJson(text, { unsafeIntegersRoundTogether: true })).toThrow(JsonTooDeepError);
          return;
        }
        const ours = parseJson(text);
        expect(canonical(ours)).toBe(canonical(exact(text)));
        // The hint for texts whose big integers round together (Mailjet answers) takes a shorter way to the same value.
        expect(canonical(parseJson(text, { unsafeIntegersRoundTogether: true }))).toBe(canonical(ours));
        // Every number that is not a bigint is one a double holds as written.
        const leaves: unknown[] = [];
        const collect = (v: unknown) => {
          if (typeof v === "object" && v !== null) Object.values(v).forEach(collect);
          else leaves.push(v);
        };
        collect(ours);
        for (const leaf of leaves) if (typeof leaf === "bigint") expect(Number.isSafeInteger(Number(leaf))).toBe(false);
      }),
      settings,
    );
  });

  it("integers beyond 2^53 that round to the same double each keep their own digits", () => {
    const text = '{"a":9007199254740993,"b":[9007199254740992,-9007199254740993],"c":1e20,"d":100000000000000000001}';
    expect(parseJson(text)).toStrictEqual({
      a: 9007199254740993n,
      b: [9007199254740992n, -9007199254740993n],
      c: 1e20,
      d: 100000000000000000001n,
    });
    // An integer literal and a float literal with the same double: told apart on the exact path.
    expect(parseJson('[100000000000000000000,1e20,{"x":100000000000000000000}]')).toStrictEqual([
      100000000000000000000n,
      1e20,
      { x: 100000000000000000000n },
    ]);
  });

  it("digits in strings, keys and escapes never become numbers", () => {
    const text =
      '{"12345678901234567890":"9007199254740993","s\\"":[1,"\\\\",9007199254740993],"__proto__":18446744073709551616}';
    const value = parseJson(text) as Record<string, unknown>;
    expect(canonical(value)).toBe(canonical(exact(text)));
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, "__proto__")).toBe(true);
  });
});
