/**
 * `chainmail index migrate --from <sqlite file> --to <database>`: an SQLite index moved into another database
 * (another SQLite file under `npm test`, PostgreSQL under `npm run test:services`) answers every query with the
 * same records, order and continuations; refusals are clear.
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config.js";
import { runNode } from "../../../src/core/node.js";
import { displayTarget } from "../../../src/db/database.js";
import { indexChain } from "../../../src/ingest/indexer.js";
import { nftTransactionsByContract, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import { IndexStore } from "../../../src/sources/own-index/store.js";
import { runCli } from "../../support/helpers.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";
import { buildChain, type ChainFixture, NFT721 } from "../../support/index-fixture.js";
import { type Anvil, startAnvil } from "../../support/index-helpers.js";

let anvil: Anvil;
let chain: ChainFixture;
let backend: IndexBackend;
let sqlite: string;

beforeAll(async () => {
  backend = await openBackend("index-migrate");
  anvil = await startAnvil();
  chain = await buildChain(anvil);
  sqlite = join(backend.dir, "source.sqlite");
  await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: sqlite, follow: false, ...chain.options });
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

/** Every page of a query, page_size 3, with the continuations the index issued. */
async function pagesOf(db: string, node: "chain" | "contract") {
  const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: db });
  const pages: { transactions: unknown[]; continuation: string }[] = [];
  let continuation = "";
  do {
    const query =
      node === "chain" ? { page_size: 3 } : { contract_address: NFT721, page_size: 3, type: ["mint", "sale"] };
    const out = await runNode(
      (node === "chain" ? nftTransactionsOnChain : nftTransactionsByContract) as typeof nftTransactionsOnChain,
      { query: { ...query, ...(continuation ? { continuation } : {}) }, params: {} },
      { config },
    );
    expect(out.error).toBeUndefined();
    pages.push({ transactions: out.data!.transactions, continuation: out.data!.continuation });
    continuation = out.data!.continuation;
  } while (continuation);
  return pages;
}

describe("chainmail index migrate", () => {
  it("copies every record, block hash, price answer and the cursor; the copy answers exactly like the file", async () => {
    const to = await backend.target("copy");
    const out = await runCli(["index", "migrate", "--from", sqlite, "--to", to]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({
      from: sqlite,
      to: displayTarget(to),
      last_block: chain.head,
      records: chain.expected.length,
    });
    for (const node of ["chain", "contract"] as const) {
      const copied = await pagesOf(to, node);
      expect(copied.length).toBeGreaterThan(1);
      expect(copied).toEqual(await pagesOf(sqlite, node));
    }
    const store = await IndexStore.open(to);
    try {
      expect(await store.count()).toBe(chain.expected.length);
      expect(await store.getMeta("scope")).toBe("*");
      expect((await store.checkpoints(chain.head, 1))[0]?.number).toBe(chain.head);
      expect(await store.answerAt(chain.head, 0)).toBeGreaterThan(0n);
    } finally {
      await store.close();
    }
    // The copy is a complete index: an indexer continues it with nothing to add.
    expect(await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: to, follow: false, ...chain.options })).toMatchObject({
      lastBlock: chain.head,
      records: 0,
      unknownLogs: 0,
    });
  });

  it("moves an index file written before migrations existed", async () => {
    const legacy = join(backend.dir, "legacy.sqlite");
    copyFileSync(join(import.meta.dirname, "..", "..", "fixtures", "index", "chainmail-0.1.sqlite"), legacy);
    const to = await backend.target("legacy_copy");
    const out = await runCli(["index", "migrate", "--from", legacy, "--to", to]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ last_block: 9, records: 3 });
    const store = await IndexStore.open(to);
    try {
      const rows = await store.page({ direction: "asc", limit: 10 });
      expect(rows.map((r) => [r.kind, r.token_id, r.quantity, r.price, r.price_usd])).toEqual([
        ["mint", "18446744073709551623", "18446744073709551617", null, null],
        ["transfer", "18446744073709551623", "18446744073709551617", null, null],
        ["sale", "18446744073709551623", "18446744073709551617", "2.500000000000000001", "7500.25"],
      ]);
      expect(await store.tokenDecimals("0x00000000000000000000000000000000000000e7")).toBe(18);
    } finally {
      await store.close();
    }
  });

  it("refuses a destination that already holds an index, a missing source, and a source being written", async () => {
    const full = await backend.target("full");
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: full, follow: false, ...chain.options });
    const occupied = await runCli(["index", "migrate", "--from", sqlite, "--to", full]);
    expect(occupied.code).toBe(2);
    expect(occupied.stderr).toMatch(/already holds an index \(up to block \d+\): migrate into an empty database/);

    const missing = await runCli(["index", "migrate", "--from", join(backend.dir, "nope.sqlite"), "--to", full]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/There is no index file at .*nope\.sqlite/);

    const writer = await IndexStore.open(sqlite);
    const lock = await writer.db.lockWriter("index");
    try {
      const busy = await runCli(["index", "migrate", "--from", sqlite, "--to", await backend.target("busy")]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toMatch(/A chainmail index is writing .*source\.sqlite\. Stop it/);
    } finally {
      await lock.release();
      await writer.close();
    }

    const usage = await runCli(["index", "migrate", "--from", sqlite]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--to/);
  });
});
