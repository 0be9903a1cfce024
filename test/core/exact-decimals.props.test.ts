/**
 * Exact decimals (src/core/exact-decimals.ts) and how the JSON writer uses them: for any amount and decimals the
 * text written parses back, as a decimal, to exactly amount ÷ 10^decimals; the writer's marks can never be forged
 * by a string in the data; the own index's decimal strings come out with every digit.
 */
import fc from "fast-check";
import { parse as parseLossless } from "lossless-json";
import { describe, expect, it } from "vitest";
import { decimalText, exactDecimalOf, setExactDecimal } from "../../src/core/exact-decimals.js";
import { parseJson, stringifyJson, withExactStrings } from "../../src/core/json.js";
import { toRecord } from "../../src/sources/own-index/source.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);

/** A plain decimal literal as (digits without the point, digits after it). */
function asFraction(literal: string): { mantissa: bigint; scale: number } {
  expect(literal).toMatch(/^-?\d+(\.\d+)?$/);
  const [whole, fraction = ""] = literal.split(".");
  return { mantissa: BigInt(whole! + fraction), scale: fraction.length };
}

/** Whether `literal` is exactly amount ÷ 10^decimals. */
const means = (literal: string, amount: bigint, decimals: number): boolean => {
  const { mantissa, scale } = asFraction(literal);
  return mantissa * 10n ** BigInt(decimals) === amount * 10n ** BigInt(scale);
};

describe("wei to decimal text (property)", () => {
  it("the text, and the JSON written from it, parse back to exactly amount ÷ 10^decimals", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 80n), max: 10n ** 80n }),
        fc.integer({ min: 0, max: 77 }),
        fc.constantFrom("price", "price_usd"),
        (amount, decimals, key) => {
          const text = decimalText(amount, decimals);
          expect(means(text, amount, decimals)).toBe(true);
          // No trailing zero in the fraction, no leading zero in the whole part.
          expect(text).not.toMatch(/\.\d*0$|^-?0\d/);
          const holder = { asset_type: "ETH" } as Record<string, unknown>;
          setExactDecimal(holder, key, text);
          expect(holder[key]).toBe(Number(text));
          expect(exactDecimalOf(holder, key)).toBe(text);
          const written = stringifyJson({ data: [{ price_details: holder }] });
          const back = parseLossless(written, null, (literal) => literal) as {
            data: { price_details: Record<string, string> }[];
          };
          expect(means(back.data[0]!.price_details[key]!, amount, decimals)).toBe(true);
          // Plain JSON readers get the nearest number, as before.
          expect(
            (JSON.parse(written) as { data: { price_details: Record<string, number> }[] }).data[0]!.price_details[key],
          ).toBe(Number(text));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it("a number changed after its text was set is written as the number it now is", () => {
    const holder: Record<string, unknown> = {};
    setExactDecimal(holder, "price", "0.333333333333333333");
    holder.price = 2;
    expect(stringifyJson(holder)).toBe('{"price":2}');
    expect(withExactStrings(holder)).toEqual({ price: 2 });
  });

  it("a text that is not a plain decimal sets the number only", () => {
    const holder: Record<string, unknown> = {};
    setExactDecimal(holder, "price", "1e-18");
    expect(holder.price).toBe(1e-18);
    expect(exactDecimalOf(holder, "price")).toBeUndefined();
  });
});

describe("the JSON writer's marks", () => {
  it("a string of the data that looks like a mark stays a string (the old fixed mark, any guess)", () => {
    const value = { a: "\u0000bigint:5", b: 10n ** 20n, c: "\u0000bigint:-7" };
    expect(parseJson(stringifyJson(value))).toEqual(value);
    const holder: Record<string, unknown> = { note: "\u0000exact:0.5" };
    setExactDecimal(holder, "price", "0.333333333333333333");
    expect(stringifyJson(holder)).toBe('{"note":"\\u0000exact:0.5","price":0.333333333333333333}');
  });

  it("any strings beside bigints and exact decimals come back as they were (property)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.string().map((s) => `\u0000${s}`),
          ),
          { maxLength: 5 },
        ),
        fc.bigInt({ min: 2n ** 60n, max: 2n ** 80n }),
        (strings, big) => {
          const holder: Record<string, unknown> = { strings, big };
          setExactDecimal(holder, "price", decimalText(big, 18));
          const back = parseJson(stringifyJson(holder)) as Record<string, unknown>;
          expect(back.strings).toEqual(strings);
          expect(back.big).toBe(big);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

describe("the own index's prices", () => {
  const row: ActivityRow = {
    block_number: 17_000_000,
    log_index: 3,
    batch_index: 0,
    kind: "sale",
    contract: `0x${"3".repeat(40)}`,
    token_id: "7",
    from_addr: `0x${"1".repeat(40)}`,
    to_addr: `0x${"2".repeat(40)}`,
    quantity: "1",
    tx_hash: `0x${"4".repeat(64)}`,
    block_hash: `0x${"5".repeat(64)}`,
    timestamp: 1_700_000_000,
    contract_type: "ERC721",
    currency: null,
    price: "1.234567890123456789",
    price_usd: "2469.135780246913578",
    marketplace: "opensea",
  } as ActivityRow;

  it("the decimal strings the index keeps come out with every digit; the numbers beside them as before", () => {
    const record = toRecord(row) as { price_details: Record<string, unknown> };
    expect(record.price_details).toEqual({
      asset_type: "ETH",
      price: 1.2345678901234567,
      price_usd: 2469.135780246914,
    });
    // Its keys, a spread and a structured clone show the documented shape: nothing the exact texts need shows.
    expect(Object.keys(record.price_details)).toEqual(["asset_type", "price", "price_usd"]);
    const spread = { ...record.price_details };
    expect(Object.getOwnPropertySymbols(spread)).toEqual([]);
    expect(Object.getOwnPropertyNames(structuredClone(record.price_details))).toEqual([
      "asset_type",
      "price",
      "price_usd",
    ]);
    expect(record.price_details.price_exact).toBe("1.234567890123456789");
    expect(record.price_details.price_usd_exact).toBe("2469.135780246913578");
    const text = stringifyJson(record);
    expect(text).toContain('"price":1.234567890123456789,"price_usd":2469.135780246913578}');
  });
});
