/**
 * The fewest calls for the same records (issue 31, item 1), through a real JSON-RPC proxy in front of anvil
 * (test/upstreams/faulty-rpc.ts) that counts the calls it is sent by method, the log ranges and the headers asked:
 * - the block timestamp comes from the logs (`blockTimestamp`); a header is read for a record only where its log
 *   carries none;
 * - headers are read near the head (the 64-block window) and, for the tail checks of a long answer, only where the
 *   provider may cut answers silently; none twice;
 * - `eth_getLogs` ranges are as large as the provider's rule allows: one collection's sparse history is one call,
 *   a suggested range (Alchemy, Infura) is read as that piece and the rest, a stated cap (QuickNode's plan) kept;
 * - `--once` reads the head once (its `latest` header), the follower polls that header alone.
 * Each run is compared with an index built straight from anvil, and `chainmail index` must exit 0.
 *
 * The chain (anvil, cancun): 12,000 ERC-721 mints in 24 blocks of 500 early on, then one collection's transfers
 * in 1 % of some 2,400 blocks, the last of them near the head.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBulkActivity } from "../../src/demo/activity.js";
import { deployAll } from "../../src/demo/contracts.js";
import { startAnvil } from "../../src/demo/devchain.js";
import { indexChain } from "../../src/ingest/indexer.js";
import type { ActivityRow } from "../../src/sources/own-index/store.js";
import { allRows } from "../support/faults-chain.js";
import { runCli } from "../support/helpers.js";
import { type IndexBackend, openBackend } from "../support/index-backend.js";
import { type Anvil, address, erc721Transfer, installEmitters, rpcCall, SENDER } from "../support/index-helpers.js";
import { type Faults, type FaultyRpc, startFaultyRpc } from "../upstreams/faulty-rpc.js";

const COLLECTION = address(0xc011);
/** Transfers of the collection, one every GAP blocks. */
const TRANSFERS = 24;
const GAP = 100;
/** Blocks of the head window whose headers are read before the logs. */
const WINDOW = 64;
const FAST = { CHAINMAIL_RETRY_BASE_MS: "20", CHAINMAIL_RETRY_MAX_DELAY_MS: "300", CHAINMAIL_MAX_RETRIES: "8" };

let anvil: Anvil;
let backend: IndexBackend;
let head: number;
/** Clean indexes built straight from anvil: the whole chain, and the collection alone. */
let whole: ActivityRow[];
let collection: ActivityRow[];

beforeAll(async () => {
  backend = await openBackend("quota");
  const chain = await startAnvil({ hardfork: "cancun" });
  anvil = {
    rpcUrl: chain.rpcUrl,
    rpc: <T>(method: string, params: unknown[] = []) => rpcCall<T>(chain.rpcUrl, method, params),
    stop: () => chain.stop(),
  };
  const deployed = await deployAll(anvil.rpcUrl);
  // 500 a transaction: a cancun chain caps a transaction's gas below a larger mint.
  await createBulkActivity(anvil.rpcUrl, deployed, 12_000, 500);
  await installEmitters(anvil, [COLLECTION]);
  for (let token = 1; token <= TRANSFERS; token++) {
    await anvil.rpc("anvil_mine", [`0x${(GAP - 1).toString(16)}`]);
    await erc721Transfer(anvil, COLLECTION, token % 2 ? address(0) : SENDER, SENDER, token);
  }
  await anvil.rpc("anvil_mine", ["0xa"]);
  head = Number(await anvil.rpc<string>("eth_blockNumber"));
  const clean = async (name: string, contracts?: string[]) => {
    const db = await backend.target(name);
    await indexChain({ rpcUrl: anvil.rpcUrl, dbPath: db, follow: false, ...(contracts ? { contracts } : {}) });
    return allRows(db);
  };
  whole = await clean("clean_whole");
  collection = await clean("clean_collection", [COLLECTION]);
}, 240_000);

afterAll(async () => {
  await anvil?.stop();
  await backend?.close();
});

/** `chainmail index --once` through a proxy with these faults, as `provider` (INDEX_RPC_PROVIDER) when given. */
async function indexThrough(name: string, faults: Faults, options: { provider?: string; contracts?: boolean } = {}) {
  const proxy = await startFaultyRpc(anvil.rpcUrl, faults);
  const db = await backend.target(name);
  try {
    const flags = options.contracts ? ["--contracts", COLLECTION] : [];
    const env = { ...FAST, ...(options.provider ? { INDEX_RPC_PROVIDER: options.provider } : {}) };
    const run = await runCli(["index", "--once", "--rpc", proxy.url, "--db", db, ...flags], { env });
    return { ...run, rows: await allRows(db), proxy };
  } finally {
    await proxy.close();
  }
}

/** No header asked twice, and every block's logs asked once (ranges refused for their size aside). */
function readOnce(proxy: FaultyRpc): void {
  expect(new Set(proxy.headerReads).size, "a header read twice").toBe(proxy.headerReads.length);
  const served = proxy.logRanges.filter((r) => !r.refused).sort((a, b) => a.from - b.from);
  for (let i = 1; i < served.length; i++)
    expect(served[i]!.from, "a block's logs read twice").toBe(served[i - 1]!.to + 1);
  expect(served[0]?.from).toBe(0);
  expect(served.at(-1)?.to).toBe(head);
}

/** The blocks, outside the head window, that hold records. */
const recordBlocksBelowWindow = (rows: ActivityRow[]) =>
  new Set(rows.map((r) => r.block_number).filter((n) => n <= head - WINDOW)).size;

