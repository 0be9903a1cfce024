/**
 * The `result` array of a JSON-RPC answer, parsed a slice of elements at a time instead of all at once.
 *
 * Why: an `eth_getLogs` answer over dense blocks holds tens of thousands of logs. Parsed whole, every log object
 * lives until the last one is decoded, long enough to be promoted to the old generation, and the heap grows by
 * several times the answer's size. Parsed a thousand at a time and decoded at once, they die young.
 *
 * The text is scanned once for element boundaries (strings jumped over with `indexOf`, nesting counted), which
 * also proves it whole before any of it is used; each slice is then handed to `JSON.parse`, which checks it fully,
 * and so are the envelope's other members. Any other
 * shape (an error object, a batch, text that is not JSON) is `undefined`: the caller parses it whole as before.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface ResultSlices {
  /** The answer's `id`. */
  id: unknown;
  /**
   * The elements of `result`, in order, `size` at a time. Throws `SyntaxError` where the text turns out not to be
   * JSON (a slice `JSON.parse` refuses, possibly after some slices), or not a plain answer (before any slice).
   */
  slices(size: number): Generator<unknown[]>;
  /**
   * Whether the whole text has the answer's shape (each element ends, the envelope closes), stepped over without
   * parsing: a cut-off answer is found before any of it is used. The same scan gives the slices their boundaries;
   * each slice is still checked by `JSON.parse`.
   */
  whole(): boolean;
}

/**
 * Finds the `result` array of a single JSON-RPC answer `{"jsonrpc": …, "id": …, "result": [ … ]}` (members in any
 * order). Undefined when the text is anything else, or carries an `error` member.
 */
export function resultSlices(text: string): ResultSlices | undefined {
  const scan = new Scanner(text);
  if (scan.skipSpace() !== OPEN_BRACE) return undefined;
  scan.at++;
  let id: unknown;
  let start: number | undefined;
  /** The envelope after the array is read: when `id` came before `result`, as nodes write it, only by `slices`. */
  let whole = false;
  for (;;) {
    const key = scan.memberName();
    if (key === "result") {
      if (start !== undefined || text.charCodeAt(scan.at) !== OPEN_BRACKET) return undefined;
      start = scan.at;
      if (id !== undefined) break;
      if (!scan.skipValue()) return undefined;
    } else {
      const checked = key === undefined || key === "error" ? undefined : scan.smallValue();
      if (!checked) return undefined;
      if (key === "id") id = checked.value;
    }
    const next = scan.afterMember();
    if (next === undefined) return undefined;
    if (next === CLOSE_BRACE) {
      if (scan.skipSpace() !== undefined || start === undefined) return undefined;
      whole = true;
      break;
    }
  }
  const arrayStart = start;
  /** Where each element of the array starts and ends, once the whole text is stepped through. */
  let bounds: { starts: number[]; ends: number[] } | undefined;
  /**
   * Steps through the array and the members after it, once: the boundaries that prove the text whole are the ones
   * the slices are cut at. Throws `SyntaxError` where the text is not an answer's shape.
   */
  function boundaries(): { starts: number[]; ends: number[] } {
    if (bounds) return bounds;
    const starts: number[] = [];
    const ends: number[] = [];
    const inner = new Scanner(text, arrayStart + 1);
    const malformed = () => new SyntaxError(`Malformed JSON-RPC answer at position ${inner.at}`);
    if (inner.skipSpace() !== CLOSE_BRACKET) {
      for (;;) {
        starts.push(inner.at);
        if (!inner.skipValue()) throw malformed();
        ends.push(inner.at);
        const after = inner.skipSpace();
        inner.at++;
        if (after === CLOSE_BRACKET) break;
        if (after !== COMMA) throw malformed();
        inner.skipSpace();
      }
    } else {
      inner.at++;
    }
    if (!whole) {
      // The members after the array: none may change what was given (JSON.parse keeps a repeated member's last).
      for (;;) {
        const next = inner.afterMember();
        if (next === CLOSE_BRACE && inner.skipSpace() === undefined) break;
        if (next !== COMMA) throw malformed();
        const key = inner.memberName();
        const repeated = key === "result" || key === "error" || key === "id";
        if (key === undefined || repeated || !inner.smallValue()) throw malformed();
      }
    }
    bounds = { starts, ends };
    return bounds;
  }
  return {
    id,
    *slices(size: number) {
      const { starts, ends } = boundaries();
      for (let i = 0; i < starts.length; i += size) {
        const last = Math.min(i + size, starts.length) - 1;
        yield JSON.parse(`[${text.slice(starts[i], ends[last])}]`) as unknown[];
      }
    },
    whole() {
      try {
        boundaries();
        return true;
      } catch {
        return false;
      }
    },
  };
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A cursor over JSON text that steps over whitespace, strings and whole values without building them. */
class Scanner {
  constructor(
    private readonly text: string,
    public at = 0,
  ) {}

  /** Steps over whitespace; the next character's code, or undefined at the end. */
  skipSpace(): number | undefined {
    const { text } = this;
    for (; this.at < text.length; this.at++) {
      const c = text.charCodeAt(this.at);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
    }
    return undefined;
  }

  /** Steps over a string starting here; false when there is none or it never ends. */
  skipString(): boolean {
    const { text } = this;
    if (text.charCodeAt(this.at) !== QUOTE) return false;
    for (let from = this.at + 1; ; ) {
      const quote = text.indexOf('"', from);
      if (quote < 0) return false;
      // Escaped when an odd number of backslashes stands before it.
      let slashes = 0;
      while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++;
      if (slashes % 2 === 0) {
        this.at = quote + 1;
        return true;
      }
      from = quote + 1;
    }
  }

  /**
   * Steps over one value starting here; false when the text ends first. Nesting is counted, not recursed into
   * (depth costs nothing), and brackets are not paired: `JSON.parse` judges what was stepped over.
   */
  skipValue(): boolean {
    const { text } = this;
    const first = text.charCodeAt(this.at);
    if (first === QUOTE) return this.skipString();
    if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
      // A scalar: up to the next delimiter.
      const start = this.at;
      while (this.at < text.length && !isDelimiter(text.charCodeAt(this.at))) this.at++;
      return this.at > start;
    }
    let depth = 0;
    for (let i = this.at; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        this.at = i;
        if (!this.skipString()) return false;
        i = this.at - 1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        depth++;
      } else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) {
        this.at = i + 1;
        return true;
      }
    }
    return false;
  }

  /** Reads `"name":` and stops at the value; the name (read as JSON: escapes could spell "result"), or undefined. */
  memberName(): string | undefined {
    const start = this.skipSpace() === QUOTE ? this.at : -1;
    if (start < 0 || !this.skipString()) return undefined;
    const name = parseOrUndefined(this.text.slice(start, this.at));
    if (typeof name !== "string" || this.skipSpace() !== COLON) return undefined;
    this.at++;
    return this.skipSpace() === undefined ? undefined : name;
  }

  /** Steps over a small value and reads it as JSON; undefined when it is not JSON. */
  smallValue(): { value: unknown } | undefined {
    const start = this.at;
    if (!this.skipValue()) return undefined;
    // JSON text never parses to undefined: undefined is "not JSON".
    const value = parseOrUndefined(this.text.slice(start, this.at));
    return value === undefined ? undefined : { value };
  }

  /** Steps over what follows a member: `,` or `}` (its code), anything else undefined. */
  afterMember(): number | undefined {
    const next = this.skipSpace();
    if (next !== COMMA && next !== CLOSE_BRACE) return undefined;
    this.at++;
    return next;
  }
}

const isDelimiter = (c: number): boolean =>
  c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
