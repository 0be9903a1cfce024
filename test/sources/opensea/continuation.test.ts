/**
 * src/sources/opensea/continuation.ts on its own: the form of the OpenSea continuation, its binding to the query, what
 * it refuses (and so never issues). test/sources/opensea/source.test.ts and walk.test.ts cover it end to end through
 * the source.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeContinuation, encodeContinuation, tagOf } from "../../../src/sources/opensea/continuation.js";
import { MAX_CURSOR_LENGTH } from "../../../src/sources/opensea/events.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 31);

const FP = JSON.stringify(["by-contract", "0xabc", null, ["sale"]]);
const OTHER_FP = JSON.stringify(["by-contract", "0xabd", null, ["sale"]]);

/** What OpenSea's `next` may be: printable ASCII without space, up to MAX_CURSOR_LENGTH. */
const printable = fc
  .array(fc.integer({ min: 0x21, max: 0x7e }), { minLength: 1, maxLength: MAX_CURSOR_LENGTH })
  .map((codes) => String.fromCharCode(...codes));
const cursorArb = fc.record({ next: printable, previous: fc.string().map(tagOf) });
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Cursors OpenSea could not have sent, and previous tags tagOf does not make. */
const UNSENDABLE = ["", "has space", "tab\there", "é", "line\n", "\x7f", "x".repeat(MAX_CURSOR_LENGTH + 1)];
const BAD_TAGS = ["", "short", "x".repeat(9), "abc+defg"];

/** A token in the continuation's form, signed as the source signs, whatever it carries (the encoder refuses some). */
const signed = ({ next, previous }: { next: string; previous: string }) => {
  const mac = createHash("sha256").update(`${FP}|${next}|${previous}`).digest("base64url").slice(0, 16);
  return `${Buffer.from(next, "utf8").toString("base64url")}.${previous}.${mac}`;
};

describe("tagOf", () => {
  it("is a fixed-length base64url name, the same for the same cursor", () => {
    for (const c of ["", "a", "LTE2OTk5OTk5OTk5OTk5OTk5OQ==", "x".repeat(MAX_CURSOR_LENGTH)]) {
      expect(tagOf(c)).toHaveLength(8);
      expect(tagOf(c)).toMatch(BASE64URL);
      expect(tagOf(c)).toBe(tagOf(c));
    }
    expect(tagOf("a")).not.toBe(tagOf("b"));
    expect(tagOf("")).not.toBe(tagOf(" "));
  });
});

