/**
 * The own index as an NFT source (src/sources/own-index/source.ts) on its own, over an index the store wrote
 * (SQLite here; PostgreSQL under CHAINMAIL_TEST_INDEX_DB=postgres): the retrievers' order (by contract and token
 * newest first, the chain oldest first), pages chained by continuations that are bound to their query, type
 * filters with the off-chain kinds answering nothing, the page size cap, block bounds beyond 2^53. (Reading a
 * database without an index is read.test.ts's; the record shapes, source.records.props.test.ts's; the same over an
 * anvil-built index through the nodes, test/ingest/indexer.test.ts's.)
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RetrieverResult } from "../../../src/schemas/transactions.js";
import {
  closeIndexSources,
  decodeContinuation,
  encodeContinuation,
  indexSource,
  indexStatus,
} from "../../../src/sources/own-index/source.js";
import { type ActivityRow, IndexStore } from "../../../src/sources/own-index/store.js";
import type { NftSource, RetrieverOutcome } from "../../../src/sources/types.js";
import { testConfig } from "../../support/helpers.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";

const runs = Number(process.env.PROPS_RUNS ?? 30);
const NFT = "0x00000000000000000000000000000000000000aa";
const OTHER = "0x00000000000000000000000000000000000000bb";
const KINDS = ["transfer", "mint", "burn", "sale"] as const;
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

let backend: IndexBackend;
let source: NftSource;
let config: ReturnType<typeof testConfig>;
/** The index's rows in chain order. */
const rows: ActivityRow[] = [];

function row(i: number): ActivityRow {
  const kind = KINDS[i % 4]!;
  return {
    block_number: 100 + Math.floor(i / 3),
    log_index: i % 3,
    batch_index: 0,
    kind,
    contract: i % 5 === 4 ? OTHER : NFT,
    token_id: String(i % 3),
    from_addr: "0x0000000000000000000000000000000000000001",
    to_addr: "0x0000000000000000000000000000000000000002",
    quantity: "1",
    tx_hash: hash(1000 + i),
    block_hash: hash(100 + Math.floor(i / 3)),
    timestamp: 1_650_000_000 + i,
    contract_type: "ERC721",
    marketplace: kind === "sale" ? "seaport" : null,
    currency: null,
    price: kind === "sale" ? "1" : null,
    price_usd: null,
  };
}

beforeAll(async () => {
  backend = await openBackend("index-source");
  const target = await backend.target("source");
  const store = await IndexStore.open(target);
  rows.push(...Array.from({ length: 40 }, (_, i) => row(i)));
  await store.commitRange({ records: rows, blocks: [], answers: [], lastBlock: 120 });
  await store.noteHead(125);
  await store.close();
  config = testConfig({ NFT_SOURCE: "index", INDEX_DB: target });
  source = await indexSource(config);
});
afterAll(async () => {
  await closeIndexSources();
  await backend?.close();
});

const ctx = {} as never;
const params = {} as never;
const txOf = (r: ActivityRow) => r.tx_hash;

function ok(outcome: RetrieverOutcome): RetrieverResult {
  if (outcome.error) throw new Error(`refused: ${JSON.stringify(outcome.error)}`);
  return outcome.data;
}

/** Every page of a retriever, following continuations; the transaction hashes in the order served. */
async function walk(retrieve: (continuation?: string) => Promise<RetrieverOutcome>): Promise<string[]> {
  const seen: string[] = [];
  let continuation: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const outcome = await retrieve(continuation);
    const data = ok(outcome);
    seen.push(...data.transactions.map((t) => t.transaction_hash as string));
    // The raw body carries a continuation only when there is a next page, as NFTPort's.
    expect("continuation" in JSON.parse(outcome.response!.body)).toBe(data.continuation !== "");
    if (!data.continuation) return seen;
    continuation = data.continuation;
  }
  throw new Error("no last page");
}