describe("the fewest calls for the same records", () => {
  it("builds its clean indexes: a dense start, then one collection in 1 % of the blocks", () => {
    expect(whole.length).toBe(12_000 + TRANSFERS);
    expect(collection.length).toBe(TRANSFERS);
    expect(collection.every((r) => r.timestamp > 0)).toBe(true);
    expect(head).toBeGreaterThan(TRANSFERS * GAP);
  });

  it("reads one collection's sparse history in one eth_getLogs at Alchemy, stamped from the logs' blockTimestamp", async () => {
    const run = await indexThrough(
      "alchemy_sparse",
      { logCap: { provider: "alchemy", logs: 10_000 } },
      {
        provider: "alchemy",
        contracts: true,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim())).toMatchObject({ last_block: head, records: TRANSFERS });
    expect(run.rows).toEqual(collection);
    expect(run.proxy.calls.eth_getLogs).toBe(1);
    // The head once (its `latest` header), and the head window's other headers: none for the records' times.
    expect(run.proxy.calls.eth_blockNumber ?? 0).toBe(0);
    expect(run.proxy.headerReads.filter((b) => b === "latest")).toHaveLength(1);
    expect(run.proxy.calls.eth_getBlockByNumber).toBe(WINDOW);
    readOnce(run.proxy);
  });

  it("reads a header for each record whose log carries no blockTimestamp, and only for those", async () => {
    const run = await indexThrough(
      "alchemy_timeless",
      { stripTimestamps: true },
      {
        provider: "alchemy",
        contracts: true,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(collection);
    expect(run.proxy.calls.eth_getLogs).toBe(1);
    expect(run.proxy.calls.eth_getBlockByNumber).toBe(WINDOW + recordBlocksBelowWindow(collection));
    readOnce(run.proxy);
  });

  it("reads the dense chain through Alchemy's log cap as the suggested piece and the rest, with no per-block headers", async () => {
    const run = await indexThrough(
      "alchemy_dense",
      { logCap: { provider: "alchemy", logs: 10_000 } },
      {
        provider: "alchemy",
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(whole);
    expect(run.proxy.struck["log cap: alchemy"]).toBeGreaterThan(0);
    // A provider that refuses answers over its cap never cuts one: a long answer ending early needs no header.
    expect(run.proxy.calls.eth_getBlockByNumber).toBe(WINDOW);
    // The whole chain refused (over 10K logs in over 2K blocks), the 2K blocks suggested, then the rest.
    expect(run.proxy.calls.eth_getLogs).toBe(3);
    readOnce(run.proxy);
  });

  it("keeps the checks of silent cuts where the provider is not named, reading no header twice", async () => {
    const run = await indexThrough("unnamed", { logCap: { provider: "alchemy", logs: 10_000 } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(whole);
    expect(new Set(run.proxy.headerReads).size, "a header read twice").toBe(run.proxy.headerReads.length);
  });

  it("reads Infura's result cap as the range its data suggests, then the rest", async () => {
    const run = await indexThrough(
      "infura_dense",
      { logCap: { provider: "infura", logs: 10_000 } },
      {
        provider: "infura",
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(whole);
    expect(run.proxy.struck["log cap: infura"]).toBeGreaterThan(0);
    expect(run.proxy.calls.eth_getBlockByNumber).toBe(WINDOW);
    // The first range asked is the rule's largest (10,000 blocks): the whole chain here.
    expect(run.proxy.logRanges[0]).toMatchObject({ from: 0, to: head });
    readOnce(run.proxy);
  });

  it("keeps a QuickNode plan's stated range cap for the run", async () => {
    const run = await indexThrough(
      "quicknode_sparse",
      { rangeCap: { provider: "quicknode", blocks: 1_000 } },
      {
        provider: "quicknode",
        contracts: true,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.rows).toEqual(collection);
    const refused = run.proxy.logRanges.filter((r) => r.refused);
    expect(refused).toHaveLength(1);
    expect(run.proxy.calls.eth_getLogs).toBe(1 + Math.ceil((head + 1) / 1_000));
    readOnce(run.proxy);
  });

  it("follows the head polling its latest header alone, without eth_blockNumber", async () => {
    const proxy = await startFaultyRpc(anvil.rpcUrl, {});
    const db = await backend.target("follower");
    const controller = new AbortController();
    let caughtUp = 0;
    let idleFrom = -1;
    let resolveArrived = () => {};
    const arrived = new Promise<void>((resolve) => {
      resolveArrived = resolve;
    });
    const done = indexChain({
      rpcUrl: proxy.url,
      dbPath: db,
      contracts: [COLLECTION],
      follow: true,
      pollIntervalMs: 20,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.block < head) return;
        caughtUp++;
        if (caughtUp === 1) idleFrom = proxy.headerReads.length;
        if (p.block > head) resolveArrived();
      },
    });
    try {
      while (caughtUp < 5) await new Promise((resolve) => setTimeout(resolve, 20));
      // Polls while nothing moves: the latest header, nothing else.
      expect(proxy.headerReads.slice(idleFrom).every((b) => b === "latest")).toBe(true);
      await erc721Transfer(anvil, COLLECTION, SENDER, address(0xb0b), 1);
      await arrived;
    } finally {
      controller.abort();
      await done;
      await proxy.close();
    }
    expect(proxy.calls.eth_blockNumber ?? 0).toBe(0);
    const rows = await allRows(db);
    expect(rows.slice(0, TRANSFERS)).toEqual(collection);
    expect(rows).toHaveLength(TRANSFERS + 1);
    expect(rows.at(-1)!.timestamp).toBeGreaterThan(0);
  });
});
