/**
 * The index store (src/sources/own-index/store.ts) on its own, over a real database (SQLite files here; the
 * PostgreSQL run of test/support/index-backend.ts when CHAINMAIL_TEST_INDEX_DB=postgres): a range commits its
 * records, block hashes, price answers and cursor together and once; a rollback forgets all of them above a block;
 * pages walk any filter in chain order, either way, without losing or repeating a record, whatever their size.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ActivityRow, IndexStore, isMissingIndex, type Position } from "../../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";

const runs = Number(process.env.PROPS_RUNS ?? 25);
let backend: IndexBackend;
let opened = 0;

beforeAll(async () => {
  backend = await openBackend("index-store");
});
afterAll(async () => {
  await backend?.close();
});

/** A fresh, empty store. */
async function freshStore(): Promise<IndexStore> {
  return IndexStore.open(await backend.target(`store-${opened++}`));
}

const CONTRACTS = ["0x00000000000000000000000000000000000000aa", "0x00000000000000000000000000000000000000bb"];
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

function row(block: number, log: number, batch = 0, over: Partial<ActivityRow> = {}): ActivityRow {
  return {
    block_number: block,
    log_index: log,
    batch_index: batch,
    kind: "transfer",
    contract: CONTRACTS[0]!,
    token_id: "1",
    from_addr: "0x0000000000000000000000000000000000000001",
    to_addr: "0x0000000000000000000000000000000000000002",
    quantity: "1",
    tx_hash: hash(block * 1000 + log),
    block_hash: hash(block),
    timestamp: 1_650_000_000 + block,
    contract_type: "ERC721",
    marketplace: null,
    currency: null,
    price: null,
    price_usd: null,
    ...over,
  };
}

const key = (r: ActivityRow) => `${r.block_number}/${r.log_index}/${r.batch_index}`;

describe("committing and rolling back ranges", () => {
  it("commits a range's records, blocks, answers and cursor together, and inserts nothing twice", async () => {
    const store = await freshStore();
    try {
      expect(await store.lastBlock()).toBeUndefined();
      expect(await store.status()).toEqual({ lastBlock: null, headBlock: null, headSeenAt: null, records: 0 });
      const range = {
        records: [row(10, 0), row(10, 1), row(12, 3, 1)],
        blocks: [
          { number: 10, hash: hash(10) },
          { number: 12, hash: hash(12) },
        ],
        answers: [{ block: 11, log: 5, answer: 300_000_000_000n }],
        lastBlock: 12,
      };
      expect(await store.commitRange(range)).toBe(3);
      // The same range again (a re-run): nothing new, the count unchanged.
      expect(await store.commitRange(range)).toBe(0);
      expect(await store.count()).toBe(3);
      expect(await store.lastBlock()).toBe(12);
      expect(await store.checkpoints(12, 10)).toEqual(range.blocks.slice().reverse());
      expect(await store.answerAt(11, 5)).toBe(300_000_000_000n);
      expect(await store.answerAt(11, 4)).toBeUndefined();
      const all = await store.page({ direction: "asc", limit: 10 });
      expect(all).toEqual(range.records);
    } finally {
      await store.close();
    }
  });

  it("keeps a block's newest hash, and answers a position with the last price answer at or before it", async () => {
    const store = await freshStore();
    try {
      await store.commitRange({
        records: [],
        blocks: [{ number: 5, hash: hash(5) }],
        answers: [
          { block: 3, log: 1, answer: 1n },
          { block: 5, log: 7, answer: 2n },
        ],
        lastBlock: 5,
      });
      await store.commitRange({ records: [], blocks: [{ number: 5, hash: hash(55) }], answers: [], lastBlock: 6 });
      expect(await store.checkpoints(10, 10)).toEqual([{ number: 5, hash: hash(55) }]);
      expect(await store.answerAt(2, 99)).toBeUndefined();
      expect(await store.answerAt(3, 1)).toBe(1n);
      expect(await store.answerAt(5, 6)).toBe(1n);
      expect(await store.answerAt(5, 7)).toBe(2n);
      expect(await store.answerAt(900, 0)).toBe(2n);
    } finally {
      await store.close();
    }
  });

  it("forgets every record, block hash and answer above a rolled-back block, and moves the cursor there", async () => {
    const store = await freshStore();
    try {
      await store.commitRange({
        records: [row(1, 0), row(2, 0), row(3, 0), row(3, 1)],
        blocks: [1, 2, 3].map((number) => ({ number, hash: hash(number) })),
        answers: [
          { block: 1, log: 0, answer: 10n },
          { block: 3, log: 0, answer: 30n },
        ],
        lastBlock: 3,
      });
      expect(await store.rollbackTo(1)).toBe(3);
      expect(await store.count()).toBe(1);
      expect(await store.lastBlock()).toBe(1);
      expect((await store.page({ direction: "asc", limit: 10 })).map(key)).toEqual(["1/0/0"]);
      expect(await store.checkpoints(100, 10)).toEqual([{ number: 1, hash: hash(1) }]);
      expect(await store.answerAt(100, 0)).toBe(10n);
      // The blocks read again after the reorg go in as new.
      expect(await store.commitRange({ records: [row(2, 0)], blocks: [], answers: [], lastBlock: 2 })).toBe(1);
      expect(await store.count()).toBe(2);
    } finally {
      await store.close();
    }
  });
});

