/**
 * src/core/raw-json.ts on its own: the text vouched for a value is found by that value alone (never by an equal
 * copy, never for another value), the vouching hands the value back unchanged, and a second vouching replaces the
 * first. The HTTP service's splicing of it (src/server/output-body.ts) is test/server/output-body.props.test.ts.
 */
import { describe, expect, it } from "vitest";
import { rawJsonOf, vouchRawJson } from "../../src/core/raw-json.js";

describe("vouchRawJson / rawJsonOf", () => {
  it("hands the same value back and finds its text by that value", () => {
    const text = '{"transactions": [1, 2],  "continuation":"x"}';
    const value = { transactions: [1, 2], continuation: "x" };
    expect(vouchRawJson(value, text)).toBe(value);
    expect(rawJsonOf(value)).toBe(text);
    // The value itself is not touched: no key, no symbol a serialiser would see.
    expect(Object.keys(value)).toEqual(["transactions", "continuation"]);
    expect(Reflect.ownKeys(value)).toEqual(["transactions", "continuation"]);
    expect(JSON.stringify(value)).toBe('{"transactions":[1,2],"continuation":"x"}');
  });

  it("knows nothing of a value never vouched for, an equal copy or a part of a vouched value", () => {
    const value = vouchRawJson({ a: [1] }, '{"a":[1]}');
    expect(rawJsonOf({ a: [1] })).toBeUndefined();
    expect(rawJsonOf({ ...value })).toBeUndefined();
    expect(rawJsonOf(structuredClone(value))).toBeUndefined();
    expect(rawJsonOf(value.a)).toBeUndefined();
    expect(rawJsonOf([])).toBeUndefined();
  });

  it("keeps one text per value: the last vouched; arrays and objects alike", () => {
    const list = [1, 2, 3];
    vouchRawJson(list, "[1,2,3]");
    vouchRawJson(list, "[1, 2, 3]");
    expect(rawJsonOf(list)).toBe("[1, 2, 3]");
    const a = vouchRawJson({}, '{"x":1}');
    const b = vouchRawJson({}, '{"x":2}');
    expect([rawJsonOf(a), rawJsonOf(b)]).toEqual(['{"x":1}', '{"x":2}']);
  });
});
