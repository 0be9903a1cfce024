/**
 * Where the index tests keep their indexes. `npm test`: SQLite files in a temporary directory.
 * `npm run test:services` (CHAINMAIL_TEST_INDEX_DB=postgres) runs the same test files against PostgreSQL: one
 * database with a random name per test file, one schema per index in it, dropped at the end.
 * TEST_POSTGRES_URL points at the server (default postgres://postgres@127.0.0.1:5432/test, trust auth).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { loadConfig } from "../../src/core/config.js";
import { runNode } from "../../src/core/node.js";
import type { Engine } from "../../src/db/database.js";
import { nftTransactionsOnChain } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";

export interface IndexBackend {
  engine: Engine;
  /** A fresh, empty index named `name` (a file path or a postgres:// URL); the same name gives the same index. */
  target(name: string): Promise<string>;
  /** A scratch directory for other files of the test. */
  dir: string;
  close(): Promise<void>;
}

export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL || "postgres://postgres@127.0.0.1:5432/test";

export const testEngine = (): Engine => (process.env.CHAINMAIL_TEST_INDEX_DB === "postgres" ? "postgres" : "sqlite");

/** A URL to the same server as `base`, database `database`, optionally with a search_path. */
export function postgresUrl(base: string, database: string, schema?: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  if (schema) url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

/** Creates a database with a random name; `drop()` removes it, whoever is still connected. */
export async function scratchDatabase(prefix = "chainmail_test"): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: postgresUrl(TEST_POSTGRES_URL, name),
    drop: async () => {
      const client = new pg.Client({ connectionString: TEST_POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function openBackend(prefix: string): Promise<IndexBackend> {
  const dir = mkdtempSync(join(tmpdir(), `chainmail-${prefix}-`));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  if (testEngine() === "sqlite") {
    return {
      engine: "sqlite",
      dir,
      target: async (name) => join(dir, `${name}.sqlite`),
      close: async () => removeDir(),
    };
  }
  const database = await scratchDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const databaseName = new URL(database.url).pathname.slice(1);
  return {
    engine: "postgres",
    dir,
    target: async (name) => {
      const schema = `s_${name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`;
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      return postgresUrl(database.url, databaseName, schema);
    },
    close: async () => {
      await admin.end();
      await database.drop();
      removeDir();
    },
  };
}

/** Every record of the index at `db` of the given types, whole chain, through the on-chain node (one page). */
export async function recordsInIndex(db: string, types: string[]): Promise<TransactionRecord[]> {
  const result = await runNode(
    nftTransactionsOnChain,
    { query: { type: types, page_size: 1000 }, params: {} },
    { config: loadConfig({ NFT_SOURCE: "index", INDEX_DB: db }) },
  );
  if (result.error) throw new Error(`the index answered an error: ${result.error.error}`);
  return result.data!.transactions;
}
