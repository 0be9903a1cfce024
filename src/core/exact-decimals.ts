/**
 * Exact decimals: a price computed from an integer amount (wei ÷ 10^18, an ERC-20's units ÷ 10^decimals, times a
 * feed's answer) has as many digits as it needs (`0.333333333333333333`); a double keeps about 16 of them.
 *
 * In memory such a value stays a number, what code computes with, and its exact text rides beside it on the same
 * object as `<key>_exact` (`price_exact`, `price_usd_exact`), a property that is not enumerable: JSON.stringify,
 * Object.keys, spreads and deep equality do not see it, so records keep their documented shape. `stringifyJson`
 * writes the number with the text's digits (JSON allows any number of them); `withExactStrings` (the workflow
 * hosts, the service's `?bigint=string`) makes the text an ordinary string field beside the number. The text is
 * used only while it still stands for the number there: code that changes the number leaves the old text unused.
 */

/** The suffix of the property that holds a value's exact text: `price` → `price_exact`. */
export const EXACT_SUFFIX = "_exact";

/** A plain decimal: digits, an optional fraction, no exponent. */
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

/**
 * What an object was given: an exact text (HOLDER, by `setExactDecimal` or as a copy by `withExactStrings`), one a
 * number does not write the same (MORE_DIGITS: `0.333333333333333333`, not `1.5`; JSON needs it). Kept on the object
 * under a symbol, not enumerable (JSON, keys, spreads and deep equality do not see it), rather than in WeakSets: a
 * WeakSet holding every priced record of every page made the collector's pauses the slow pages' cost (p99 of a page
 * of 50 sales 2× in a micro-benchmark).
 */
const MARK = Symbol("chainmail.exactDecimals");
const HOLDER = 1;
const MORE_DIGITS = 2;
const markOf = (holder: object): number =>
  Object.hasOwn(holder, MARK) ? ((holder as Record<symbol, number>)[MARK] ?? 0) : 0;
function mark(holder: object, level: number): void {
  if (markOf(holder) >= level) return;
  Object.defineProperty(holder, MARK, { value: level, enumerable: false, writable: true, configurable: true });
}
/** Whether any object ever got a text with more digits than its number writes: until then writers need not look. */
let anyHolder = false;

/** `amount` ÷ 10^`decimals` as an exact decimal, without trailing zeros: 333333333333333333n, 18 → `0.333333333333333333`. */
export function decimalText(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** A plain decimal already in its shortest form: what the own index stores and `decimalText` writes. */
const SHORTEST = /^-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/;

/** A plain decimal in its shortest form (`007.50` → `7.5`), or undefined when `text` is not one. */
function canonical(text: string): string | undefined {
  if (SHORTEST.test(text)) return text === "-0" ? "0" : text;
  if (!DECIMAL.test(text)) return undefined;
  const negative = text[0] === "-";
  const [whole = "", fraction = ""] = (negative ? text.slice(1) : text).split(".");
  const w = whole.replace(/^0+(?=\d)/, "");
  const f = fraction.replace(/0+$/, "");
  const body = f ? `${w}.${f}` : w;
  return negative && body !== "0" ? `-${body}` : body;
}

/**
 * Sets `holder[key]` to the number nearest `text` (a plain decimal) and keeps `text` beside it as
 * `holder[key + "_exact"]`, not enumerable. A `text` that is not a plain decimal sets the number only.
 */
export function setExactDecimal(holder: object, key: string, text: string): void {
  const exact = canonical(text);
  const value = Number(text);
  (holder as Record<string, unknown>)[key] = value;
  if (exact === undefined) return;
  Object.defineProperty(holder, key + EXACT_SUFFIX, {
    value: exact,
    enumerable: false,
    writable: true,
    configurable: true,
  });
  if (exact !== String(value)) {
    mark(holder, MORE_DIGITS);
    anyHolder = true;
  } else mark(holder, HOLDER);
}

/** The exact text of `holder[key]`, when it has one that still stands for the number there. */
export function exactDecimalOf(holder: object, key: string): string | undefined {
  if (markOf(holder) === 0) return undefined;
  const record = holder as Record<string, unknown>;
  const value = record[key];
  const text = Object.hasOwn(holder, key + EXACT_SUFFIX) ? record[key + EXACT_SUFFIX] : undefined;
  return typeof value === "number" && typeof text === "string" && Number(text) === value ? text : undefined;
}

/** Whether `holder` was given exact texts (a cheap first test before `exactDecimalOf`). */
export const holdsExactDecimals = (holder: object): boolean => markOf(holder) !== 0;

/** Marks a copy whose `<key>_exact` fields (now plain strings) stand for its numbers, as its original's did. */
export function markExactCopy(original: object, copy: object): void {
  mark(copy, markOf(original) || HOLDER);
}

/**
 * Whether `value` (plain JSON data) holds, at any depth, an object with an exact text that has more digits than its
 * number writes: what a writer asks before taking its fast path. Free until some value was given one.
 */
export function containsExactDecimals(value: unknown, depth = 0): boolean {
  if (!anyHolder || typeof value !== "object" || value === null || depth > 200) return false;
  if (markOf(value) === MORE_DIGITS) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === "object" && containsExactDecimals(item, depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === "object" && containsExactDecimals(item, depth + 1)) return true;
  }
  return false;
}
