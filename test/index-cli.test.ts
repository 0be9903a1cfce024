/** `chainmail index`: the command over a real anvil, its usage errors and an unreachable node. */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { displayTarget } from "../src/db/database.js";
import { freePort } from "../src/demo/devchain.js";
import { IndexStore } from "../src/sources/index/store.js";
import { runCli } from "./helpers.js";
import { type IndexBackend, openBackend } from "./index-backend.js";
import { type Anvil, address, erc721Transfer, installEmitters, startAnvil } from "./index-helpers.js";

const NFT = address(0x721);
let anvil: Anvil;
let backend: IndexBackend;

beforeAll(async () => {
  backend = await openBackend("index-cli");
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  await erc721Transfer(anvil, NFT, address(0), address(0xa11ce), 1);
  await erc721Transfer(anvil, NFT, address(0xa11ce), address(0xb0b), 1);
});

afterAll(async () => {
  await anvil?.stop();
  await backend?.close();
});

function chainmail(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "..", "src", "cli", "main.ts"), ...args],
      { env: { ...process.env, INDEX_RPC_MAX_RETRIES: "0", ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

describe("chainmail index", () => {
  it("indexes up to the head with --once and prints what it did", async () => {
    const db = await backend.target("cli");
    const out = await chainmail(["index", "--rpc", anvil.rpcUrl, "--db", db, "--contracts", NFT, "--once"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({ db: displayTarget(db), last_block: 2, records: 2, unknown_logs: 0 });
    const store = await IndexStore.open(db);
    try {
      expect((await store.page({ direction: "asc", limit: 10 })).map((r) => r.kind)).toEqual(["mint", "transfer"]);
    } finally {
      await store.close();
    }
    // INDEX_RPC_URL stands in for --rpc and INDEX_DB for --db; nothing new to write.
    const again = await chainmail(["index", "--contracts", NFT, "--once"], {
      INDEX_RPC_URL: anvil.rpcUrl,
      INDEX_DB: db,
    });
    expect(JSON.parse(again.stdout)).toEqual({ db: displayTarget(db), last_block: 2, records: 0, unknown_logs: 0 });
  });

  it("exits 2 with a clear message for bad flags", async () => {
    const noRpc = await chainmail(["index", "--once"], { INDEX_RPC_URL: "" });
    expect(noRpc.code).toBe(2);
    expect(noRpc.stderr).toMatch(/--rpc <url> is required/);
    const badContract = await chainmail(["index", "--rpc", anvil.rpcUrl, "--contracts", "0x12,nope", "--once"]);
    expect(badContract.code).toBe(2);
    expect(badContract.stderr).toMatch(/--contracts "0x12" is invalid/);
    const badBlock = await chainmail(["index", "--rpc", anvil.rpcUrl, "--from-block", "-3", "--once"]);
    expect(badBlock.code).toBe(2);
    expect(badBlock.stderr).toMatch(/--from-block -3 is invalid/);
    for (const value of ["0", "65", "two"]) {
      const badConcurrency = await runCli(["index", "--rpc", anvil.rpcUrl, "--concurrency", value, "--once"]);
      expect(badConcurrency.code).toBe(2);
      expect(badConcurrency.stderr).toContain(`--concurrency ${value} is invalid: must be an integer from`);
    }
  });

  it("exits 1 naming the node when it cannot be reached, without leaking the URL's key", async () => {
    const port = await freePort();
    const out = await chainmail([
      "index",
      "--rpc",
      `http://127.0.0.1:${port}/v2/SECRET-KEY-123`,
      "--db",
      await backend.target("down"),
      "--once",
    ]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/Could not reach JSON-RPC node at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    expect(out.stderr).not.toContain("SECRET-KEY-123");
  });
});
