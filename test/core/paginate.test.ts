/**
 * src/core/paginate.ts on its own, against a small in-memory retriever node: sizes, limits, stops, resumption, errors.
 * The end-to-end tests (test/nodes/nft.test.ts, test/sources/*) cover it through the real NFTPort and OpenSea sources.
 */
import { Type } from "@sinclair/typebox";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError, type Violation } from "../../src/core/errors.js";
import { defineNode } from "../../src/core/node.js";
import { MAX_EMPTY_PAGES, MAX_PAGE_SIZE, type Page, PageError, pages, records } from "../../src/core/paginate.js";
import { ErrorPayloadSchema } from "../../src/schemas/common.js";
import { testConfig } from "../support/helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 100);
const SEED = Number(process.env.PROPS_SEED ?? 29);

type Query = { continuation?: string; page_size?: number };
type Answer = { transactions: unknown[]; continuation: string } | { error: string; code: string };

/** A retriever node whose every call is answered by `answer`; the queries it got are kept, in order. */
function retriever(answer: (query: Query, call: number) => Answer) {
  const queries: Query[] = [];
  const node = defineNode({
    id: "test-retriever",
    version: "v0",
    title: "In-memory retriever",
    description: "Pages of an in-memory list",
    inputs: {
      query: Type.Object({ continuation: Type.Optional(Type.String()), page_size: Type.Optional(Type.Integer()) }),
    },
    outputs: {
      data: Type.Object({ transactions: Type.Array(Type.Unknown()), continuation: Type.String() }),
      response: Type.Unknown(),
      error: ErrorPayloadSchema,
    },
    successPort: "data",
    run: async ({ query }) => {
      queries.push({ ...query });
      const out = answer(query, queries.length);
      if ("error" in out)
        return { error: { error: out.error, details: { code: out.code } }, response: { status: 500 } };
      return { data: out, response: { call: queries.length } };
    },
  });
  return { node, queries };
}

/** A list of `count` records served `page_size` (default 5) at a time; the continuation is the next offset. */
function listOf(count: number, defaultSize = 5) {
  const items = Array.from({ length: count }, (_, i) => ({ n: i }));
  return {
    items,
    ...retriever((query) => {
      const from = query.continuation === undefined ? 0 : Number(query.continuation.slice(1));
      const to = Math.min(count, from + (query.page_size ?? defaultSize));
      return { transactions: items.slice(from, to), continuation: to < count ? `@${to}` : "" };
    }),
  };
}

const ctx = { config: testConfig() };

async function collect<R>(gen: AsyncGenerator<R>): Promise<R[]> {
  const out: R[] = [];
  for await (const item of gen) out.push(item);
  return out;
}

