/**
 * Property-based test of the address rule's fast forms: `isEmailAddress` tries an ASCII-only pattern first and
 * remembers the last address it found valid, so it must answer exactly what the Unicode definition
 * (`EMAIL_ADDRESS` within 254 characters and a local part of at most 64) answers, for any string and in any order.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EMAIL_ADDRESS, isEmailAddress } from "../../src/transports/message-rules.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261123);
const settings = { numRuns: RUNS, seed: SEED };

const byDefinition = (text: string) => text.length <= 254 && text.indexOf("@") <= 64 && EMAIL_ADDRESS.test(text);

// Pieces addresses are made of, valid and not: ASCII and non-ASCII letters and digits, the local part's symbols,
// dots, hyphens, `@`, punycode prefixes, spaces and characters no address holds.
const piece = fc.constantFrom(
  "a",
  "Z",
  "7",
  "é",
  "ß",
  "日本",
  "٣",
  "+",
  "_",
  "`",
  "~",
  "!",
  ".",
  "..",
  "-",
  "@",
  "xn--",
  "com",
  "de",
  " ",
  "\t",
  "(",
  '"',
  "\u0301",
  "x".repeat(63),
);
const text = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((parts) => parts.join("")),
  fc
    .tuple(fc.array(piece, { minLength: 1, maxLength: 6 }), fc.array(piece, { minLength: 1, maxLength: 6 }))
    .map(([local, domain]) => `${local.join("")}@${domain.join("")}.com`),
  fc.string({ maxLength: 40 }),
);

describe("isEmailAddress", () => {
  it("answers as the Unicode definition does, for any string, called in any order (its memo included)", () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 8 }), (texts) => {
        // Each text twice, the second time right after the memo may hold it.
        for (const t of [...texts, ...texts.toReversed()]) expect(isEmailAddress(t)).toBe(byDefinition(t));
      }),
      settings,
    );
  });

  it("takes ASCII and non-ASCII addresses and refuses what Mailjet refuses", () => {
    for (const good of ["ann@example.com", "a.b+c@mail.example.de", "josé@exämple.com", "a@xn--bcher-kva.ch"])
      expect(isEmailAddress(good)).toBe(true);
    for (const bad of ["invalid@123.4", "a..b@example.com", "a@-example.com", "a@example", `${"x".repeat(65)}@e.com`])
      expect(isEmailAddress(bad)).toBe(false);
  });
});
