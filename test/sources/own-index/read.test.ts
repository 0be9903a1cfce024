/**
 * Reading never creates an index: NFT_SOURCE=index over a database that `chainmail index` did not build (a fresh
 * SQLite path, any file that is not an index, an empty PostgreSQL database or schema, one holding only the watch
 * journal) is refused by the library, the command line and the service, naming the database and what to run, and
 * the database is left exactly as it was. SQLite here; PostgreSQL in test/services/index-read.pg.test.ts.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/core/config.js";
import { runNode } from "../../../src/core/node.js";
import { displayTarget } from "../../../src/db/database.js";
import { sqliteDriver } from "../../../src/db/sqlite-driver.js";
import { nftTransactionsByContract, nftTransactionsOnChain } from "../../../src/nodes/index.js";
import { startServer } from "../../../src/server/index.js";
import { closeIndexSources } from "../../../src/sources/own-index/source.js";
import { openWatchStore } from "../../../src/watch/db-store.js";
import { runCli } from "../../support/helpers.js";
import { type IndexBackend, openBackend, scratchDatabase } from "../../support/index-backend.js";
import { call } from "../../support/server-helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 40);
const SEED = Number(process.env.PROPS_SEED ?? 20261125);

let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("index-read");
});

afterAll(async () => {
  await closeIndexSources();
  await backend?.close();
});

/** What a database holds, to compare before and after: a directory's files and bytes, or a schema's tables. */
async function snapshot(target: string): Promise<unknown> {
  if (backend.engine === "sqlite") {
    const dir = join(target, "..");
    if (!existsSync(dir)) return "no directory";
    return readdirSync(dir)
      .sort()
      .map((name) => [name, readFileSync(join(dir, name)).toString("base64")]);
  }
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  try {
    const { rows } = await client.query(
      "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** The refusal every surface gives: storage_error naming the database and `chainmail index`. */
function expectRefusal(error: { error: string; details: Record<string, unknown> } | undefined, target: string) {
  expect(error?.details).toMatchObject({ code: "storage_error", index: "missing", db: displayTarget(target) });
  expect(error?.error).toContain(`There is no index in ${displayTarget(target)}`);
  expect(error?.error).toContain("chainmail index");
}

/** Reads `target` through the library, the command line and the service; each must refuse it and change nothing. */
async function expectRefusedEverywhere(target: string): Promise<void> {
  const before = await snapshot(target);
  const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: target });
  const byLibrary = await runNode(nftTransactionsOnChain, { query: {}, params: {} }, { config });
  expect(byLibrary.data).toBeUndefined();
  expectRefusal(byLibrary.error, target);

  const byCli = await runCli(["run", "nft-transactions-on-chain", "--input", '{"query":{}}'], {
    env: { NFT_SOURCE: "index", INDEX_DB: target },
  });
  expect(byCli.code).toBe(1);
  expectRefusal(JSON.parse(byCli.stdout).error, target);

  const server = await startServer({ port: 0, config });
  try {
    const health = await call(`${server.url}/healthz`, "GET");
    expect(health.status).toBe(503);
    expectRefusal(health.body.index.error, target);
    const answer = await call(`${server.url}/nodes/nft-transactions-by-contract`, "POST", {
      query: { contract_address: `0x${"ab".repeat(20)}` },
    });
    expect(answer.status).toBe(500);
    expectRefusal(answer.body.error, target);
  } finally {
    await server.close();
  }
  expect(await snapshot(target)).toEqual(before);
}

describe("reading a database that holds no index", () => {
  it("refuses a fresh database (a new SQLite path, an empty PostgreSQL schema) and creates nothing", async () => {
    const target =
      backend.engine === "sqlite"
        ? join(backend.dir, "fresh", "deeper", "index.sqlite")
        : await backend.target("fresh");
    await expectRefusedEverywhere(target);
    if (backend.engine === "sqlite") expect(existsSync(join(backend.dir, "fresh"))).toBe(false);
  });

  it("refuses a database that holds only the watch journal, leaving the journal as it was", async () => {
    const target =
      backend.engine === "sqlite" ? join(backend.dir, "journal", "watch.sqlite") : await backend.target("journal");
    const store = await openWatchStore(target);
    await store.close();
    await expectRefusedEverywhere(target);
  });

  it("refuses an empty PostgreSQL database, creating no table in it", async () => {
    if (backend.engine !== "postgres") return;
    const database = await scratchDatabase("chainmail_empty");
    try {
      await expectRefusedEverywhere(database.url);
      expect(await snapshot(database.url)).toEqual([]);
    } finally {
      await database.drop();
    }
  });

  it("leaves any file that is not an index byte for byte as it was, creating no file beside it", async () => {
    if (backend.engine !== "sqlite") return;
    // Any bytes at all, an empty file, text, or an SQLite database of someone else's tables (rollback journal).
    const driver = await sqliteDriver();
    const otherDatabase = (tables: string[]) => {
      const path = join(backend.dir, "scratch.sqlite");
      const db = driver.connect(path, { mustExist: false });
      for (const t of tables) db.exec(`CREATE TABLE ${t} (x TEXT); INSERT INTO ${t} VALUES ('${t}')`);
      db.close();
      const bytes = readFileSync(path);
      writeFileSync(path, "");
      return bytes;
    };
    const contents = fc.oneof(
      fc.uint8Array({ maxLength: 8192 }),
      fc.string({ maxLength: 400 }).map((s) => new Uint8Array(Buffer.from(s))),
      fc
        .uniqueArray(fc.constantFrom("meta", "blocks", "tokens", "watch_rules", "notes", "schema_migrations"), {
          maxLength: 3,
        })
        .map((tables) => new Uint8Array(otherDatabase(tables))),
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(contents, async (bytes) => {
        const dir = join(backend.dir, `file-${n++}`);
        mkdirSync(dir);
        const target = join(dir, "index.sqlite");
        writeFileSync(target, bytes);
        const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: target });
        const out = await runNode(
          nftTransactionsByContract,
          { query: { contract_address: `0x${"cd".repeat(20)}` }, params: {} },
          { config },
        );
        expect(out.error?.details.code).toBe("storage_error");
        expect(out.error?.error).toContain(target);
        expect(readdirSync(dir)).toEqual(["index.sqlite"]);
        expect(Buffer.from(readFileSync(target)).equals(Buffer.from(bytes))).toBe(true);
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
