/**
 * Every marketplace decoder of the venue table on hostile logs (any topic, any data, from any of its exchanges):
 * none throws, and what records they yield have sane fields. Each venue's own cases are in its file
 * (test/ingest/venues/<venue>.test.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { topic, word } from "../../support/index-helpers.js";
import { BUYER, erc721, log, PAIR, table } from "../../support/venue-logs.js";

describe("every venue on hostile data", () => {
  it("never throws, and yields records only with sane fields", () => {
    const topics = [...table.byTopic.keys()];
    fc.assert(
      fc.property(
        fc.constantFrom(...topics),
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), { maxLength: 40 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        (topic0, words, topicCount, pick) => {
          const venue = table.byTopic.get(topic0)!;
          // Any of the venue's exchanges: some events are read only from one of them.
          const at = venue.addresses === "any" ? PAIR : venue.addresses[pick % venue.addresses.length]!;
          const l = log(
            at,
            [topic0, ...Array.from({ length: topicCount - 1 }, (_, i) => topic(words[i] ?? 0n))],
            words.map(word).join(""),
          );
          const records = venue.decode(l, {
            logs: [erc721(PAIR, BUYER, 1), l],
            transaction: { from: BUYER, to: at, input: "0x", value: "0x0" },
          });
          for (const r of records ?? []) {
            expect(r.contract).toMatch(/^0x[0-9a-f]{40}$/);
            expect(r.tokenId).toMatch(/^\d+$/);
            expect(r.from).toMatch(/^0x[0-9a-f]{40}$/);
            expect(r.to).toMatch(/^0x[0-9a-f]{40}$/);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
