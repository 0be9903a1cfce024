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

/**
 * Arrays and objects nest at most this deep, in the parser and in input validation, so that nothing recursive
 * (serialisation, copying, validation) can exhaust the stack on hostile input.
 */
export const MAX_JSON_DEPTH = 100;

/** JSON text nested deeper than MAX_JSON_DEPTH. A SyntaxError, so callers treat it as unreadable JSON. */
export class JsonTooDeepError extends SyntaxError {
  override name = "JsonTooDeepError";
}

// A number token starts the text or follows `:`, `[` or `,`; 16 or more digits may exceed 2^53.
const LONG_INTEGER = /(?:^|[:[,])\s*-?\d{16,}(?![\d.eE])/;

function parseNumber(text: string): number | bigint {
  if (isInteger(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/**
 * Parses JSON, turning unsafe integers into bigints. Throws `SyntaxError` like `JSON.parse`, and
 * `JsonTooDeepError` for arrays and objects nested deeper than MAX_JSON_DEPTH.
 */
export function parseJson(text: string): unknown {
  // Nesting deeper than the limit needs more brackets than that: short texts need no scan.
  if (text.length > MAX_JSON_DEPTH) checkDepth(text);
  if (!LONG_INTEGER.test(text)) return JSON.parse(text);
  return parseLossless(text, null, parseNumber);
}

/**
 * One pass over the text counting open arrays and objects; string contents are skipped with `indexOf`, so the
 * scan costs a fraction of the parse. Malformed text is left to the parser to report.
 */
function checkDepth(text: string): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i;
      do end = text.indexOf('"', end + 1);
      while (end !== -1 && isEscaped(text, end));
      if (end === -1) return;
      i = end;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) {
        throw new JsonTooDeepError(
          `arrays and objects are nested deeper than ${MAX_JSON_DEPTH} levels (at position ${i})`,
        );
      }
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
}

/** Whether the character at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
  return backslashes % 2 === 1;
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

/**
 * An integer in plain decimal digits, exact for bigints and for integral numbers of any size: what goes into a
 * URL (`String(1e21)` would be `1e+21`).
 */
export function toDecimal(value: number | bigint): string {
  return typeof value === "number" && Number.isSafeInteger(value) ? String(value) : BigInt(value).toString();
}
