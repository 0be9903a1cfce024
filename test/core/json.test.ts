import { describe, expect, it } from "vitest";
import { parseJson, stringifyJson, toExactInteger } from "../../src/core/json.js";

describe("parseJson", () => {
  it("keeps integers beyond 2^53 exact as bigint, safe ones as number", () => {
    const value = parseJson('{"q":10000000000000000000001,"n":-9007199254740993,"s":9007199254740991,"b":16532560}');
    expect(value).toEqual({ q: 10000000000000000000001n, n: -9007199254740993n, s: 9007199254740991, b: 16532560 });
  });

  it("a bare top-level unsafe integer stays exact", () => {
    expect(parseJson("12345678901234567890")).toBe(12345678901234567890n);
    expect(parseJson(" [1, 98765432109876543210]")).toEqual([1, 98765432109876543210n]);
  });

  it("fast path: no long integer literal gives the same result as JSON.parse", () => {
    const text =
      '{"token_id":"79400006447981872162108805936960249632419041130515543620398493819452073705492","p":0.28042}';
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it("slow path keeps floats as numbers (including long fractions and exponents)", () => {
    const value = parseJson('{"q":10000000000000000000000,"usd":182.75165880107699,"e":1.5e300,"z":0.0}') as Record<
      string,
      unknown
    >;
    expect(value).toEqual({ q: 10000000000000000000000n, usd: 182.75165880107699, e: 1.5e300, z: 0 });
    expect(typeof value.usd).toBe("number");
  });

  it("16+ digit numbers with a fraction are floats, not bigints", () => {
    expect(parseJson('{"x":12345678901234567.5}')).toEqual({ x: Number("12345678901234567.5") });
  });

  it("digits inside strings are left alone", () => {
    expect(parseJson('{"s":"a:12345678901234567890"}')).toEqual({ s: "a:12345678901234567890" });
  });

  it("an Object.prototype given enumerable properties changes nothing: only own values are walked", () => {
    const polluted = Object.prototype as Record<string, unknown>;
    polluted.injected = { deeper: 2 ** 64 };
    polluted.big = 2 ** 60;
    try {
      const text = `{"a":{"b":[1,{"c":2}]},"q":98765432109876543210}`;
      expect(parseJson(text)).toEqual({ a: { b: [1, { c: 2 }] }, q: 98765432109876543210n });
      expect(parseJson('{"a":{"b":1}}')).toEqual({ a: { b: 1 } });
      expect(() => parseJson(`${"[".repeat(60)}{"x":${"[".repeat(41)}${"]".repeat(41)}}${"]".repeat(60)}`)).toThrow(
        "nested deeper",
      );
    } finally {
      delete polluted.injected;
      delete polluted.big;
    }
  });

  it("throws SyntaxError on invalid JSON on both paths", () => {
    expect(() => parseJson('{"a":')).toThrow(SyntaxError);
    expect(() => parseJson('{"a":12345678901234567890')).toThrow();
  });
});

describe("stringifyJson", () => {
  it("writes bigints as bare integers and round-trips exactly", () => {
    const text = '{"quantity":10000000000000000000000,"token_id":"1","n":[1,-98765432109876543210]}';
    expect(stringifyJson(parseJson(text))).toBe(text);
  });

  it("is JSON.stringify when there is no bigint", () => {
    const value = { a: [1, 2.5, "x"], b: null, c: { d: true } };
    expect(stringifyJson(value, 2)).toBe(JSON.stringify(value, null, 2));
  });

  it("indents like JSON.stringify with bigints too", () => {
    expect(stringifyJson({ q: 2n ** 80n }, 2)).toBe('{\n  "q": 1208925819614629174706176\n}');
  });
});

describe("toExactInteger", () => {
  it("converts digit strings and integer numbers, rejects the rest", () => {
    expect(toExactInteger("42")).toBe(42);
    expect(toExactInteger("10000000000000000000000")).toBe(10000000000000000000000n);
    expect(toExactInteger(7)).toBe(7);
    expect(toExactInteger(1.5)).toBeUndefined();
    expect(toExactInteger("1e3")).toBeUndefined();
  });
});

describe("parseJson: integers that round to one double", () => {
  it("keeps consecutive MessageIDs beyond 2^53 exact (a Mailjet answer), each its own digits", () => {
    const ids = Array.from({ length: 50 }, (_, i) => 576460772022727316n + BigInt(i));
    const text = `{"Messages":[${ids.map((id) => `{"Status":"success","To":[{"MessageID":${id},"MessageHref":"https://api.mailjet.com/v3/REST/message/${id}"}]}`).join(",")}]}`;
    const value = parseJson(text) as { Messages: { To: { MessageID: bigint; MessageHref: string }[] }[] };
    expect(value.Messages.map((m) => m.To[0]!.MessageID)).toEqual(ids);
    expect(value.Messages[49]!.To[0]!.MessageHref).toBe(`https://api.mailjet.com/v3/REST/message/${ids[49]}`);
  });

  it("tells them apart next to strings that hold U+0000 or look like the quoted form", () => {
    const text = '["\\u0000123",18014398509481985,18014398509481986,"\\\\u000018014398509481985",-18014398509481985]';
    expect(parseJson(text)).toEqual([
      "\u0000123",
      18014398509481985n,
      18014398509481986n,
      "\\u000018014398509481985",
      -18014398509481985n,
    ]);
    const plain = '{"a":18014398509481985,"b":[18014398509481986],"c":"18014398509481987","d":1e300}';
    expect(parseJson(plain)).toEqual({
      a: 18014398509481985n,
      b: [18014398509481986n],
      c: "18014398509481987",
      d: 1e300,
    });
  });
});
