/**
 * Moving an index (src/sources/own-index/copy.ts) on its own, between real databases (SQLite files here; the
 * PostgreSQL run of test/support/index-backend.ts when CHAINMAIL_TEST_INDEX_DB=postgres): every table arrives whole
 * whatever the batch size, the cursor last; an interrupted copy run again adds only what is missing; a missing or
 * empty source, a destination holding an index and a source being written are refused. (The CLI's
 * `chainmail index migrate` over an anvil-built index is migrate.test.ts's.)
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyIndex } from "../../../src/sources/own-index/copy.js";
import { type ActivityRow, IndexStore } from "../../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";

const runs = Number(process.env.PROPS_RUNS ?? 15);
let backend: IndexBackend;
let opened = 0;

beforeAll(async () => {
  backend = await openBackend("index-copy");
});
afterAll(async () => {
  await backend?.close();
});

const target = () => backend.target(`copy-${opened++}`);
const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;

function row(block: number, log: number): ActivityRow {
  return {
    block_number: block,
    log_index: log,
    batch_index: 0,
    kind: log % 2 ? "sale" : "transfer",
    contract: "0x00000000000000000000000000000000000000aa",
    token_id: String(block * 10 + log),
    from_addr: "0x0000000000000000000000000000000000000001",
    to_addr: "0x0000000000000000000000000000000000000002",
    quantity: "1",
    tx_hash: hash(block * 100 + log),
    block_hash: hash(block),
    timestamp: 1_650_000_000 + block,
    contract_type: "ERC721",
    marketplace: log % 2 ? "seaport" : null,
    currency: null,
    price: log % 2 ? "1.5" : null,
    price_usd: log % 2 ? "3000.25" : null,
  };
}

/** An index of `blocks` blocks with `perBlock` records each, a price answer and a hash per block, a token, a scope. */
async function buildSource(blocks: number, perBlock: number): Promise<string> {
  const path = await target();
  const store = await IndexStore.open(path);
  try {
    await store.commitRange({
      records: Array.from({ length: blocks * perBlock }, (_, i) => row(Math.floor(i / perBlock), i % perBlock)),
      blocks: Array.from({ length: blocks }, (_, n) => ({ number: n, hash: hash(n) })),
      answers: Array.from({ length: blocks }, (_, n) => ({ block: n, log: 0, answer: BigInt(n + 1) * 10n ** 8n })),
      lastBlock: Math.max(0, blocks - 1),
    });
    await store.setTokenDecimals("0x00000000000000000000000000000000000000cc", 6);
    await store.setMeta("scope", "*");
  } finally {
    await store.close();
  }
  return path;
}

/** Everything an index holds, to compare a copy with its source. */
async function contents(path: string) {
  const store = await IndexStore.open(path);
  try {
    const tables = {} as Record<string, unknown>;
    const ordered: [string, string][] = [
      ["tokens", "address"],
      ["price_answers", "block_number, log_index"],
      ["blocks", "number"],
      ["meta", "key"],
    ];
    for (const [table, order] of ordered) {
      tables[table] = await store.db.query(`SELECT * FROM ${table} ORDER BY ${order}`);
    }
    return { tables, records: await store.page({ direction: "asc", limit: 1_000_000 }), status: await store.status() };
  } finally {
    await store.close();
  }
}

describe("copying an index", () => {
  it("copies every table whole, whatever the batch size, and reports its progress up to the total", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 20 }),
        async (blocks, perBlock, batch) => {
          const from = await buildSource(blocks, perBlock);
          const to = await target();
          const progress: { records: number; total: number }[] = [];
          const result = await copyIndex({ from, to, batch, onProgress: (p) => progress.push(p) });
          const total = blocks * perBlock;
          expect(result).toEqual({ records: total, lastBlock: blocks - 1 });
          expect(await contents(to)).toEqual(await contents(from));
          expect(progress).toHaveLength(Math.ceil(total / batch));
          expect(progress.map((p) => p.records)).toEqual(progress.map((_, i) => Math.min(total, (i + 1) * batch)));
          expect(progress.every((p) => p.total === total)).toBe(true);
        },
      ),
      { numRuns: runs },
    );
  });

  it("finishes an interrupted copy when run again, adding only what is missing", async () => {
    const from = await buildSource(5, 3);
    const to = await target();
    // An interrupted copy: some records and side rows in, the cursor not.
    const partial = await IndexStore.open(to);
    const source = await IndexStore.open(from);
    try {
      await partial.insertRows(await source.page({ direction: "asc", limit: 7 }));
      await partial.setTokenDecimals("0x00000000000000000000000000000000000000cc", 6);
      expect(await partial.lastBlock()).toBeUndefined();
    } finally {
      await source.close();
      await partial.close();
    }
    expect(await copyIndex({ from, to, batch: 4 })).toEqual({ records: 15, lastBlock: 4 });
    expect(await contents(to)).toEqual(await contents(from));
  });
});

describe("what is refused", () => {
  it("a source file that does not exist, creating none", async () => {
    const from = join(backend.dir, "no-such-index.sqlite");
    await expect(copyIndex({ from, to: await target() })).rejects.toMatchObject({
      code: "invalid_input",
      details: { field: "from" },
    });
    expect(existsSync(from)).toBe(false);
  });

  it("a source without a cursor, and a destination that holds an index already", async () => {
    const empty = await target();
    await (await IndexStore.open(empty)).close();
    await expect(copyIndex({ from: empty, to: await target() })).rejects.toMatchObject({
      message: expect.stringContaining("holds no index yet"),
      details: { field: "from" },
    });
    const from = await buildSource(2, 1);
    const full = await buildSource(3, 1);
    await expect(copyIndex({ from, to: full })).rejects.toMatchObject({
      message: expect.stringContaining("already holds an index (up to block 2)"),
      details: { field: "to" },
    });
  });

  it("a source an indexer is writing, leaving the destination without a cursor", async () => {
    const from = await buildSource(2, 1);
    const to = await target();
    const writer = await IndexStore.open(from);
    const lock = await writer.db.lockWriter("index");
    try {
      await expect(copyIndex({ from, to })).rejects.toMatchObject({
        code: "storage_error",
        message: expect.stringContaining("A chainmail index is writing"),
      });
    } finally {
      await lock.release();
      await writer.close();
    }
    const copy = await IndexStore.open(to);
    try {
      expect(await copy.lastBlock()).toBeUndefined();
      expect(await copy.count()).toBe(0);
    } finally {
      await copy.close();
    }
  });
});
