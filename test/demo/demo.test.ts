/**
 * `chainmail demo` (what `npm start` runs), as a user runs it: the built CLI in its own process, read from its
 * stdout, called over HTTP, stopped with SIGINT. Needs `npm run build` first (`npm test` does it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../src/core/json.js";
import { close, loadConfig, records } from "../../src/index.js";

const CLI = join(import.meta.dirname, "..", "..", "dist", "cli", "main.js");

/** Command lines of the running anvil processes listening on `port` (read from /proc: no extra tools). */
function anvilsOnPort(port: string): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return argv[0]?.endsWith("anvil") && argv.includes(port) ? [argv.join(" ")] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

/** The summary line `→ N records: a mint, b transfer, ...` printed after a retriever's records. */
function summaryAfter(output: string, nodeId: string): Record<string, number> {
  const section = output.slice(output.indexOf(`── ${nodeId}`));
  const line = section.split("\n").find((l) => l.includes("→") && l.includes("records:"));
  if (!line) throw new Error(`no summary for ${nodeId}`);
  return Object.fromEntries(
    [...line.matchAll(/(\d+) (mint|transfer|burn|sale)/g)].map((m) => [m[2]!, Number(m[1])] as [string, number]),
  );
}

// Linux only: the "no anvil left" check reads /proc.
describe.skipIf(process.platform !== "linux")("chainmail demo (npm start)", () => {
  let child: ChildProcess;
  let output = "";
  let exit: Promise<number | null>;
  const dataDir = mkdtempSync(join(tmpdir(), "chainmail-demo-"));
  // The port the demo is asked for is taken: it must fall back to a free one rather than fail.
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    busyPort = (busy.address() as { port: number }).port;
    child = spawn(process.execPath, [CLI, "demo", "--port", String(busyPort), "--data-dir", dataDir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    exit = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`demo not ready in 60 s:\n${output}`)), 60_000);
      const check = () => {
        if (output.includes("Press Ctrl-C")) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on("data", check);
      void exit.then((code) => reject(new Error(`demo exited early (${code}):\n${output}`)));
    });
  }, 90_000);

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    await new Promise((resolve) => busy.close(resolve));
  });

  it("prints the records of all three retrievers, each kind where it belongs", () => {
    expect(summaryAfter(output, "nft-transactions-by-contract")).toEqual({ mint: 5, transfer: 5, burn: 1, sale: 3 });
    expect(summaryAfter(output, "nft-transactions-by-token")).toEqual({ mint: 1, transfer: 1, burn: 1 });
    expect(summaryAfter(output, "nft-transactions-on-chain")).toEqual({ mint: 8, transfer: 9, burn: 4, sale: 4 });
    expect(output).toContain("1.5 ETH");
    expect(output).toContain("×9007199254740993"); // an ERC-1155 quantity beyond 2^53, exact
    expect(output).toMatch(/curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/nodes\/nft-transactions-by-contract/);
  });

  it("sends the sales digest through the outbox: one .eml listing every sale, readable with outbox show", async () => {
    const outbox = join(dataDir, "outbox");
    expect(output).toContain(`6. sales digest email written to the outbox in ${outbox}`);
    // The digest, and the watch's email of the sale made after start-up (next test).
    const emls = readdirSync(outbox).filter((f) => f.endsWith(".eml"));
    expect(emls).toHaveLength(2);
    const index = readFileSync(join(outbox, "index.jsonl"), "utf8").trim().split("\n");
    expect(index).toHaveLength(2);
    const entry = JSON.parse(index[0]!) as { id: string; subject: string };
    expect(entry.subject).toBe("NFT sales digest: 4 sales");
    const shown = await new Promise<string>((resolve, reject) => {
      const show = spawn(process.execPath, [CLI, "outbox", "show", entry.id, "--dir", outbox]);
      let text = "";
      show.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        text += chunk;
      });
      show.on("error", reject);
      show.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`outbox show exited ${code}`))));
    });
    expect(shown).toContain("Subject: NFT sales digest: 4 sales");
    expect(shown).toContain("multipart/alternative");
  });

  it("watches the index: a sale made after start-up is mailed to the outbox once, by the watch", async () => {
    const block = Number(
      output.match(/7\. chainmail watch: a sale made after start-up \(block (\d+)\) was mailed/)?.[1],
    );
    expect(block).toBeGreaterThan(37);
    const outbox = join(dataDir, "outbox");
    const entries = readFileSync(join(outbox, "index.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { subject: string; to: string[]; custom_id: string });
    const mailed = entries.filter((e) => e.custom_id.startsWith("cw.demo-sales."));
    expect(mailed).toEqual([expect.objectContaining({ subject: "Sold: #2 for 2 ETH", to: ["you@example.com"] })]);
    const config = JSON.parse(readFileSync(join(dataDir, "watch.json"), "utf8")) as { rules: { id: string }[] };
    expect(config.rules[0]!.id).toBe("demo-sales");
  });

  it("serves the index over HTTP at the printed address", async () => {
    const url = output.match(/HTTP service at (http:\/\/\S+)/)?.[1];
    const erc1155 = output.match(/ERC-1155\s+(0x[0-9a-f]{40})/)?.[1];
    expect(url).toBeDefined();
    expect(new URL(url!).port).not.toBe(String(busyPort));
    const res = await fetch(`${url}/nodes/nft-transactions-by-token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: { contract_address: erc1155, token_id: "18446744073709551623", type: ["mint"] } }),
    });
    expect(res.status).toBe(200);
    const body = parseJson(await res.text()) as { data: { transactions: { quantity: unknown; token_id: string }[] } };
    expect(body.data.transactions).toHaveLength(1);
    expect(body.data.transactions[0]!.quantity).toBe(9007199254740993n);
    expect(body.data.transactions[0]!.token_id).toBe("18446744073709551623");
  });

  it("prints the `chainmail index` line for its chain: run as printed, it indexes every record the demo's does, sales too", async () => {
    const line = output.match(/^ {2}(npx chainmail index .*)$/m)?.[1];
    expect(line, output).toBeDefined();
    // As a user pastes it, in the clone (where `npx chainmail` is this package's command).
    const indexed = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const shell = spawn("bash", ["-c", line!], {
        cwd: join(import.meta.dirname, "..", ".."),
        env: { ...process.env, npm_config_offline: "true" },
      });
      let stdout = "";
      let stderr = "";
      shell.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
      });
      shell.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk;
      });
      shell.on("error", reject);
      shell.on("close", (code) => resolve({ code, stdout, stderr }));
    });
    expect(indexed.code, indexed.stderr).toBe(0);
    const summary = JSON.parse(indexed.stdout) as {
      db: string;
      last_block: number;
      records: number;
      unknown_logs: number;
    };
    expect(summary.unknown_logs).toBe(0);
    // The same records as the demo's own index, kind by kind, up to the same block.
    const kinds = async (db: string) => {
      const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: db });
      const query = { type: ["all" as const], to_block: summary.last_block };
      const counts: Record<string, number> = {};
      for await (const record of records("nft-transactions-on-chain", { query }, {}, { config })) {
        counts[record.type] = (counts[record.type] ?? 0) + 1;
      }
      return counts;
    };
    const ours = await kinds(summary.db);
    expect(ours).toEqual(await kinds(join(dataDir, "index.sqlite")));
    expect(ours.sale).toBeGreaterThan(0);
    expect(Object.values(ours).reduce((a, b) => a + b, 0)).toBe(summary.records);
    await close();
  }, 120_000);

  it("stops everything on SIGINT and exits 0: no anvil left, the service port closed", async () => {
    const anvilPort = output.match(/anvil \(dev chain\) at http:\/\/127\.0\.0\.1:(\d+)/)?.[1];
    const url = output.match(/HTTP service at (http:\/\/\S+)/)?.[1];
    expect(anvilPort).toBeDefined();
    expect(anvilsOnPort(anvilPort!)).toHaveLength(1);
    child.kill("SIGINT");
    expect(await exit).toBe(0);
    expect(output).toContain("Stopped: service, indexer, watch and anvil are down.");
    expect(anvilsOnPort(anvilPort!)).toEqual([]);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
