/**
 * Exact JSON: integers beyond 2^53 (token ids, ERC-1155 quantities, Mailjet MessageIDs) keep every digit.
 *
 * In memory such an integer is a `bigint`; every other number stays a `number`. On the wire it is a bare JSON
 * integer again. Plain `JSON.parse` would round 10000000000000000000001 to 1e22, so `parseJson` parses natively
 * and pays for exactness only when the result holds a number beyond 2^53: then it reads just those literals
 * from the text again and puts them in as bigints.
 */
import { isInteger, parse as parseLossless } from "lossless-json";
import {
  containsExactDecimals,
  EXACT_SUFFIX,
  exactDecimalOf,
  holdsExactDecimals,
  markExactCopy,
} from "./exact-decimals.js";

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

/**
 * Parses JSON, turning unsafe integers into bigints. Throws `SyntaxError` like `JSON.parse`, and
 * `JsonTooDeepError` for arrays and objects nested deeper than MAX_JSON_DEPTH.
 *
 * V8's `JSON.parse` does not recurse, so it is safe on any nesting; the depth is checked on its result, in the
 * same walk that looks for numbers a double cannot hold exactly. Any integer literal beyond 2^53 parses to such
 * a number, so a result without one is exact as it is (the common case: one native parse and one walk).
 */
export function parseJson(text: string, options: ParseOptions = {}): unknown {
  const value: unknown = JSON.parse(text);
  const unsafe: Slot[] = [];
  if (typeof value === "object" && value !== null) {
    findUnsafeNumbers(value, 1, Object.keys(Object.prototype).length > 0, unsafe);
    if (unsafe.length === 0) return value;
    if (options.unsafeIntegersRoundTogether && unsafe.length > 1) return withQuotedIntegers(text);
  } else if (!isUnsafeNumber(value)) return value;
  return withExactIntegers(text, value, unsafe);
}

export interface ParseOptions {
  /**
   * The text's integers beyond 2^53, when it has several, most likely round to shared doubles (Mailjet's
   * consecutive MessageIDs): go straight to the quoted reading, which the matching of literals to numbers would
   * come to anyway after a pass over the text. The same value either way.
   */
  unsafeIntegersRoundTogether?: boolean;
}

/** Where a value sits: its array or object and its index or key. */
type Slot = [holder: Record<string | number, unknown>, key: string | number];

const isUnsafeNumber = (value: unknown): value is number =>
  typeof value === "number" && (value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER);

/**
 * Notes in `found` where an array or object holds a number beyond ±(2^53 - 1), at any depth; throws
 * JsonTooDeepError when it nests deeper than MAX_JSON_DEPTH (`level` is the level it sits at). Objects are walked
 * with `for…in`, which allocates nothing and is several times cheaper than `Object.values` on JSON.parse's objects;
 * only when Object.prototype was given enumerable properties (`inherited`) does it have to skip what is not the
 * object's own.
 */
