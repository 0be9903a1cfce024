/**
 * `chainmail run --all` progress: shown on stderr only when stderr is a terminal. A real pseudo-terminal comes
 * from util-linux `script -qec <command> /dev/null`; stdout goes to a file (or the terminal) and must stay pure
 * JSON either way.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import { type NftportServer, startNftport, VALID_KEY } from "../../upstreams/nftport.js";
import { CONTRACT_721, standardDataset } from "../../upstreams/nftport-data.js";

const MAIN = join(import.meta.dirname, "..", "..", "..", "dist", "cli", "main.js");
const PER_CONTRACT = 130;

let upstream: NftportServer;
let dir: string;

beforeAll(async () => {
  upstream = await startNftport(standardDataset(PER_CONTRACT));
  dir = mkdtempSync(join(tmpdir(), "chainmail-progress-"));
  writeFileSync(
    join(dir, "input.json"),
    JSON.stringify({ query: { contract_address: CONTRACT_721, page_size: 10 }, params: { api_key: VALID_KEY } }),
  );
});
afterAll(() => upstream.close());

/** Runs a shell command line inside a pseudo-terminal; resolves with what appeared on that terminal. */
function inTerminal(command: string): Promise<{ code: number | null; terminal: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      env: { PATH: process.env.PATH ?? "", NFTPORT_BASE_URL: upstream.url, CHAINMAIL_RETRY_BASE_MS: "10" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let terminal = "";
    child.stdout.on("data", (d) => {
      terminal += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, terminal }));
  });
}

const run = `${process.execPath} ${MAIN} run nft-transactions-by-contract --all --input @`;

describe("--all progress on stderr", () => {
  it("util-linux script is installed (Debian: bsdutils), to give the CLI a pseudo-terminal", () => {
    expect(execFileSync("script", ["--version"], { encoding: "utf8" })).toMatch(/util-linux/);
  });

  it("stderr a terminal: progress page by page on it; stdout (a file) is pure JSON", async () => {
    const out = join(dir, "out.json");
    const r = await inTerminal(`${run}${join(dir, "input.json")} > ${out}`);
    expect(r.code).toBe(0);
    // 13 full pages of 10, then the empty page after the last full one.
    const lines = r.terminal.split(/\r\n?|\n/).filter(Boolean);
    expect(lines).toContain("page 1, 10 records");
    expect(lines.at(-1)).toBe("page 14, 130 records");
    expect(r.terminal).not.toContain("{");
    const json = parseJson(readFileSync(out, "utf8")) as { data: { transactions: unknown[]; continuation: string } };
    expect(json.data.transactions).toHaveLength(PER_CONTRACT);
    expect(json.data.continuation).toBe("");
  });

  it("stderr not a terminal: nothing written to it, even when stdout is one; stdout is pure JSON", async () => {
    const err = join(dir, "err.txt");
    const r = await inTerminal(`${run}${join(dir, "input.json")} 2> ${err}`);
    expect(r.code).toBe(0);
    expect(readFileSync(err, "utf8")).toBe("");
    // The terminal turns \n into \r\n; otherwise it shows exactly stdout.
    const json = parseJson(r.terminal.replace(/\r\n/g, "\n")) as { data: { transactions: unknown[] } };
    expect(json.data.transactions).toHaveLength(PER_CONTRACT);
    expect(r.terminal).not.toMatch(/page \d+, \d+ records/);
  });
});
