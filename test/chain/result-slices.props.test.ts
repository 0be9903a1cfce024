/**
 * Property-based test of `resultSlices`, which parses a JSON-RPC answer's `result` array a slice at a time (the
 * index reads `eth_getLogs` answers through it). An answer comes from a node the index does not control, so:
 * - for any JSON-RPC answer written with arbitrary members, member order and whitespace, and elements full of
 *   quotes, escapes, brackets and nesting, the slices joined are exactly `JSON.parse(text).result`, of any size;
 * - for any text at all (that answer mangled: cut, characters changed, inserted, removed), the slicer never gives
 *   what `JSON.parse` would not: it declines (undefined, the caller then parses the text whole) or its slices
 *   throw a SyntaxError, unless the text is an answer whose result the slices give exactly.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resultSlices } from "../../src/chain/result-slices.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261124);
const settings = { numRuns: RUNS, seed: SEED };

/** Strings that stress a scanner: quotes, backslashes, brackets, commas and unicode. */
const trickyString = fc.stringMatching(/^[\w"\\{}[\],: \u00e9\u{1f600}\n\t/]{0,12}$/u);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    trickyString,
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(trickyString, tie("value"), { maxKeys: 4 }),
  ),
})).value;
const whitespace = fc.stringMatching(/^[ \n\r\t]{0,3}$/);

/** An answer: `result` among other members in any order, with whitespace around every token of the envelope. */
const answer = fc
  .record({
    result: fc.array(json, { maxLength: 12 }),
    id: fc.oneof(fc.integer({ min: 0, max: 2 ** 31 }), fc.string()),
    others: fc.dictionary(
      trickyString.filter((k) => !["result", "error", "id"].includes(k)),
      json,
      { maxKeys: 3 },
    ),
    order: fc.integer({ min: 0, max: 5 }),
    spaces: fc.array(whitespace, { minLength: 12, maxLength: 12 }),
    pretty: fc.boolean(),
  })
  .map(({ result, id, others, order, spaces, pretty }) => {
    const members: [string, unknown][] = [["jsonrpc", "2.0"], ...Object.entries(others), ["id", id]];
    members.splice(order % (members.length + 1), 0, ["result", result]);
    const ws = (i: number) => spaces[i % spaces.length]!;
    const text =
      `${ws(0)}{${ws(1)}` +
      members
        .map(([k, v], i) => `${JSON.stringify(k)}${ws(i + 2)}:${ws(i + 3)}${JSON.stringify(v, null, pretty ? 1 : 0)}`)
        .join(`${ws(4)},${ws(5)}`) +
      `${ws(6)}}${ws(7)}`;
    return { text, result, id };
  });

function joined(text: string, size: number): unknown[] | undefined {
  const sliced = resultSlices(text);
  if (!sliced) return undefined;
  const out: unknown[] = [];
  for (const slice of sliced.slices(size)) {
    expect(slice.length).toBeLessThanOrEqual(size);
    out.push(...slice);
  }
  return out;
}

describe("resultSlices (property-based)", () => {
  it("gives exactly the result array of any answer, whatever the slice size", () => {
    fc.assert(
      fc.property(answer, fc.integer({ min: 1, max: 5 }), ({ text, result, id }, size) => {
        const expected = JSON.parse(JSON.stringify(result)) as unknown[];
        expect(joined(text, size)).toEqual(expected);
        expect(resultSlices(text)?.id).toEqual(id);
      }),
      settings,
    );
  });

  it("never gives what JSON.parse would not, however the text is mangled", () => {
    const mangled = fc
      .tuple(
        answer,
        fc.array(
          fc.tuple(fc.nat(), fc.constantFrom("", '"', "\\", "[", "]", "{", "}", ",", ":", "x", " ", "0"), fc.boolean()),
          { minLength: 1, maxLength: 3 },
        ),
      )
      .map(([{ text }, edits]) => {
        let out = text;
        for (const [at, char, replace] of edits) {
          const i = at % (out.length + 1);
          out = out.slice(0, i) + char + out.slice(replace ? i + 1 : i);
        }
        return out;
      });
    fc.assert(
      fc.property(fc.oneof(mangled, fc.string()), fc.integer({ min: 1, max: 5 }), (text, size) => {
        let reference: unknown;
        try {
          reference = JSON.parse(text);
        } catch {
          reference = undefined;
        }
        let got: unknown[] | undefined;
        try {
          got = joined(text, size);
        } catch (err) {
          expect(err).toBeInstanceOf(SyntaxError);
          return;
        }
        if (got === undefined) return; // declined: parsed whole by the caller
        const result = (reference as { result?: unknown } | undefined)?.result;
        expect(Array.isArray(result)).toBe(true);
        expect(got).toEqual(result);
      }),
      settings,
    );
  });

  it("declines error answers and batches; reads escaped member names", () => {
    expect(resultSlices('{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"too many"}}')).toBeUndefined();
    expect(resultSlices('[{"jsonrpc":"2.0","id":1,"result":[]}]')).toBeUndefined();
    expect(joined('{"jsonrpc":"2.0","\\u0069d":1,"res\\u0075lt":[1]}', 1)).toEqual([1]);
    expect(resultSlices('{"jsonrpc":"2.0","id":1,"result":null}')).toBeUndefined();
    expect(joined('{"jsonrpc":"2.0","id":7,"result":[ ]}', 3)).toEqual([]);
  });

  it("steps over deep nesting without recursing", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const sliced = resultSlices(`{"id":1,"result":[1,${deep},2]}`);
    expect(sliced?.id).toBe(1);
    // JSON.parse judges the deep element itself (V8 parses it or throws a RangeError, never hangs).
    expect(() => [...sliced!.slices(1)].length).not.toThrow(SyntaxError);
  });
});
