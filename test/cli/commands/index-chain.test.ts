/** `chainmail index`: the command over a real anvil, its usage errors and an unreachable node. */
import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { displayTarget } from "../../../src/db/database.js";
import { freePort } from "../../../src/demo/devchain.js";
import { IndexStore } from "../../../src/sources/own-index/store.js";
import { CLI, runCli, warningsOf } from "../../support/helpers.js";
import { type IndexBackend, openBackend } from "../../support/index-backend.js";
import { type Anvil, address, erc721Transfer, installEmitters, startAnvil } from "../../support/index-helpers.js";

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
      ["--import", "tsx", join(import.meta.dirname, "..", "..", "..", "src", "cli", "main.ts"), ...args],
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
    expect(warningsOf(out.stderr)).toBe("");
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ db: displayTarget(db), last_block: 2, records: 2, unknown_logs: 0 });
    expect(JSON.parse(out.stdout).rpc.calls.eth_getLogs).toBeGreaterThan(0);
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
    expect(JSON.parse(again.stdout)).toMatchObject({
      db: displayTarget(db),
      last_block: 2,
      records: 0,
      unknown_logs: 0,
    });
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

/**
 * A command or a library run that is done exits at once: nothing it opened (a PostgreSQL pool above all, whose idle
 * connections lived 30 s) holds the process. "At once" is generous here, 10 s, far below any idle timeout.
 */
describe("every command ends its process as soon as it is done", () => {
  const PROMPTLY_MS = 10_000;
  let db: string;

  beforeAll(async () => {
    db = await backend.target("prompt");
    const built = await runCli(["index", "--rpc", anvil.rpcUrl, "--db", db, "--contracts", NFT, "--once"]);
    expect(built.code).toBe(0);
  });

  it("run, run --all, index --once, index migrate and watch --once", async () => {
    const env = { NFT_SOURCE: "index", INDEX_DB: db };
    const query = JSON.stringify({ query: { contract_address: NFT, page_size: 1 } });
    const source = `${backend.dir}/prompt-source.sqlite`;
    expect((await runCli(["index", "--rpc", anvil.rpcUrl, "--db", source, "--contracts", NFT, "--once"])).code).toBe(0);
    const watchConfig = `${backend.dir}/prompt-watch.json`;
    writeFileSync(
      watchConfig,
      JSON.stringify({
        from: { Email: "w@chainmail.test" },
        rules: [{ id: "r", contract_address: NFT, type: ["all"], mail: { to: [{ Email: "me@example.com" }] } }],
      }),
    );
    const commands: [string[], Record<string, string>][] = [
      [["run", "nft-transactions-by-contract", "--input", query], env],
      [["run", "nft-transactions-by-contract", "--input", query, "--all"], env],
      [["run", "nft-transactions-on-chain", "--input", '{"query":{}}', "--limit", "1"], env],
      [["index", "--rpc", anvil.rpcUrl, "--db", db, "--contracts", NFT, "--once"], {}],
      [["index", "migrate", "--from", source, "--to", await backend.target("prompt_copy")], {}],
      [
        ["watch", "--config", watchConfig, "--once"],
        { ...env, EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: `${backend.dir}/prompt-outbox` },
      ],
    ];
    for (const [args, extra] of commands) {
      const out = await runCli(args, { env: extra, timeoutMs: PROMPTLY_MS });
      expect({ args, timedOut: out.timedOut ?? false, code: out.code }).toEqual({ args, timedOut: false, code: 0 });
    }
  });

  it("a library run exits without close(); close() ends the index's connections at once", async () => {
    const script = `${backend.dir}/prompt-library.mjs`;
    writeFileSync(
      script,
      `import { close, loadConfig, nftTransactionsOnChain, runNode } from ${JSON.stringify(join(CLI, "..", "..", "index.js"))};
const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: process.argv[2] });
const out = await runNode(nftTransactionsOnChain, { query: {}, params: {} }, { config });
process.stdout.write(JSON.stringify({ records: out.data.transactions.length }) + "\\n");
if (process.argv[3] === "close") {
  process.stdin.once("data", async () => {
    await close();
    process.stdout.write("closed\\n");
  });
}
`,
    );
    const ran = await new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>(
      (resolve) => {
        execFile(process.execPath, [script, db], { timeout: PROMPTLY_MS }, (error, stdout, stderr) =>
          resolve({
            code: error ? ((error as { code?: number }).code ?? null) : 0,
            stdout,
            stderr,
            killed: error?.killed ?? false,
          }),
        );
      },
    );
    expect(ran).toEqual({ code: 0, stdout: '{"records":2}\n', stderr: "", killed: false });

    if (backend.engine !== "postgres") return;
    // With close(): the connections it held are gone before the process ends (counted by the server).
    const admin = new pg.Client({ connectionString: db });
    await admin.connect();
    const database = new URL(db).pathname.slice(1);
    const connections = async () =>
      Number(
        (
          await admin.query(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [database],
          )
        ).rows[0].n,
      );
    try {
      const others = await connections(); // the test's own (the backend's admin)
      const child = spawn(process.execPath, [script, db, "close"], { stdio: ["pipe", "pipe", "inherit"] });
      let stdout = "";
      child.stdout.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      const output = (text: string) => vi.waitFor(() => expect(stdout).toContain(text), { timeout: PROMPTLY_MS });
      await output("records");
      const open = await connections();
      child.stdin.write("close\n");
      await output("closed");
      expect(open).toBeGreaterThan(others);
      // The server notes a disconnection a moment after the client ends it; the process itself is still running.
      await vi.waitFor(async () => expect(await connections()).toBe(others), { timeout: PROMPTLY_MS });
      expect(child.exitCode).toBeNull();
      child.stdin.end();
    } finally {
      await admin.end();
    }
  });
});