function findUnsafeNumbers(container: object, level: number, inherited: boolean, found: Slot[]): void {
  if (level > MAX_JSON_DEPTH) {
    throw new JsonTooDeepError(`arrays and objects are nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const holder = container as Record<string | number, unknown>;
  if (Array.isArray(container)) {
    for (let i = 0; i < container.length; i++) {
      const v: unknown = container[i];
      if (typeof v === "object") {
        if (v !== null) findUnsafeNumbers(v, level + 1, inherited, found);
      } else if (typeof v === "number" && (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER))
        found.push([holder, i]);
    }
    return;
  }
  for (const key in container) {
    if (inherited && !Object.hasOwn(container, key)) continue;
    const v: unknown = holder[key];
    if (typeof v === "object") {
      if (v !== null) findUnsafeNumbers(v, level + 1, inherited, found);
    } else if (typeof v === "number" && (v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER))
      found.push([holder, key]);
  }
}

/** Two different integer literals that round to the same double: which one a number came from is unknown. */
const AMBIGUOUS = Symbol("ambiguous");

/**
 * `value` (parsed from `text`) with each number beyond 2^53 that was written as an integer replaced by the
 * bigint of its literal. The literals are read from the text outside strings and matched to the numbers by
 * their rounded value, and only the numbers the walk found (`unsafe`) are touched. When that match is ambiguous (two literals rounding to
 * the same double, or an integer and a float literal that do), the text is parsed again with those literals
 * quoted (`withQuotedIntegers`).
 */
function withExactIntegers(text: string, value: unknown, unsafe: readonly Slot[]): unknown {
  const { integers, floats } = unsafeLiterals(text);
  const exact = (n: number): bigint | number | typeof AMBIGUOUS => {
    const literal = integers.get(n);
    if (literal === undefined) return n; // written as a float (1e300, 12345678901234567.5): a number it stays
    if (literal === AMBIGUOUS || floats.has(n)) return AMBIGUOUS;
    return BigInt(literal);
  };
  if (typeof value !== "object" || value === null) {
    const root = exact(value as number);
    return root === AMBIGUOUS ? withQuotedIntegers(text) : root;
  }
  const exactValues = unsafe.map(([holder, key]) => exact(holder[key] as number));
  if (exactValues.includes(AMBIGUOUS)) return withQuotedIntegers(text);
  // An own `__proto__` key (JSON.parse makes one) is assigned as the data property it is, never the accessor.
  unsafe.forEach(([holder, key], i) => {
    holder[key] = exactValues[i];
  });
  return value;
}

/**
 * The ambiguous case (consecutive Mailjet MessageIDs round to a handful of doubles: every answer of a batch is
 * one): the text again with each integer literal beyond 2^53 written as the string `"\u0000<digits>"`, parsed
 * natively, and those strings turned into bigints. A parsed string can start with U+0000 only when the text
 * writes `\u0000` (JSON has no other way to hold it), so a text that does goes through the lossless parser
 * instead. Several times faster than the lossless parser, and its strings take a sixth of the memory.
 */
function withQuotedIntegers(text: string): unknown {
  if (text.includes("\\u0000")) return parseLossless(text, null, parseNumber);
  let quoted = "";
  let from = 0;
  scanNumbers(text, (start, end, integral) => {
    if (!integral || end - start < 16 || !isUnsafeNumber(Number(text.slice(start, end)))) return;
    quoted += `${text.slice(from, start)}"\\u0000${text.slice(start, end)}"`;
    from = end;
  });
  const value: unknown = JSON.parse(quoted + text.slice(from));
  if (typeof value === "string") return BigInt(value.slice(1));
  if (typeof value === "object" && value !== null) unquoteIntegers(value);
  return value;
}

/** Turns, in place, every string `withQuotedIntegers` wrote back into the bigint it stands for. */
function unquoteIntegers(container: object): void {
  const record = container as Record<string, unknown>;
  const keys: (string | number)[] = Array.isArray(container) ? [...container.keys()] : Object.keys(container);
  for (const key of keys) {
    const v = record[key];
    if (typeof v === "object") {
      if (v !== null) unquoteIntegers(v);
    } else if (typeof v === "string" && v.charCodeAt(0) === 0) record[key] = BigInt(v.slice(1));
  }
}

/**
 * The number literals of valid JSON text (outside strings) whose value is beyond ±(2^53 - 1): integer literals by
 * their rounded value, and the rounded values that float literals (`1e20`) have.
 */
function unsafeLiterals(text: string): {
  integers: Map<number, string | typeof AMBIGUOUS>;
  floats: Set<number>;
} {
  const integers = new Map<number, string | typeof AMBIGUOUS>();
  const floats = new Set<number>();
  scanNumbers(text, (start, end, integral) => {
    // Fewer than 16 characters and no exponent: fewer than 16 digits before any fraction, always below 2^53
    // (most of a page's floats, prices among them, end here without being read).
    if (end - start < 16 && (integral || !hasExponent(text, start, end))) return;
    const literal = text.slice(start, end);
    const n = Number(literal);
    if (!isUnsafeNumber(n)) return;
    if (!integral) floats.add(n);
    else {
      const seen = integers.get(n);
      integers.set(n, seen === undefined || seen === literal ? literal : AMBIGUOUS);
    }
  });
  return { integers, floats };
}

/** Whether the number literal at `start`…`end` of `text` has an exponent. */
function hasExponent(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if ((text.charCodeAt(i) | 0x20) === 0x65 /* e or E */) return true;
  return false;
}

/** Calls `found` with each number literal of valid JSON text (outside strings): where it is, and if integral. */
function scanNumbers(text: string, found: (start: number, end: number, integral: boolean) => void): void {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = i;
      do end = text.indexOf('"', end + 1);
      while (isEscaped(text, end));
      i = end;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      let integral = true;
      for (; end < text.length; end++) {
        const d = text.charCodeAt(end);
        if (d >= 0x30 && d <= 0x39) continue;
        // . e E + -: only inside a number here (the text is valid JSON)
        if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) integral = false;
        else break;
      }
      found(i, end, integral);
      i = end - 1;
    }
  }
}

/** The lossless parser's number reviver: what a text holding `\\u0000` falls back on. */
function parseNumber(text: string): number | bigint {
  if (isInteger(text)) {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  }
  return Number(text);
}

/** Whether the character at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * Serialises like `JSON.stringify`, writing bigints as bare JSON integers and a number that has an exact decimal text
 * beside it (exact-decimals.ts: a price computed from wei) with that text's digits.
 */
export function stringifyJson(value: unknown, indent?: number): string {
  const exact = containsExactDecimals(value);
  if (!exact) {
    try {
      // Most values hold no bigint: the native serialiser, untouched, is several times faster than a replacer. Called
      // with one argument when it can be: given a replacer, even `null`, Node 26's V8 leaves its fast path (2× slower).
      return indent === undefined ? JSON.stringify(value) : JSON.stringify(value, null, indent);
    } catch (err) {
      if (!(err instanceof TypeError && /BigInt/i.test(err.message))) throw err;
    }
  }
  // What must come out as a bare number goes through as a string marked with a nonce of this call, then loses its
  // quotes: no string of the value can carry the mark (it is unguessable), so none is ever unquoted by mistake.
  const nonce = crypto.randomUUID().replaceAll("-", "");
  const mark = `\u0000${nonce}:`;
  const text = JSON.stringify(
    value,
    function (this: object, key: string, v: unknown) {
      if (typeof v === "bigint") return mark + v.toString();
      if (exact && typeof v === "number" && holdsExactDecimals(this)) {
        const digits = exactDecimalOf(this, key);
        if (digits !== undefined && digits !== String(v)) return mark + digits;
      }
      return v;
    },
    indent,
  );
  return text.replace(new RegExp(`"\\\\u0000${nonce}:(-?[0-9.]+)"`, "g"), "$1");
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

/**
 * `value` with every bigint (an integer beyond 2^53) written as its exact decimal string, and every exact decimal
 * text (exact-decimals.ts: `price_exact` beside `price`) made an ordinary string field beside its number: what the
 * workflow packages hand their hosts, whose messages pass through code that cannot serialise a bigint or write a
 * number's every digit (Node-RED's debug sidebar and storage, n8n's item data), and the service's `?bigint=string`.
 * Safe integers stay numbers; nothing else changes. `value` is a node's output (plain JSON data, bounded depth),
 * copied, never changed in place.
 */
export function withExactStrings(value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return value.map(withExactStrings);
  const out: Record<string, unknown> = {};
  const define = (key: string, item: unknown) =>
    // A `__proto__` key is copied as the data property it is.
    Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
  const exact = holdsExactDecimals(value);
  for (const key of Object.keys(value)) {
    define(key, withExactStrings((value as Record<string, unknown>)[key]));
    const digits = exact ? exactDecimalOf(value, key) : undefined;
    if (digits !== undefined) define(key + EXACT_SUFFIX, digits);
  }
  if (exact) markExactCopy(value, out);
  return out;
}