describe("encodeContinuation / decodeContinuation", () => {
  const cursor = { next: "cj0xJnA9MjAyMy0wMy0wMQ==", previous: tagOf("") };

  it("has the form <base64url(next)>.<previous>.<mac> and decodes to the same cursor", () => {
    const token = encodeContinuation(cursor, FP);
    const [body, previous, mac, ...rest] = token.split(".");
    expect(rest).toEqual([]);
    expect(Buffer.from(body!, "base64url").toString("utf8")).toBe(cursor.next);
    expect(previous).toBe(cursor.previous);
    expect(mac).toHaveLength(16);
    expect(mac).toMatch(BASE64URL);
    expect(decodeContinuation(token, FP)).toEqual(cursor);
  });

  it("is bound to the query: another fingerprint, another cursor or another previous is refused", () => {
    const token = encodeContinuation(cursor, FP);
    expect(decodeContinuation(token, OTHER_FP)).toBeUndefined();
    expect(decodeContinuation(token, "")).toBeUndefined();
    const [, previous, mac] = token.split(".");
    const otherBody = Buffer.from("another-cursor").toString("base64url");
    expect(decodeContinuation(`${otherBody}.${previous}.${mac}`, FP)).toBeUndefined();
    expect(decodeContinuation(`${token.split(".")[0]}.${tagOf("x")}.${mac}`, FP)).toBeUndefined();
  });

  it.each([
    ["empty", ""],
    ["no separators", "abcdefgh"],
    ["two parts", "YWJj.AAAAAAAA"],
    ["four parts", "YWJj.AAAAAAAA.AAAAAAAAAAAAAAAA.x"],
    ["an empty body", ".AAAAAAAA.AAAAAAAAAAAAAAAA"],
    ["a tag of 7", "YWJj.AAAAAAA.AAAAAAAAAAAAAAAA"],
    ["a mac of 17", "YWJj.AAAAAAAA.AAAAAAAAAAAAAAAAA"],
    ["standard base64", "YW+j.AAAAAAAA.AAAAAAAAAAAAAAAA"],
    ["padding", "YWI=.AAAAAAAA.AAAAAAAAAAAAAAAA"],
    ["whitespace around", " YWJj.AAAAAAAA.AAAAAAAAAAAAAAAA"],
  ])("refuses a token with %s", (_, token) => {
    expect(decodeContinuation(token, FP)).toBeUndefined();
  });

  it("refuses a well-formed, correctly signed cursor that OpenSea could not have sent", () => {
    const previous = tagOf("");
    for (const next of UNSENDABLE) expect(decodeContinuation(signed({ next, previous }), FP)).toBeUndefined();
    const longest = { next: "~".repeat(MAX_CURSOR_LENGTH), previous };
    expect(decodeContinuation(encodeContinuation(longest, FP), FP)).toEqual(longest);
  });

  it("refuses a previous tag that is not 8 base64url characters", () => {
    for (const previous of BAD_TAGS) {
      expect(decodeContinuation(signed({ next: "abc", previous }), FP)).toBeUndefined();
    }
  });

  it("issues no token its decoder would refuse: such a cursor or tag is an internal error", () => {
    const cases = [
      ...UNSENDABLE.map((next) => ({ next, previous: tagOf("") })),
      ...BAD_TAGS.map((previous) => ({ next: "abc", previous })),
    ];
    for (const cursor of cases) {
      expect(() => encodeContinuation(cursor, FP)).toThrow(
        expect.objectContaining({ code: "internal", message: expect.stringMatching(/^No OpenSea continuation for/) }),
      );
    }
  });
});

describe("continuation (properties)", () => {
  it("any cursor OpenSea may send decodes back, under its own query only", () => {
    fc.assert(
      fc.property(cursorArb, fc.string(), fc.string(), (cursor, fp, other) => {
        const token = encodeContinuation(cursor, fp);
        expect(decodeContinuation(token, fp)).toEqual(cursor);
        if (other !== fp) expect(decodeContinuation(token, other)).toBeUndefined();
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("whatever the encoder accepts decodes back to it: it throws rather than issue a token it would refuse", () => {
    const anyText = (maxLength: number) =>
      fc.oneof(
        fc.string({ maxLength }),
        fc.string({ unit: "grapheme", maxLength }),
        fc.string({ unit: fc.constantFrom("!", "~", "a", "=", " "), maxLength }),
      );
    const cursors = fc.record({
      next: fc.oneof(printable, anyText(MAX_CURSOR_LENGTH + 4)),
      previous: fc.oneof(fc.string().map(tagOf), anyText(10)),
    });
    fc.assert(
      fc.property(cursors, fc.string(), (cursor, fp) => {
        let token: string;
        try {
          token = encodeContinuation(cursor, fp);
        } catch (err) {
          expect(err).toHaveProperty("code", "internal");
          return;
        }
        expect(decodeContinuation(token, fp)).toEqual(cursor);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("a changed character in the tag or mac is refused; one in the body never yields another cursor", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    fc.assert(
      fc.property(cursorArb, fc.nat(), fc.integer({ min: 1, max: 63 }), (cursor, at, shift) => {
        const token = encodeContinuation(cursor, FP);
        const i = at % token.length;
        if (token[i] === ".") return;
        const changed = alphabet[(alphabet.indexOf(token[i]!) + shift) % 64]!;
        const mutated = token.slice(0, i) + changed + token.slice(i + 1);
        const decoded = decodeContinuation(mutated, FP);
        if (i > token.indexOf(".")) expect(decoded).toBeUndefined();
        // In the body, the last character's spare bits may change without changing the bytes.
        else if (decoded !== undefined) expect(decoded).toEqual(cursor);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("arbitrary strings decode to nothing", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (token) => {
        expect(decodeContinuation(token, FP)).toBeUndefined();
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
