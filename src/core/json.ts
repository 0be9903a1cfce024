/**
 * Exact JSON: integers beyond 2^53 (token ids, ERC-1155 quantities, Mailjet MessageIDs) keep every digit.
 *
 * In memory such an integer is a `bigint`; every other number stays a `number`. On the wire it is a bare JSON
 * integer again. Plain `JSON.parse` would round 10000000000000000000001 to 1e22, so `parseJson` takes a slow,
 * lossless path whenever the text holds an integer literal long enough to be unsafe.
 */
import { isInteger, parse as parseLossless } from "lossless-json";

/** A JSON integer as chainmail holds it: a number when it is safe, a bigint beyond 2^53. */
export type ExactInteger = number | bigint;

// A number token starts the text or follows `:`, `[` or `,`; 16 or more digits may exceed 2^53.
const LONG_INTEGER = /(?:^|[:[,])\s*-?\d{16,}(?![\d.eE])/;

function parseNumber(text: string): number | bigint {
  if (isInteger(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/** Parses JSON, turning unsafe integers into bigints. Throws `SyntaxError` like `JSON.parse`. */
export function parseJson(text: string): unknown {
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  return parseLossless(text, null, parseNumber);
}

const BIGINT_MARK = "\u0000bigint:";
const MARKED = /"\\u0000bigint:(-?\d+)"/g;

/** Serialises like `JSON.stringify`, writing bigints as bare JSON integers. */
export function stringifyJson(value: unknown, indent?: number): string {
  try {
    // Most values hold no bigint: the native serialiser, untouched, is several times faster than a replacer.
    return JSON.stringify(value, null, indent);
  } catch (err) {
    if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
  }
  const text = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? BIGINT_MARK + v.toString() : v), indent);
  return text.replace(MARKED, "$1");
}

/** Turns a safe integer-valued number or a digit string into an exact integer, when it is one. */
export function toExactInteger(value: unknown): ExactInteger | undefined {
  if (typeof value === "bigint") return value;
  if (typeof value === "number") return Number.isInteger(value) ? value : undefined;
  if (typeof value === "string" && /^-?\d+$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : BigInt(value);
  }
  return undefined;
}
