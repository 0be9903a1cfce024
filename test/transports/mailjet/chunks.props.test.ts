import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recipientCount } from "../../../src/transports/mailjet/chunks.js";

/** What Mailjet counts, said plainly: the distinct addresses (any case) of To, Cc, Bcc and the Globals' Cc, Bcc. */
function reference(message: unknown, globals?: unknown): number {
  const lists = (owner: unknown, names: string[]) =>
    names.flatMap((name) => {
      const own =
        typeof owner === "object" && owner !== null && !Array.isArray(owner) && Object.hasOwn(owner, name)
          ? (owner as Record<string, unknown>)[name]
          : undefined;
      return Array.isArray(own) ? own : [];
    });
  const entries = [...lists(message, ["To", "Cc", "Bcc"]), ...lists(globals, ["Cc", "Bcc"])];
  if (entries.length < 2) return entries.length;
  const email = (e: unknown) =>
    typeof e === "object" && e !== null && !Array.isArray(e) && typeof (e as { Email?: unknown }).Email === "string"
      ? ((e as { Email: string }).Email as string).toLowerCase()
      : "";
  return new Set(entries.map(email)).size;
}

// Few distinct addresses, in either case, so that repeats across lists happen; and entries validation would refuse.
const entry = fc.oneof(
  fc.record({ Email: fc.constantFrom("a@x.org", "A@x.org", "b@x.org", "c@y.org", "") }),
  fc.constantFrom(null, 7, "a@x.org", [], {}),
);
const list = fc.oneof(fc.array(entry, { maxLength: 6 }), fc.constantFrom(undefined, null, "To", { Email: "a@x.org" }));
const owner = fc.oneof(
  fc.record({ To: list, Cc: list, Bcc: list }, { requiredKeys: [] }),
  fc.constantFrom(undefined, null, 3, [], "message"),
);

describe("mailjet recipientCount", () => {
  it("counts what the plain definition counts, for any message and Globals", () => {
    fc.assert(
      fc.property(owner, fc.option(owner, { nil: undefined }), (message, globals) => {
        expect(recipientCount(message, globals)).toBe(reference(message, globals));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads own lists only", () => {
    const inherited = Object.create({ Cc: [{ Email: "a@x.org" }, { Email: "b@x.org" }] }) as object;
    expect(recipientCount(inherited)).toBe(0);
    expect(recipientCount({ To: [{ Email: "a@x.org" }] }, inherited)).toBe(1);
  });
});
