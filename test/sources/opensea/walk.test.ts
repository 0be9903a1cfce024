/**
 * One walk through OpenSea's pages (src/sources/opensea/walk.ts), against the local OpenSea server answering
 * scripted pages: a `next` that comes back after a cycle of any length ends the walk with `upstream_bad_response`
 * naming `next` (in the library's paging and in `run --all`), and an event OpenSea repeats under a fresh cursor is
 * handed out once. A property over random cursor graphs: no record twice, a cycle is an error, the walk always ends.
 */
import fc from "fast-check";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PageError, pages, records } from "../../../src/core/paginate.js";
import { nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { runCli, testConfig } from "../../support/helpers.js";
import { OPENSEA_KEY, type OpenSeaServer, type ScriptedPage, startOpenSea } from "../../upstreams/opensea.js";

let upstream: OpenSeaServer;

beforeAll(async () => {
  upstream = await startOpenSea({ contracts: new Map(), collections: new Map() });
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.script(undefined);
  upstream.requests.length = 0;
});

const env = () => ({ NFT_SOURCE: "opensea", OPENSEA_BASE_URL: upstream.url, OPENSEA_API_KEY: OPENSEA_KEY });
const config = () => testConfig({ ...env(), OPENSEA_MAX_RETRIES: "0" });

/** A transfer OpenSea would report; `n` makes it its own (its transaction). */
const transfer = (n: number) => ({
  event_type: "transfer",
  chain: "ethereum",
  event_timestamp: 1_700_000_000 - n,
  transaction: `0x${n.toString(16).padStart(64, "0")}`,
  from_address: `0x${"1".repeat(40)}`,
  to_address: `0x${"2".repeat(40)}`,
  quantity: 1,
  nft: { identifier: String(n), contract: `0x${"3".repeat(40)}`, token_standard: "erc721" },
});

/** Pages by cursor: `[cursor, events, next]`, the first page's cursor `""`. */
const script = (...rows: [string, number[], string | null][]) =>
  upstream.script(
    new Map<string, ScriptedPage>(
      rows.map(([cursor, events, next]) => [cursor, { asset_events: events.map(transfer), next }]),
    ),
  );

const numberOf = (record: { transaction_hash: string }) => Number.parseInt(record.transaction_hash, 16);

/** Every record of the walk, and the error that ended it (if one did). */
async function walk(): Promise<{ got: number[]; error?: PageError }> {
  const got: number[] = [];
  try {
    for await (const record of records(nftTransactionsOnChain, { query: {} }, {}, { config: config() })) {
      got.push(numberOf(record as { transaction_hash: string }));
    }
  } catch (err) {
    if (!(err instanceof PageError)) throw err;
    return { got, error: err };
  }
  return { got };
}

describe("cycles of next", () => {
  it("a cycle of one (A→A): upstream_bad_response naming next", async () => {
    script(["", [1], "A"], ["A", [2], "A"]);
    const { got, error } = await walk();
    expect(error?.payload.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    expect(got).toEqual([1]);
  });

  it("a cycle of two (A→B→A): upstream_bad_response naming next", async () => {
    script(["", [1], "A"], ["A", [2], "B"], ["B", [3], "A"]);
    const { got, error } = await walk();
    expect(error?.payload.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    expect(got).toEqual([1, 2]);
  });

  it("a cycle of three (A→B→C→A), pages with records: the library's paging stops, each record once", async () => {
    script(["", [1, 2], "A"], ["A", [3, 4], "B"], ["B", [5, 6], "C"], ["C", [7, 8], "A"]);
    const { got, error } = await walk();
    expect(error?.payload.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    // The page that answered the repeated cursor is refused; the walk resumes from the last good one.
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    expect(error?.resumeFrom).not.toBe("");
    expect(upstream.requests).toHaveLength(4);
  });

  it("a cycle of three: run --all exits 1 with the error, every record once and where to resume", async () => {
    script(["", [1, 2], "A"], ["A", [3, 4], "B"], ["B", [5, 6], "C"], ["C", [7, 8], "A"]);
    const cli = await runCli(
      ["run", "nft-transactions-on-chain", "--all", "--input", '{"query":{"type":["transfer"]}}'],
      {
        env: env(),
      },
    );
    expect(cli.code).toBe(1);
    const out = JSON.parse(cli.stdout) as {
      data: { transactions: { transaction_hash: string }[]; continuation: string };
      error: { details: Record<string, unknown> };
    };
    expect(out.error.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    expect(out.data.transactions.map(numberOf)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(out.data.continuation).not.toBe("");
  });

  it("a cycle longer than one call reads (pages without a record in between) is caught too", async () => {
    // Empty pages are read on within one call; the cycle closes in a later call.
    script(["", [1], "A"], ["A", [], "B"], ["B", [2], "C"], ["C", [], "D"], ["D", [3], "A"]);
    const { got, error } = await walk();
    expect(error?.payload.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
    expect(got).toEqual([1, 2]);
  });
});

describe("repeated events", () => {
  it("an event OpenSea repeats under a fresh cursor is handed out once", async () => {
    script(["", [1, 2], "A"], ["A", [2, 3], "B"], ["B", [1, 3, 4], null]);
    const { got, error } = await walk();
    expect(error).toBeUndefined();
    expect(got).toEqual([1, 2, 3, 4]);
  });

  it("equal records on one page are both kept (two equal transfers of one transaction)", async () => {
    script(["", [1, 1, 2], null]);
    const { got } = await walk();
    expect(got).toEqual([1, 1, 2]);
  });

  it("a page whose events were all handed out before is read past, not handed out empty-handed as the end", async () => {
    script(["", [1, 2], "A"], ["A", [1, 2], "B"], ["B", [3], null]);
    const seen: number[][] = [];
    for await (const page of pages(nftTransactionsOnChain, { query: {} }, {}, { config: config() })) {
      seen.push(page.transactions.map((r) => numberOf(r as { transaction_hash: string })));
    }
    expect(seen).toEqual([[1, 2], [3]]);
  });
});

describe("any cursor graph (property)", () => {
  it("no record twice; a cursor seen before is an error; the walk ends, reading each cursor at most once", async () => {
    const graph = fc.integer({ min: 1, max: 7 }).chain((n) =>
      fc.array(
        fc.record({
          events: fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 4 }),
          next: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: null }),
        }),
        { minLength: n, maxLength: n },
      ),
    );
    await fc.assert(
      fc.asyncProperty(graph, async (nodes) => {
        // Node 0 is the first page; node i > 0 is cursor `c<i>` (node 0 as a `next` is the cursor `c0`).
        const cursorOf = (i: number) => `c${i}`;
        const pagesByCursor = new Map<string, ScriptedPage>();
        nodes.forEach((node, i) => {
          const page = {
            asset_events: node.events.map(transfer),
            next: node.next === null ? null : cursorOf(node.next),
          };
          if (i === 0) pagesByCursor.set("", page);
          pagesByCursor.set(cursorOf(i), page);
        });
        upstream.script(pagesByCursor);
        upstream.requests.length = 0;

        // The walk as it should go: the first page, then each next until the end or a cursor seen before.
        const path: number[] = [0];
        const asked = new Set<string>([""]);
        let cycle = false;
        for (let at = 0; ; ) {
          const next = nodes[at]!.next;
          if (next === null) break;
          if (asked.has(cursorOf(next))) {
            cycle = true;
            break;
          }
          asked.add(cursorOf(next));
          path.push(next);
          at = next;
        }
        const { got, error } = await walk();
        const distinct = [...new Set(path.flatMap((i) => nodes[i]!.events))];
        // Each page's own repeats stay (equal events of one page); across pages none comes twice.
        const pageCount = new Map<number, number>();
        for (const i of path) {
          const counts = new Map<number, number>();
          for (const e of nodes[i]!.events) counts.set(e, (counts.get(e) ?? 0) + 1);
          for (const [e, c] of counts) if (!pageCount.has(e)) pageCount.set(e, c);
        }
        const gotCounts = new Map<number, number>();
        for (const e of got) gotCounts.set(e, (gotCounts.get(e) ?? 0) + 1);
        for (const [e, c] of gotCounts) expect(c).toBeLessThanOrEqual(pageCount.get(e) ?? 0);
        expect(upstream.requests.length).toBeLessThanOrEqual(nodes.length + 1);
        if (cycle) {
          expect(error?.payload.details).toMatchObject({ code: "upstream_bad_response", field: "next" });
          for (const e of got) expect(distinct).toContain(e);
        } else {
          expect(error).toBeUndefined();
          expect([...new Set(got)].sort((a, b) => a - b)).toEqual([...distinct].sort((a, b) => a - b));
        }
      }),
      { numRuns: Number(process.env.PROPS_RUNS ?? 60) },
    );
  });
});