describe("pages", () => {
  const records = fc
    .uniqueArray(
      fc.record({
        block: fc.integer({ min: 0, max: 15 }),
        log: fc.integer({ min: 0, max: 5 }),
        batch: fc.integer({ min: 0, max: 2 }),
        contract: fc.constantFrom(...CONTRACTS),
        token: fc.constantFrom(
          "1",
          "2",
          "115792089237316195423570985008687907853269984665640564039457584007913129639935",
        ),
        kind: fc.constantFrom("transfer", "mint", "burn", "sale"),
      }),
      { selector: (r) => `${r.block}/${r.log}/${r.batch}`, minLength: 15, maxLength: 60 },
    )
    .map((picked) =>
      picked.map((p) =>
        row(p.block, p.log, p.batch, { contract: p.contract, token_id: p.token, kind: p.kind as ActivityRow["kind"] }),
      ),
    );
  /** A filter left out three times in four, so that most walks cover many records. */
  const sometimes = <T>(arb: fc.Arbitrary<T>) =>
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: arb, weight: 1 });
  const query = fc.record({
    direction: fc.constantFrom("asc" as const, "desc" as const),
    limit: fc.integer({ min: 1, max: 12 }),
    contract: sometimes(fc.constantFrom(...CONTRACTS)),
    tokenId: sometimes(fc.constantFrom("1", "2")),
    kinds: sometimes(fc.subarray(["transfer", "mint", "burn", "sale"], { minLength: 1 })),
    fromBlock: sometimes(fc.integer({ min: 0, max: 15 })),
    toBlock: sometimes(fc.integer({ min: 0, max: 15 })),
  });

  it("walk any filter in chain order, either way, each record once, whatever the page size", async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.array(query, { minLength: 1, maxLength: 4 }), async (rows, queries) => {
        const store = await freshStore();
        try {
          expect(await store.insertRows(rows)).toBe(rows.length);
          expect(await store.count()).toBe(rows.length);
          for (const q of queries) {
            const expected = rows
              .filter(
                (r) =>
                  (q.contract === undefined || r.contract === q.contract) &&
                  (q.tokenId === undefined || r.token_id === q.tokenId) &&
                  (q.kinds === undefined || q.kinds.includes(r.kind)) &&
                  (q.fromBlock === undefined || r.block_number >= q.fromBlock) &&
                  (q.toBlock === undefined || r.block_number <= q.toBlock),
              )
              .sort(
                (a, b) => a.block_number - b.block_number || a.log_index - b.log_index || a.batch_index - b.batch_index,
              );
            if (q.direction === "desc") expected.reverse();
            const walked: ActivityRow[] = [];
            let after: Position | undefined;
            for (let pages = 0; pages <= rows.length + 1; pages++) {
              const page = await store.page({ ...q, after });
              expect(page.length).toBeLessThanOrEqual(q.limit);
              walked.push(...page);
              if (page.length < q.limit) break;
              const last = page.at(-1)!;
              after = { block: last.block_number, log: last.log_index, batch: last.batch_index };
            }
            expect(walked.map(key)).toEqual(expected.map(key));
            expect(walked).toEqual(expected);
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: runs },
    );
  });
});

describe("meta, tokens and status", () => {
  it("keeps the head its writer saw, a token's decimals and any meta value, the last write winning", async () => {
    const store = await freshStore();
    try {
      const before = Date.now();
      await store.noteHead(99);
      const status = await store.status();
      expect(status).toMatchObject({ lastBlock: null, headBlock: 99, records: 0 });
      expect(status.headSeenAt).toBeGreaterThanOrEqual(before);
      expect(status.headSeenAt).toBeLessThanOrEqual(Date.now());
      expect(await store.tokenDecimals(CONTRACTS[0]!)).toBeUndefined();
      await store.setTokenDecimals(CONTRACTS[0]!, 18);
      await store.setTokenDecimals(CONTRACTS[0]!, 6);
      expect(await store.tokenDecimals(CONTRACTS[0]!)).toBe(6);
      await store.setMeta("note", "a");
      await store.setMeta("note", "b");
      expect(await store.getMeta("note")).toBe("b");
    } finally {
      await store.close();
    }
  });

  it("opens for reading only what an index was built in, and reads it as it was written", async () => {
    const missing = await backend.target(`store-${opened++}`);
    const error = await IndexStore.openForReading(missing).catch((e: unknown) => e);
    expect(isMissingIndex(error)).toBe(true);
    expect(isMissingIndex(new Error("other"))).toBe(false);

    const target = await backend.target(`store-${opened++}`);
    const writer = await IndexStore.open(target);
    await writer.commitRange({ records: [row(7, 0)], blocks: [], answers: [], lastBlock: 7 });
    const reader = await IndexStore.openForReading(target);
    try {
      expect(await reader.status()).toMatchObject({ lastBlock: 7, records: 1 });
      expect(await reader.page({ direction: "desc", limit: 5 })).toEqual([row(7, 0)]);
    } finally {
      await reader.close();
      await writer.close();
    }
  });
});
