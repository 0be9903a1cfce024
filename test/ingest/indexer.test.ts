/**
 * The indexer (src/ingest/indexer.ts, `indexChain`) end to end against a real anvil: every record kind, resume and
 * restart without duplicates, a provider that refuses log ranges; then the index it built served: keyset paging with
 * every page size, continuations, and the three nodes over the index.
 */
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { parseJson } from "../../src/core/json.js";
import { runNode } from "../../src/core/node.js";
import { openDatabase } from "../../src/db/database.js";
import { freePort } from "../../src/demo/devchain.js";
import { TOPIC } from "../../src/ingest/decode.js";
import { type IndexChainOptions, indexChain } from "../../src/ingest/indexer.js";
import { CRYPTOPUNKS } from "../../src/ingest/venues/cryptopunks.js";
import { ORDER_FULFILLED } from "../../src/ingest/venues/seaport.js";
import { nftTransactionsByContract, nftTransactionsByToken, nftTransactionsOnChain } from "../../src/nodes/index.js";
import type { TransactionRecord } from "../../src/schemas/transactions.js";
import { closeIndexSources } from "../../src/sources/own-index/source.js";
import { IndexStore } from "../../src/sources/own-index/store.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { buildChain, type ChainFixture, HUGE_ID, NFT721, NFT1155, TOKEN20 } from "../support/index-fixture.js";
import { type Anvil, address, startAnvil } from "../support/index-helpers.js";
import { startJsonRpcProxy } from "../upstreams/jsonrpc.js";

let anvil: Anvil;
let chain: ChainFixture;
let backend: IndexBackend;
let mainDb: string;
let mainResult: Awaited<ReturnType<typeof indexChain>>;

const dbPath = (name: string) => backend.target(name);
const options = (db: string, extra: Partial<IndexChainOptions> = {}): IndexChainOptions => ({
  rpcUrl: anvil.rpcUrl,
  dbPath: db,
  follow: false,
  ...chain.options,
  ...extra,
});
const config = (db: string) => loadConfig({ NFT_SOURCE: "index", INDEX_DB: db, CHAINMAIL_RETRY_BASE_MS: "10" });
const blockOf = (r: TransactionRecord) => (r as { block_number: number }).block_number;

beforeAll(async () => {
  backend = await openBackend("index");
  anvil = await startAnvil();
  chain = await buildChain(anvil);
  mainDb = await dbPath("main");
  mainResult = await indexChain(options(mainDb));
});

afterAll(async () => {
  await closeIndexSources();
  await anvil?.stop();
  await backend?.close();
});

/** Every record of the whole chain through the node, page by page. */
async function allOnChain(db: string, pageSize = 50, query: Record<string, unknown> = {}) {
  const out: TransactionRecord[] = [];
  let continuation: string | undefined;
  for (let guard = 0; guard < 1000; guard++) {
    const result = await runNode(
      nftTransactionsOnChain,
      { query: { ...query, page_size: pageSize, ...(continuation ? { continuation } : {}) }, params: {} },
      { config: config(db) },
    );
    expect(result.error).toBeUndefined();
    out.push(...result.data!.transactions);
    continuation = result.data!.continuation;
    if (!continuation) return out;
  }
  throw new Error("paging did not end");
}

describe("event topics", () => {
  it("are the keccak-256 of the event signatures (asked of anvil)", async () => {
    const sha3 = (sig: string) => anvil.rpc<string>("web3_sha3", [`0x${Buffer.from(sig).toString("hex")}`]);
    expect(await sha3("Transfer(address,address,uint256)")).toBe(TOPIC.transfer);
    expect(await sha3("TransferSingle(address,address,address,uint256,uint256)")).toBe(TOPIC.transferSingle);
    expect(await sha3("TransferBatch(address,address,address,uint256[],uint256[])")).toBe(TOPIC.transferBatch);
    expect(await sha3("AnswerUpdated(int256,uint256,uint256)")).toBe(TOPIC.answerUpdated);
    expect(
      await sha3(
        "OrderFulfilled(bytes32,address,address,address,(uint8,address,uint256,uint256)[],(uint8,address,uint256,uint256,address)[])",
      ),
    ).toBe(ORDER_FULFILLED);
  });
});

