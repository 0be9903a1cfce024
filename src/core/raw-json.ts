/**
 * JSON text that already says what a parsed value holds: an upstream's page, parsed and handed on unchanged, need
 * not be serialised again on its way out (the HTTP service splices the text into its reply).
 *
 * Only the code that parsed the text may vouch for it, and only when the value is the text's whole meaning: the
 * same keys and values (the text may differ in key order, spacing or how a number is written, never in what it
 * parses to). Integers beyond 2^53 are written in the text as they came, which is what serialising their bigints
 * gives. A key the text repeats stays repeated in it: a reader keeps the last one, as `JSON.parse` did for the value.
 * Kept in a WeakMap, so the text lives as long as the value does and nothing else can see or change it.
 */
const texts = new WeakMap<object, string>();

/** Records that `text` (JSON) parses to exactly `value`; returns `value`. */
export function vouchRawJson<T extends object>(value: T, text: string): T {
  texts.set(value, text);
  return value;
}

/** The JSON text vouched for `value`, if any. */
export function rawJsonOf(value: object): string | undefined {
  return texts.get(value);
}