describe("the retrievers' order and pages", () => {
  it("walk every record once, by contract and by token newest first, the chain oldest first, for any page size", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 45 }), async (size) => {
        const byContract = rows.filter((r) => r.contract === NFT).reverse();
        expect(
          await walk((continuation) =>
            source.transactionsByContract(
              { contract_address: NFT.toUpperCase().replace("0X", "0x"), continuation, page_size: size },
              params,
              ctx,
            ),
          ),
        ).toEqual(byContract.map(txOf));
        // `007` is token 7: here token 2.
        expect(
          await walk((continuation) =>
            source.transactionsByToken(
              { contract_address: NFT, token_id: "002", continuation, page_size: size },
              params,
              ctx,
            ),
          ),
        ).toEqual(byContract.filter((r) => r.token_id === "2").map(txOf));
        expect(
          await walk((continuation) => source.transactionsOnChain({ continuation, page_size: size }, params, ctx)),
        ).toEqual(rows.map(txOf));
      }),
      { numRuns: runs },
    );
  });

  it("filters by type, and answers the off-chain kinds (bid, list) with no records", async () => {
    const sales = ok(
      await source.transactionsByContract(
        { contract_address: NFT, type: ["sale", "bid"], page_size: 1000 },
        params,
        ctx,
      ),
    );
    expect(sales.transactions.map((t) => t.transaction_hash)).toEqual(
      rows
        .filter((r) => r.contract === NFT && r.kind === "sale")
        .reverse()
        .map(txOf),
    );
    expect(
      ok(await source.transactionsByContract({ contract_address: NFT, type: ["bid", "list"] }, params, ctx)),
    ).toEqual({
      response: "OK",
      transactions: [],
      continuation: "",
    });
    const all = ok(await source.transactionsOnChain({ type: ["all"], page_size: 1000 }, params, ctx));
    expect(all.transactions).toHaveLength(rows.length);
  });

  it("bounds the chain's blocks, a bound beyond 2^53 meaning the last block there could be", async () => {
    const bounded = ok(
      await source.transactionsOnChain({ from_block: 102, to_block: 103, page_size: 1000 }, params, ctx),
    );
    expect(bounded.transactions.map((t) => t.transaction_hash)).toEqual(
      rows.filter((r) => r.block_number >= 102 && r.block_number <= 103).map(txOf),
    );
    const beyond = ok(
      await source.transactionsOnChain(
        { from_block: 110, to_block: 2n ** 64n - 1n, page_size: 1000 } as never,
        params,
        ctx,
      ),
    );
    expect(beyond.transactions).toHaveLength(rows.filter((r) => r.block_number >= 110).length);
  });
});

describe("what is refused", () => {
  it("a page larger than 1000, as invalid input (HTTP 400)", async () => {
    const outcome = await source.transactionsOnChain({ page_size: 1001 }, params, ctx);
    expect(outcome.error).toMatchObject({ details: { code: "invalid_input", field: "query.page_size" } });
    expect(outcome.response?.status).toBe(400);
  });

  it("a continuation tampered with, or issued for another query", async () => {
    const first = ok(await source.transactionsByContract({ contract_address: NFT, page_size: 2 }, params, ctx));
    const tampered = `${first.continuation.slice(0, -2)}AA`;
    const elsewhere = [
      () => source.transactionsByContract({ contract_address: NFT, continuation: tampered, page_size: 2 }, params, ctx),
      () => source.transactionsByContract({ contract_address: OTHER, continuation: first.continuation }, params, ctx),
      () =>
        source.transactionsByContract(
          { contract_address: NFT, type: ["sale"], continuation: first.continuation },
          params,
          ctx,
        ),
      () => source.transactionsOnChain({ continuation: first.continuation }, params, ctx),
    ];
    for (const retrieve of elsewhere) {
      const outcome = await retrieve();
      expect(outcome.error).toMatchObject({ details: { code: "invalid_continuation" } });
      expect(outcome.response?.status).toBe(400);
    }
    // The same query with another page size goes on where it stopped.
    const next = ok(
      await source.transactionsByContract(
        { contract_address: NFT, continuation: first.continuation, page_size: 5 },
        params,
        ctx,
      ),
    );
    expect(next.transactions[0]!.transaction_hash).toBe(rows.filter((r) => r.contract === NFT).reverse()[2]!.tx_hash);
  });
});

describe("continuations", () => {
  // Blocks up to 15 digits: the continuation's format stops there (no chain is near 10^15 blocks).
  const position = fc.record({
    block: fc.nat({ max: 10 ** 15 - 1 }),
    log: fc.nat({ max: 2 ** 31 - 1 }),
    batch: fc.nat({ max: 2 ** 31 - 1 }),
  });

  it("decode to the position they were issued for, for that query alone", () => {
    fc.assert(
      fc.property(position, fc.string(), fc.string(), (at, query, other) => {
        const token = encodeContinuation(at, query);
        expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(decodeContinuation(token, query)).toEqual(at);
        if (other !== query) expect(decodeContinuation(token, other)).toBeUndefined();
      }),
    );
  });

  it("refuse anything else without throwing", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (token) => {
        expect(decodeContinuation(token, "query")).toBeUndefined();
      }),
    );
  });
});

describe("indexStatus", () => {
  it("says where the index stands: its cursor, the head its writer saw, its records", async () => {
    expect(await indexStatus(config)).toMatchObject({ lastBlock: 120, headBlock: 125, records: rows.length });
  });
});