describe("pages", () => {
  it("hands out every page in order and ends on the page without a continuation", async () => {
    const { node, items, queries } = listOf(23);
    const got = await collect(pages(node, { query: {} }, {}, ctx));
    expect(got.map((p) => p.transactions.length)).toEqual([5, 5, 5, 5, 3]);
    expect(got.flatMap((p) => p.transactions)).toEqual(items);
    expect(got.map((p) => p.continuation)).toEqual(["@5", "@10", "@15", "@20", ""]);
    expect(got.map((p) => p.response)).toEqual([1, 2, 3, 4, 5].map((call) => ({ call })));
    // No page size given and no limit: none is sent.
    expect(queries[0]).toEqual({});
    expect(queries.slice(1).map((q) => q.continuation)).toEqual(["@5", "@10", "@15", "@20"]);
  });

  it("starts at the caller's continuation and keeps the caller's page size", async () => {
    const { node, items, queries } = listOf(12);
    const got = await collect(pages(node, { query: { continuation: "@4", page_size: 3 } }, {}, ctx));
    expect(got.flatMap((p) => p.transactions)).toEqual(items.slice(4));
    expect(queries.every((q) => q.page_size === 3)).toBe(true);
    expect(queries[0]!.continuation).toBe("@4");
  });

  it("never overshoots the limit: the last request asks only for what is still wanted", async () => {
    const { node, items, queries } = listOf(40);
    const got = await collect(pages(node, { query: { page_size: 5 } }, { limit: 12 }, ctx));
    expect(got.flatMap((p) => p.transactions)).toEqual(items.slice(0, 12));
    expect(queries.map((q) => q.page_size)).toEqual([5, 5, 2]);
    // The last continuation resumes right after the last record handed out.
    const last = got.at(-1)!.continuation;
    expect(last).toBe("@12");
    const rest = await collect(records(node, { query: { continuation: last, page_size: 5 } }, {}, ctx));
    expect(rest).toEqual(items.slice(12));
  });

  it("with a limit and no page size, asks for MAX_PAGE_SIZE at most", async () => {
    const { node, queries } = listOf(200);
    await collect(pages(node, { query: {} }, { limit: MAX_PAGE_SIZE + 7 }, ctx));
    expect(queries.map((q) => q.page_size)).toEqual([MAX_PAGE_SIZE, 7]);
    const small = listOf(200);
    await collect(pages(small.node, { query: {} }, { limit: 3 }, ctx));
    expect(small.queries.map((q) => q.page_size)).toEqual([3]);
  });

  it("a limit of 0 makes no request; a limit beyond the list ends with the list", async () => {
    const { node, queries } = listOf(10);
    expect(await collect(pages(node, { query: {} }, { limit: 0 }, ctx))).toEqual([]);
    expect(queries).toEqual([]);
    const all = await collect(records(node, { query: {} }, { limit: 1000 }, ctx));
    expect(all).toHaveLength(10);
  });

  it.each([-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])("refuses limit = %s, naming the field", async (limit) => {
    const { node, queries } = listOf(10);
    const err = await collect(pages(node, { query: {} }, { limit }, ctx)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainmailError);
    const e = err as ChainmailError;
    expect(e.code).toBe("invalid_input");
    expect(e.message).toBe(`limit = ${limit} is invalid: must be an integer >= 0.`);
    expect(e.details.violations).toEqual([{ field: "limit", value: limit, rule: "an integer >= 0" }]);
    expect(queries).toEqual([]);
  });

  it("hands out only what was wanted when the upstream sends more, and ends there", async () => {
    const big = Array.from({ length: 9 }, (_, n) => ({ n }));
    const { node } = retriever(() => ({ transactions: big, continuation: "@9" }));
    const got = await collect(pages(node, { query: {} }, { limit: 4 }, ctx));
    expect(got).toHaveLength(1);
    expect(got[0]!.transactions).toEqual(big.slice(0, 4));
    // Its continuation would skip the five left out.
    expect(got[0]!.continuation).toBe("");
  });

  it("stops on a continuation that repeats the one asked with, or any seen before", async () => {
    const same = retriever(() => ({ transactions: [1], continuation: "x" }));
    const got = await collect(pages(same.node, { query: {} }, {}, ctx));
    expect(got.map((p) => p.continuation)).toEqual(["x", ""]);
    expect(same.queries).toHaveLength(2);

    const cycle = ["a", "b", "c", "a"];
    const loop = retriever((_, call) => ({ transactions: [call], continuation: cycle[(call - 1) % 4]! }));
    const looped = await collect(pages(loop.node, { query: {} }, {}, ctx));
    expect(looped.map((p) => p.continuation)).toEqual(["a", "b", "c", ""]);
    expect(looped.flatMap((p) => p.transactions)).toEqual([1, 2, 3, 4]);
  });

  it("goes on past empty pages that carry a continuation", async () => {
    const { node } = retriever((query) => {
      const at = Number(query.continuation?.slice(1) ?? 0);
      if (at === 6) return { transactions: ["found"], continuation: "" };
      return { transactions: [], continuation: `@${at + 1}` };
    });
    const got = await collect(pages(node, { query: {} }, {}, ctx));
    expect(got).toHaveLength(7);
    expect(got.flatMap((p) => p.transactions)).toEqual(["found"]);
  });

  it(`gives up after MAX_EMPTY_PAGES (${MAX_EMPTY_PAGES}) empty pages in a row, keeping the continuation`, async () => {
    const { node, queries } = retriever((_, call) => ({
      transactions: call === 1 ? ["first"] : [],
      continuation: `@${call}`,
    }));
    const got = await collect(pages(node, { query: {} }, {}, ctx));
    expect(got).toHaveLength(MAX_EMPTY_PAGES + 1);
    expect(queries).toHaveLength(MAX_EMPTY_PAGES + 1);
    // Not the end of the history: the last page says where to resume.
    expect(got.at(-1)!.continuation).toBe(`@${MAX_EMPTY_PAGES + 1}`);
  });

  it("throws a PageError carrying the node's error and the continuation to resume from", async () => {
    const { node } = retriever((query, call) =>
      call === 3 ? { error: "Upstream broke", code: "upstream_server_error" } : listAnswer(query),
    );
    const seen: Page[] = [];
    const err = await (async () => {
      for await (const page of pages(node, { query: {} }, {}, ctx)) seen.push(page);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageError);
    const e = err as PageError;
    expect(e.code).toBe("upstream_server_error");
    expect(e.message).toBe("Upstream broke");
    expect(e.payload.details.code).toBe("upstream_server_error");
    expect(e.response).toEqual({ status: 500 });
    expect(seen.map((p) => p.continuation)).toEqual(["@1", "@2"]);
    expect(e.resumeFrom).toBe("@2");

    const first = retriever(() => ({ error: "No", code: "upstream_auth" }));
    const firstErr = (await collect(pages(first.node, { query: {} }, {}, ctx)).catch((x: unknown) => x)) as PageError;
    expect(firstErr).toBeInstanceOf(PageError);
    expect(firstErr.resumeFrom).toBeUndefined();
  });

  it("reports an invalid input of the node as a PageError with the violations", async () => {
    const { node, queries } = listOf(5);
    const err = (await collect(pages(node, { query: {}, nope: 1 }, {}, ctx)).catch((e: unknown) => e)) as
      | PageError
      | undefined;
    expect(err).toBeInstanceOf(PageError);
    expect(err!.code).toBe("invalid_input");
    const violations = err!.payload.details.violations as Violation[];
    expect(violations.map((v) => v.field)).toEqual(["nope"]);
    expect(queries).toEqual([]);
  });

  it("calls onPage after each page with running totals", async () => {
    const { node } = listOf(11);
    const progress: unknown[] = [];
    await collect(pages(node, { query: {} }, { onPage: (p) => progress.push(p) }, ctx));
    expect(progress).toEqual([
      { page: 1, records: 5, total: 5, continuation: "@5" },
      { page: 2, records: 5, total: 10, continuation: "@10" },
      { page: 3, records: 1, total: 11, continuation: "" },
    ]);
  });
});

function listAnswer(query: Query): Answer {
  const at = Number(query.continuation?.slice(1) ?? 0);
  return { transactions: [at], continuation: `@${at + 1}` };
}

describe("records (property)", () => {
  it("hands out exactly the first min(count, limit) records, and the last continuation resumes after them", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.nat({ max: 70 }), { nil: undefined }),
        async (count, size, limit) => {
          const { node, items, queries } = listOf(count);
          const got = await collect(pages(node, { query: { page_size: size } }, { limit }, ctx));
          const wanted = Math.min(count, limit ?? count);
          expect(got.flatMap((p) => p.transactions)).toEqual(items.slice(0, wanted));
          expect(queries.every((q) => q.page_size !== undefined && q.page_size >= 1 && q.page_size <= size)).toBe(true);
          const last = got.at(-1)?.continuation ?? "";
          if (limit === 0) {
            // Nothing asked, nothing fetched: the caller resumes from where it was.
            expect(got).toEqual([]);
          } else if (wanted < count) {
            expect(last).not.toBe("");
            const rest = await collect(records(node, { query: { continuation: last, page_size: size } }, {}, ctx));
            expect(rest).toEqual(items.slice(wanted));
          } else {
            expect(last).toBe("");
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