describe("indexChain", () => {
  it("indexes every record kind in NFTPort's shapes, ignoring ERC-20 transfers, other exchanges and bundles", async () => {
    expect(await allOnChain(mainDb)).toEqual(chain.expected);
    const kinds = new Set(chain.expected.map((r) => r.type));
    expect(kinds).toEqual(new Set(["mint", "transfer", "burn", "sale"]));
    // The bundle came from a Seaport address: counted as not understood. The other exchange's log is not Seaport's.
    expect(mainResult.unknownLogs).toBe(1);
  });

  it("stores sale prices exactly, gross of fees, with price_usd from the feed only for ETH and ETH-like tokens", async () => {
    const store = await IndexStore.open(mainDb);
    try {
      const sales = await store.page({ kinds: ["sale"], direction: "asc", limit: 10 });
      expect(sales.map((s) => [s.price, s.currency, s.price_usd])).toEqual([
        ["1", null, null],
        ["0.5", chain.options.ethTokens[0], "1500.06172839"],
        ["2.500000000000000001", TOKEN20, null],
      ]);
      expect(await store.count()).toBe(chain.expected.length);
    } finally {
      await store.close();
    }
  });

  it("keeps token ids and quantities beyond 2^53 exact", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: NFT1155, token_id: HUGE_ID.toString() }, params: {} },
      { config: config(mainDb) },
    );
    expect(out.data!.transactions).toHaveLength(1);
    expect(out.data!.transactions[0]).toMatchObject({
      type: "mint",
      token_id: HUGE_ID.toString(),
      quantity: 2n ** 64n + 1n,
    });
    expect(out.response!.body).toContain(`"quantity":${2n ** 64n + 1n}`);
  });

  it("re-running inserts nothing and reports the head", async () => {
    const again = await indexChain(options(mainDb));
    expect(again).toMatchObject({ lastBlock: chain.head, records: 0, unknownLogs: 0 });
    // Nothing new: the head's header alone was read.
    expect(again.rpc.calls).toEqual({ eth_getBlockByNumber: 1 });
    expect(await allOnChain(mainDb)).toEqual(chain.expected);
  });

  it("resumes after a stop mid-way without losing or duplicating a record", async () => {
    const db = await dbPath("restart");
    const stop = new AbortController();
    const first = await indexChain(
      options(db, {
        maxRange: 2,
        follow: true,
        signal: stop.signal,
        onProgress: (p) => {
          if (p.block >= 6) stop.abort();
        },
      }),
    );
    expect(first.lastBlock).toBeGreaterThanOrEqual(6);
    expect(first.lastBlock).toBeLessThan(chain.head);
    const partial = await allOnChain(db);
    expect(partial).toEqual(chain.expected.filter((r) => blockOf(r) <= first.lastBlock));
    const second = await indexChain(options(db, { maxRange: 3 }));
    expect(second.lastBlock).toBe(chain.head);
    expect(first.records + second.records).toBe(chain.expected.length);
    expect(await allOnChain(db)).toEqual(chain.expected);
  });

  it("refuses to continue an index built for other contracts", async () => {
    await expect(indexChain(options(mainDb, { contracts: [NFT721] }))).rejects.toThrow(/built for contracts/);
  });

  it("with --contracts indexes only those contracts (and their sales)", async () => {
    const db = await dbPath("contracts");
    await indexChain(options(db, { contracts: [NFT1155] }));
    const expected = chain.expected.filter(
      (r) =>
        ((r as { contract_address?: string }).contract_address ??
          (r as { nft?: { contract_address: string } }).nft?.contract_address) === NFT1155,
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(await allOnChain(db)).toEqual(expected);
  });

  it("starts a new index at --from-block", async () => {
    const db = await dbPath("from-block");
    await indexChain(options(db, { fromBlock: 8 }));
    // The feed's answer came before block 8, so the index has no ETH/USD rate for the WETH sale: null.
    const expected = chain.expected
      .filter((r) => blockOf(r) >= 8)
      .map((r) => (r.type === "sale" ? { ...r, price_details: { ...r.price_details, price_usd: null } } : r));
    expect(await allOnChain(db)).toEqual(expected);
  });

  for (const style of ["hint", "plain"] as const) {
    it(`shrinks the eth_getLogs range when the provider refuses it (${style} error) and grows it back`, async () => {
      const proxy = await startJsonRpcProxy(anvil.rpcUrl, { maxBlocks: 3, refusal: style });
      try {
        const db = await dbPath(`refused-${style}`);
        // One range at a time, at most 4 blocks: it grows to 4, is refused, shrinks below 3 and grows back to 3
        // within this short chain.
        const result = await indexChain(options(db, { rpcUrl: proxy.url, maxRange: 4, concurrency: 1 }));
        expect(result.lastBlock).toBe(chain.head);
        expect(await allOnChain(db)).toEqual(chain.expected);
        expect(proxy.refused).toBeGreaterThan(0);
        expect(Math.max(...proxy.served)).toBeLessThanOrEqual(3);
        expect(proxy.served.filter((size) => size === 3).length).toBeGreaterThan(1);
      } finally {
        await proxy.close();
      }
    });
  }

  it("reads ranges concurrently and commits them strictly in block order, also when they finish out of order", async () => {
    // Every eth_getLogs answer is delayed at random, so ranges read at once come back in any order.
    const proxy = await startJsonRpcProxy(anvil.rpcUrl, {
      latencyMs: (calls) => (calls.some((c) => c.method === "eth_getLogs") ? Math.random() * 40 : 0),
      maxBlocks: 3,
      refusal: "hint",
    });
    try {
      const db = await dbPath("concurrent");
      const committed: number[] = [];
      const result = await indexChain(
        options(db, {
          rpcUrl: proxy.url,
          concurrency: 4,
          maxRange: 2,
          onProgress: (p) => committed.push(p.block),
        }),
      );
      // The bundle on Seaport is counted once, as in one sequential pass.
      expect(result).toMatchObject({ lastBlock: chain.head, records: chain.expected.length, unknownLogs: 1 });
      expect(await allOnChain(db)).toEqual(chain.expected);
      expect(proxy.maxConcurrentLogs).toBeGreaterThan(1);
      expect(proxy.maxConcurrentLogs).toBeLessThanOrEqual(4);
      // Progress comes after each commit: block by block in chain order, whatever order the reads finished in.
      expect(committed.length).toBeGreaterThan(4);
      expect(committed).toEqual([...committed].sort((a, b) => a - b));
      expect(committed.at(-1)).toBe(chain.head);
    } finally {
      await proxy.close();
    }
  });

  it("indexes the same records from a node that answers logs newest first", async () => {
    const proxy = await startJsonRpcProxy(anvil.rpcUrl, { reverseLogs: true });
    try {
      const db = await dbPath("reversed");
      const result = await indexChain(options(db, { rpcUrl: proxy.url }));
      // The same outcome; the calls it took may differ (ranges read at once finish in any order).
      const { rpc: _, ...outcome } = result;
      const { rpc: __, ...mainOutcome } = mainResult;
      expect(outcome).toEqual(mainOutcome);
      expect(await allOnChain(db)).toEqual(chain.expected);
      expect(proxy.answers.some((a) => a.logs > 1)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it("shares one 429 backoff among all concurrent readers", async () => {
    let limited = 0;
    let limitedAt = 0;
    const proxy = await startJsonRpcProxy(anvil.rpcUrl, {
      intercept: (calls) => {
        if (limited === 0 && calls.some((c) => c.method === "eth_getLogs")) {
          limited++;
          limitedAt = Date.now();
          return { status: 429, headers: { "retry-after": "1" }, body: '{"error":"rate limited"}' };
        }
        return undefined;
      },
    });
    try {
      const db = await dbPath("rate-limited");
      const result = await indexChain(options(db, { rpcUrl: proxy.url, concurrency: 4, maxRange: 2 }));
      expect(result.lastBlock).toBe(chain.head);
      expect(await allOnChain(db)).toEqual(chain.expected);
      expect(limited).toBe(1);
      // None is sent during the second Retry-After asked for. Requests already on their way may still arrive in its
      // first 300 ms (on a loaded machine, a while after the 429 left); a reader that did not pause would send
      // dozens in the rest of that second.
      const during = proxy.requests.filter((r) => r.at > limitedAt + 300 && r.at < limitedAt + 950);
      expect(during).toEqual([]);
      expect(proxy.requests.filter((r) => r.at >= limitedAt + 950).length).toBeGreaterThan(0);
    } finally {
      await proxy.close();
    }
  });

  it("reports a node that refuses even one block clearly", async () => {
    const proxy = await startJsonRpcProxy(anvil.rpcUrl, { maxBlocks: 0 });
    try {
      await expect(indexChain(options(await dbPath("refused-all"), { rpcUrl: proxy.url }))).rejects.toThrow(
        /JSON-RPC node at http:\/\/127\.0\.0\.1:\d+ refused eth_getLogs/,
      );
    } finally {
      await proxy.close();
    }
  });
});

describe("serving from the index", () => {
  const byChainOrder = (records: TransactionRecord[]) => records;
  const newestFirst = (records: TransactionRecord[]) => [...records].reverse();
  const ofContract = (contract: string) => (r: TransactionRecord) =>
    ((r as { contract_address?: string }).contract_address ??
      (r as { nft?: { contract_address: string } }).nft?.contract_address) === contract;
  const ofToken = (contract: string, id: string) => (r: TransactionRecord) =>
    ofContract(contract)(r) &&
    ((r as { token_id?: string }).token_id ?? (r as { nft?: { token_id: string } }).nft?.token_id) === id;

  async function pageThrough(node: "contract" | "token" | "chain", query: Record<string, unknown>, pageSize: number) {
    const target =
      node === "contract"
        ? nftTransactionsByContract
        : node === "token"
          ? nftTransactionsByToken
          : nftTransactionsOnChain;
    const out: TransactionRecord[] = [];
    let continuation = "";
    let pages = 0;
    do {
      const result = await runNode(
        target as typeof nftTransactionsOnChain,
        { query: { ...query, page_size: pageSize, ...(continuation ? { continuation } : {}) }, params: {} },
        { config: config(mainDb) },
      );
      expect(result.error).toBeUndefined();
      const page = result.data!.transactions;
      expect(page.length).toBeLessThanOrEqual(pageSize);
      // A continuation comes with full pages only, as with NFTPort.
      expect(result.data!.continuation !== "").toBe(page.length === pageSize);
      out.push(...page);
      continuation = result.data!.continuation;
      pages++;
    } while (continuation && pages < 500);
    return out;
  }

  it("pages through everything with every page_size from 1 to 7, each record exactly once, in order", async () => {
    const cases = [
      { node: "chain" as const, query: {}, expected: byChainOrder(chain.expected) },
      {
        node: "contract" as const,
        query: { contract_address: NFT721 },
        expected: newestFirst(chain.expected.filter(ofContract(NFT721))),
      },
      {
        node: "contract" as const,
        query: { contract_address: NFT1155.toUpperCase().replace("0X", "0x") },
        expected: newestFirst(chain.expected.filter(ofContract(NFT1155))),
      },
      {
        node: "token" as const,
        query: { contract_address: NFT1155, token_id: "2" },
        expected: newestFirst(chain.expected.filter(ofToken(NFT1155, "2"))),
      },
      {
        node: "chain" as const,
        query: { from_block: 4, to_block: 11, type: ["transfer", "sale"] },
        expected: chain.expected.filter(
          (r) => blockOf(r) >= 4 && blockOf(r) <= 11 && (r.type === "transfer" || r.type === "sale"),
        ),
      },
    ];
    for (const c of cases) {
      expect(c.expected.length).toBeGreaterThan(1);
      for (let size = 1; size <= 7; size++) {
        expect(await pageThrough(c.node, c.query, size), `${c.node} ${JSON.stringify(c.query)} size ${size}`).toEqual(
          c.expected,
        );
      }
    }
  });

  it("filters by type", async () => {
    const out = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: NFT721, type: ["mint", "burn"] }, params: {} },
      { config: config(mainDb) },
    );
    expect(out.data!.transactions.map((r) => r.type)).toEqual(["burn", "mint", "mint"]);
  });

  it("answers bid and list (off-chain order books) with no records", async () => {
    for (const type of [["bid"], ["list"], ["bid", "list"]]) {
      const out = await runNode(
        nftTransactionsByContract,
        { query: { contract_address: NFT721, type }, params: {} },
        { config: config(mainDb) },
      );
      expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
    }
    const mixed = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: NFT721, type: ["list", "sale"] }, params: {} },
      { config: config(mainDb) },
    );
    expect(mixed.data!.transactions.map((r) => r.type)).toEqual(["sale", "sale"]);
  });

  it("puts the raw page on the response port, continuation only when there is a next page", async () => {
    const out = await runNode(
      nftTransactionsOnChain,
      { query: { page_size: 2 }, params: { api_key: "ignored", chain: "ethereum" } },
      { config: config(mainDb) },
    );
    expect(out.response).toMatchObject({ status: 200, headers: { "content-type": "application/json" } });
    const body = parseJson(out.response!.body) as Record<string, unknown>;
    expect(body).toEqual({
      response: "OK",
      transactions: out.data!.transactions,
      continuation: out.data!.continuation,
    });
    const last = await runNode(
      nftTransactionsOnChain,
      { query: { page_size: 2, from_block: chain.head }, params: {} },
      { config: config(mainDb) },
    );
    expect(last.data!.transactions).toHaveLength(1);
    expect(last.data!.continuation).toBe("");
    expect(parseJson(last.response!.body)).not.toHaveProperty("continuation");
  });

  it("refuses tampered, foreign and other queries' continuations with invalid_continuation", async () => {
    const first = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: NFT721, page_size: 2 }, params: {} },
      { config: config(mainDb) },
    );
    const good = first.data!.continuation;
    const decoded = Buffer.from(good, "base64url").toString();
    const tampered = Buffer.from(decoded.replace(/^\d+/, (b) => String(Number(b) + 1))).toString("base64url");
    const attempts: [string, Record<string, unknown>][] = [
      [tampered, { contract_address: NFT721 }],
      ["MTY3NTIzNzUyM182M2RhMTg5NDMzMTMzYzI0NjgwNDI5YTc=", { contract_address: NFT721 }],
      ["1638479526000_61a936bd60c2ce3a0c68cd6f", { contract_address: NFT721 }],
      [good, { contract_address: NFT1155 }],
      [good, { contract_address: NFT721, type: ["sale"] }],
    ];
    for (const [continuation, query] of attempts) {
      const out = await runNode(
        nftTransactionsByContract,
        { query: { ...query, page_size: 2, continuation }, params: {} },
        { config: config(mainDb) },
      );
      expect(out.data).toBeUndefined();
      expect(out.error?.details.code).toBe("invalid_continuation");
      expect(out.error?.details.field).toBe("query.continuation");
      expect(out.error?.error).toMatch(/query\.continuation is not one the local index issued/);
    }
    const ok = await runNode(
      nftTransactionsByContract,
      { query: { contract_address: NFT721, page_size: 2, continuation: good }, params: {} },
      { config: config(mainDb) },
    );
    expect(ok.error).toBeUndefined();
  });

  it("validates input like with NFTPort, and refuses page sizes beyond 1000", async () => {
    const bad = await runNode(
      nftTransactionsOnChain,
      { query: { page_size: 0, type: ["bid"], from_block: 9, to_block: 3 }, params: {} },
      { config: config(mainDb) },
    );
    expect(bad.error?.details.code).toBe("invalid_input");
    const fields = (bad.error!.details.violations as { field: string }[]).map((v) => v.field);
    expect(fields).toEqual(expect.arrayContaining(["query.page_size", "query.type[0]"]));
    const big = await runNode(
      nftTransactionsOnChain,
      { query: { page_size: 1001 }, params: {} },
      { config: config(mainDb) },
    );
    expect(big.error?.details.code).toBe("invalid_input");
    expect(big.error?.error).toContain("query.page_size = 1001 is invalid: must be an integer >= 1 and <= 1000");
  });

  it("answers an empty page for an unknown token or contract", async () => {
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: NFT721, token_id: "999" }, params: {} },
      { config: config(mainDb) },
    );
    expect(out.data).toEqual({ response: "OK", transactions: [], continuation: "" });
  });
});

