/**
 * A local Ethereum dev node: the anvil binary that `@foundry-rs/anvil` ships through its per-platform optional
 * dependency (`@foundry-rs/anvil-<os>-<arch>`), so it installs from the npm registry with no download and no
 * install script.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { ChainmailError } from "../core/errors.js";

export interface DevChain {
  /** e.g. http://127.0.0.1:8545 */
  rpcUrl: string;
  /** Process id of anvil (so a caller can check that it is gone). */
  pid: number;
  /** Kills anvil and waits until it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

export interface DevChainOptions {
  /** Port to listen on; a free one when omitted. */
  port?: number;
  /** Seconds between blocks; omitted = one block per transaction (automine). */
  blockTime?: number;
  /** Dev chain id; anvil's default is 31337. */
  chainId?: number;
  /** Start from a state file anvil wrote (`dumpState`): blocks, logs and accounts, without mining them again. */
  loadState?: string;
  /** Write the chain's state to this file when anvil stops. */
  dumpState?: string;
  /** The hardfork to run (`cancun` mines long chains much faster than anvil's default). */
  hardfork?: string;
  /** Keep no past states, only blocks and logs (`--prune-history`): mining a long chain stays fast. */
  pruneHistory?: boolean;
}

const PLATFORM_PACKAGES: Record<string, string | undefined> = {
  "linux-x64": "@foundry-rs/anvil-linux-amd64",
  "linux-arm64": "@foundry-rs/anvil-linux-arm64",
  "darwin-x64": "@foundry-rs/anvil-darwin-amd64",
  "darwin-arm64": "@foundry-rs/anvil-darwin-arm64",
  "win32-x64": "@foundry-rs/anvil-win32-amd64",
};

/** Path of the anvil executable: `ANVIL_BIN` if set, else the platform package's binary. */
export function anvilBinary(env: Readonly<Record<string, string | undefined>> = process.env): string {
  if (env.ANVIL_BIN) return env.ANVIL_BIN;
  const platform = `${process.platform}-${process.arch}`;
  const pkg = PLATFORM_PACKAGES[platform];
  const hint = "Run `npm install` (it installs @foundry-rs/anvil and its platform binary), or set ANVIL_BIN.";
  if (!pkg) throw new ChainmailError("INTERNAL", `anvil has no npm binary for ${platform}.`, { hint });
  try {
    const binary = createRequire(import.meta.url).resolve(
      `${pkg}/bin/anvil${process.platform === "win32" ? ".exe" : ""}`,
    );
    if (existsSync(binary)) return binary;
  } catch {
    // reported below
  }
  throw new ChainmailError("INTERNAL", `The anvil binary (${pkg}) is not installed.`, { hint });
}

/** A port nobody listens on right now (the OS picks it). */
export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

// Every anvil this process started, so none outlives it even when the caller forgets stop().
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers must be synchronous: a SIGKILL is the one thing that surely ends the child in time.
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
}

function anvilArgs(host: string, port: number, options: DevChainOptions): string[] {
  const args = ["--host", host, "--port", String(port)];
  if (options.blockTime !== undefined) args.push("--block-time", String(options.blockTime));
  if (options.chainId !== undefined) args.push("--chain-id", String(options.chainId));
  if (options.loadState !== undefined) args.push("--load-state", options.loadState);
  if (options.dumpState !== undefined) args.push("--dump-state", options.dumpState);
  if (options.hardfork !== undefined) args.push("--hardfork", options.hardfork);
  if (options.pruneHistory) args.push("--prune-history");
  // Large bulk mints (the 100k-event bench) fit in fewer transactions with a roomy block.
  args.push("--gas-limit", "1000000000");
  return args;
}

/** Starts anvil on 127.0.0.1 and resolves once it answers JSON-RPC. */
export async function startAnvil(options: DevChainOptions = {}): Promise<DevChain> {
  const host = "127.0.0.1";
  const port = options.port ?? (await freePort(host));
  const child = spawn(anvilBinary(), anvilArgs(host, port, options), { stdio: ["ignore", "ignore", "pipe"] });
  installExitHook();
  running.add(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    child.once("exit", () => {
      running.delete(child);
      resolve();
    });
  });
  const spawnError = new Promise<never>((_, reject) => child.once("error", reject));
  spawnError.catch(() => {}); // observed below; avoid an unhandled rejection after success

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        // Writing a state file on exit takes a while for a big chain.
        const timer = setTimeout(() => child.kill("SIGKILL"), options.dumpState ? 120_000 : 3000);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
    })();
    return stopping;
  };

  const rpcUrl = `http://${host}:${port}`;
  try {
    await Promise.race([waitUntilAnswering(rpcUrl, exited, () => stderr), spawnError]);
  } catch (err) {
    await stop();
    throw err instanceof ChainmailError
      ? err
      : new ChainmailError("INTERNAL", `anvil did not start: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
  }
  return { rpcUrl, pid: child.pid!, stop };
}

async function waitUntilAnswering(rpcUrl: string, exited: Promise<void>, stderr: () => string): Promise<void> {
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (gone) throw new ChainmailError("INTERNAL", `anvil exited at start: ${stderr().trim() || "(no output)"}`);
    try {
      const res = await fetch(rpcUrl, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      if (res.ok) {
        await res.json();
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new ChainmailError("INTERNAL", `anvil did not answer on ${rpcUrl} within 20 s.`);
}
