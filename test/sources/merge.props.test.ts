/**
 * Property-based test of the newest-first merge behind NFT_SOURCE=index+opensea (src/sources/merge.ts), over
 * in-memory streams that page like the real sources: by a continuation, some (like OpenSea's) reading `size` events
 * and showing only those that pass a filter, so that pages come short or empty while more follow.
 * - Paged with any sequence of page sizes, every record of every stream comes out exactly once, each stream's in
 *   its own order, and the paging ends.
 * - When each stream is newest first, the pages are exactly the merge of the whole streams read at once.
 * - Any continuation string is refused (`invalid_continuation`) or read, never thrown on.
 *
 * Fixed seed (PROPS_SEED); PROPS_RUNS cases (default 300).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { mergeNewestFirst, type Stream } from "../../src/sources/merge.js";
import type { RetrieverOutcome } from "../../src/sources/types.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);
const settings = { numRuns: RUNS, seed: SEED };

interface Event {
  record: TransactionRecord;
  shown: boolean;
}

const dateOf = (n: number) => new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString().slice(0, 19);

/** A stream over events: a page reads `size` events after the continuation and shows those that pass. */
function streamOf(events: readonly Event[], maxPageSize: number): Stream {
  return {
    maxPageSize,
    page: async (continuation, size): Promise<RetrieverOutcome> => {
      const start = continuation ? Number(continuation) : 0;
      const read = events.slice(start, start + size);
      const next = start + size < events.length ? String(start + size) : "";
      const transactions = read.filter((e) => e.shown).map((e) => e.record);
      return {
        data: { response: "OK", transactions, continuation: next },
        response: { status: 200, headers: {}, body: "" },
      };
    },
  };
}

/** Streams of events; `sorted`: each newest first (by date, as the real sources answer). */
const streams = (sorted: boolean) =>
  fc
    .array(
      fc.record({
        events: fc.array(fc.record({ at: fc.integer({ min: 0, max: 40 }), shown: fc.boolean() }), { maxLength: 40 }),
        max: fc.integer({ min: 1, max: 25 }),
        filters: fc.boolean(),
      }),
      { minLength: 1, maxLength: 3 },
    )
    .map((specs) =>
      specs.map((spec, s) => {
        const ats = sorted ? spec.events.map((e) => e.at).sort((a, b) => b - a) : spec.events.map((e) => e.at);
        const events = spec.events.map((e, i) => ({
          record: {
            type: "transfer",
            id: `${s}.${i}`,
            transaction_date: dateOf(ats[i]!),
          } as unknown as TransactionRecord,
          shown: !spec.filters || e.shown,
        }));
        return { events, max: spec.max };
      }),
    );

async function pageThrough(made: { events: Event[]; max: number }[], sizes: number[]) {
  const all = made.map((m) => streamOf(m.events, m.max));
  const out: TransactionRecord[] = [];
  let continuation: string | undefined;
  for (let call = 0; call < 2000; call++) {
    const result = await mergeNewestFirst(all, { continuation, page_size: sizes[call % sizes.length] }, "fingerprint");
    if (!result.data) throw new Error(`merge failed: ${result.error?.error}`);
    expect(result.data.transactions.length).toBeLessThanOrEqual(sizes[call % sizes.length]!);
    out.push(...result.data.transactions);
    continuation = result.data.continuation || undefined;
    if (!continuation) return out;
  }
  throw new Error("paging did not end");
}

const compare = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
const idOf = (r: TransactionRecord) => (r as unknown as { id: string }).id;
const sizes = fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 5 });

describe("merging newest-first streams", () => {
  it("any streams, any page sizes: every shown record once, each stream in its own order, and the end", async () => {
    await fc.assert(
      fc.asyncProperty(streams(false), sizes, async (made, pageSizes) => {
        const out = (await pageThrough(made, pageSizes)).map(idOf);
        const shown = made.flatMap((m) => m.events.filter((e) => e.shown).map((e) => idOf(e.record)));
        expect([...out].sort()).toEqual([...shown].sort());
        made.forEach((m, s) => {
          const mine = out.filter((id) => id.startsWith(`${s}.`));
          expect(mine).toEqual(m.events.filter((e) => e.shown).map((e) => idOf(e.record)));
        });
      }),
      settings,
    );
  });

  it("newest-first streams: the pages are the merge of the whole streams, whatever the page sizes", async () => {
    await fc.assert(
      fc.asyncProperty(streams(true), sizes, async (made, pageSizes) => {
        const paged = (await pageThrough(made, pageSizes)).map(idOf);
        const whole = made
          .flatMap((m, s) => m.events.filter((e) => e.shown).map((e, i) => ({ e, s, i })))
          .sort((a, b) => compare(b.e.record.transaction_date, a.e.record.transaction_date) || a.s - b.s || a.i - b.i)
          .map(({ e }) => idOf(e.record));
        expect(paged).toEqual(whole);
      }),
      settings,
    );
  });

  it("any continuation string: refused or read, never thrown", async () => {
    const two = [streamOf([], 5), streamOf([], 5)];
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 1024 }), fc.base64String()), async (continuation) => {
        const out = await mergeNewestFirst(two, { continuation, page_size: 3 }, "fingerprint");
        if (out.error) expect(out.error.details.code).toBe("invalid_continuation");
      }),
      settings,
    );
  });
});