describe("IndexStore.open", () => {
  it("refuses a file that is not an index, or a path it cannot create, with storage_error naming the path", async () => {
    if (backend.engine !== "sqlite") return;
    const notSqlite = join(backend.dir, "not-sqlite.sqlite");
    writeFileSync(notSqlite, "this is not a database, just text long enough to fill a header ".repeat(4));
    await expect(IndexStore.open(notSqlite)).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringContaining(notSqlite) }),
    );
    const underAFile = join(notSqlite, "index.sqlite");
    await expect(IndexStore.open(underAFile)).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringContaining(underAFile) }),
    );
  });

  it("refuses a PostgreSQL it cannot reach, or a database that does not exist, naming it without the password", async () => {
    if (backend.engine !== "postgres") return;
    const url = new URL(mainDb);
    url.password = "hunter2-secret";
    url.pathname = "/no_such_database_here";
    const missing = IndexStore.open(url.toString());
    await expect(missing).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringContaining("no_such_database_here") }),
    );
    await expect(missing).rejects.not.toThrow(/hunter2-secret/);
    url.port = String(await freePort());
    await expect(IndexStore.open(url.toString())).rejects.toThrow(
      expect.objectContaining({ code: "storage_error", message: expect.stringMatching(/ECONNREFUSED/) }),
    );
  });

  it("migrates an index file written before migrations existed in place, every value unchanged", async () => {
    if (backend.engine !== "sqlite") return;
    const legacy = join(backend.dir, "legacy.sqlite");
    copyFileSync(join(import.meta.dirname, "..", "fixtures", "index", "chainmail-0.1.sqlite"), legacy);
    const store = await IndexStore.open(legacy);
    try {
      expect(await store.db.query("SELECT version FROM schema_migrations ORDER BY version")).toEqual([
        { version: 1 },
        { version: 2 },
        { version: 3 },
      ]);
      expect(await store.count()).toBe(3);
      expect(await store.lastBlock()).toBe(9);
      expect(await store.checkpoints(100, 10)).toEqual([
        { number: 7, hash: `0x${"7".padStart(64, "a")}` },
        { number: 5, hash: `0x${"5".padStart(64, "a")}` },
      ]);
      expect(await store.answerAt(6, 5)).toBe(300010000000n);
      expect(await store.tokenDecimals(address(0xe7))).toBe(18);
      const rows = await store.page({ contract: address(0x721), direction: "desc", limit: 10 });
      expect(
        rows.map((r) => [r.block_number, r.log_index, r.kind, r.token_id, r.quantity, r.price, r.price_usd]),
      ).toEqual([
        [7, 2, "sale", "18446744073709551623", "18446744073709551617", "2.500000000000000001", "7500.25"],
        [7, 1, "transfer", "18446744073709551623", "18446744073709551617", null, null],
        [5, 0, "mint", "18446744073709551623", "18446744073709551617", null, null],
      ]);
    } finally {
      await store.close();
    }
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: address(0x721), token_id: "18446744073709551623", type: ["sale"] }, params: {} },
      { config: config(legacy) },
    );
    expect(out.data!.transactions).toEqual([
      expect.objectContaining({
        quantity: 2n ** 64n + 1n,
        price_details: expect.objectContaining({ price: 2.5, price_usd: 7500.25 }),
      }),
    ]);
  });

  it("records every migration, and opening again applies nothing", async () => {
    const store = await IndexStore.open(mainDb);
    try {
      const applied = await store.db.query<{ module: string; version: number; name: string }>(
        "SELECT module, version, name FROM schema_migrations ORDER BY version",
      );
      expect(applied).toEqual([
        { module: "index", version: 1, name: "initial" },
        { module: "index", version: 2, name: "row_count" },
        { module: "index", version: 3, name: "contract_type_nullable" },
      ]);
      expect(await store.db.migrate("index")).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("turns the empty contract_type of records written before migration 3 (CryptoPunks) into none", async () => {
    const target = await dbPath("before_nullable");
    // The index as chainmail wrote it before migration 3: only migrations 1 and 2, a punk sale with contract_type "".
    const older = join(backend.dir, "migrations-1-2");
    mkdirSync(join(older, backend.engine), { recursive: true });
    const current = new URL(`../../migrations/index/${backend.engine}/`, import.meta.url);
    for (const file of ["0001_initial.sql", "0002_row_count.sql"]) {
      copyFileSync(new URL(file, current), join(older, backend.engine, file));
    }
    const db = await openDatabase(target);
    try {
      expect(await db.migrate("index", pathToFileURL(`${older}/`))).toBe(2);
      await db.exec(
        `INSERT INTO activity VALUES (5, 1, 0, 'sale', '${CRYPTOPUNKS}', '9354', '${address(1)}', '${address(2)}', '1', '0x${"a".repeat(64)}', '0x${"b".repeat(64)}', 1700000000, '', 'cryptopunks', NULL, '0.3', NULL)`,
      );
    } finally {
      await db.close();
    }
    const store = await IndexStore.open(target);
    try {
      const [row] = await store.page({ direction: "asc", limit: 10 });
      expect(row).toMatchObject({ contract_type: null, token_id: "9354", price: "0.3", marketplace: "cryptopunks" });
      // The column takes NULL now, as the indexer writes it for punks.
      await store.insertRows([{ ...row!, block_number: 6, contract_type: null }]);
      expect((await store.page({ direction: "asc", limit: 10 })).map((r) => r.contract_type)).toEqual([null, null]);
    } finally {
      await store.close();
    }
    const out = await runNode(
      nftTransactionsByToken,
      { query: { contract_address: CRYPTOPUNKS, token_id: "9354", type: ["sale"] }, params: {} },
      { config: config(target) },
    );
    expect(out.error).toBeUndefined();
    expect(out.data!.transactions.map((t) => (t as { nft: object }).nft)).toEqual([
      { contract_address: CRYPTOPUNKS, token_id: "9354" },
      { contract_address: CRYPTOPUNKS, token_id: "9354" },
    ]);
  });
});
