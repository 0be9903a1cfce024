/**
 * The command line, as a user runs it: `node dist/cli/main.js` (built by `npm test`) against the local NFTPort
 * server. Exit codes, the three --input forms, --all and --limit over many pages, a failure midway, `nodes`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseJson } from "../../../src/core/json.js";
import { records } from "../../../src/core/paginate.js";
import { nftTransactionsByContract } from "../../../src/nodes/index.js";
import { type CliResult, CLI as MAIN, runCli, testConfig } from "../../support/helpers.js";
import { FAULTS, type NftportServer, startNftport, VALID_KEY } from "../../upstreams/nftport.js";
import { CONTRACT_721, CONTRACT_1155, standardDataset } from "../../upstreams/nftport-data.js";

let upstream: NftportServer;

beforeAll(async () => {
  upstream = await startNftport(standardDataset());
});
afterAll(() => upstream.close());
beforeEach(() => {
  upstream.clearFaults();
  upstream.requests.length = 0;
});

function cli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<CliResult> {
  const env = { NFTPORT_BASE_URL: upstream.url, CHAINMAIL_RETRY_BASE_MS: "10", ...options.env };
  return runCli(args, { env, stdin: options.stdin });
}

const input = (query: Record<string, unknown>, params: Record<string, unknown> = { api_key: VALID_KEY }) =>
  JSON.stringify({ query, params });

describe("chainmail run: one page", () => {
  it("by-token with --input JSON: exit 0, data + response, exact big integers", async () => {
    const r = await cli([
      "run",
      "nft-transactions-by-token",
      "--input",
      input({ contract_address: "0xf9a412fe25c3b7f01bd11e7cab2965cf56eaa778", token_id: "1" }),
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"quantity": 10000000000000000000000');
    const out = parseJson(r.stdout) as {
      data: { transactions: { quantity: unknown }[] };
      response: { status: number };
    };
    expect(out.data.transactions[0]!.quantity).toBe(10000000000000000000000n);
    expect(out.response.status).toBe(200);
  });

  it("by-contract with --input @file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chainmail-cli-"));
    const file = join(dir, "input.json");
    writeFileSync(file, input({ contract_address: CONTRACT_721, page_size: 3 }));
    const r = await cli(["run", "nft-transactions-by-contract", "--input", `@${file}`]);
    expect(r.code).toBe(0);
    expect((parseJson(r.stdout) as { data: { transactions: unknown[] } }).data.transactions).toHaveLength(3);
  });

  it("on-chain with --input - (stdin), api key from NFTPORT_API_KEY", async () => {
    const r = await cli(["run", "nft-transactions-on-chain", "--input", "-"], {
      stdin: JSON.stringify({ query: { page_size: 2 } }),
      env: { NFTPORT_API_KEY: VALID_KEY },
    });
    expect(r.code).toBe(0);
    expect(upstream.requests[0]!.authorization).toBe(VALID_KEY);
    expect(r.stdout + r.stderr).not.toContain(VALID_KEY);
  });

  it("error port fired: exit 1, the error on stdout, the key nowhere", async () => {
    const key = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
    const r = await cli([
      "run",
      "nft-transactions-by-contract",
      "--input",
      input({ contract_address: CONTRACT_721 }, { api_key: key }),
    ]);
    expect(r.code).toBe(1);
    const out = parseJson(r.stdout) as { error: { details: { code: string } }; response: { status: number } };
    expect(out.error.details.code).toBe("upstream_auth");
    expect(out.response.status).toBe(403);
    expect(r.stdout + r.stderr).not.toContain(key);
  });

  it("invalid input: exit 1 with every violation", async () => {
    const r = await cli([
      "run",
      "nft-transactions-on-chain",
      "--input",
      input({ page_size: 0, from_block: 5, to_block: 1 }),
    ]);
    expect(r.code).toBe(1);
    const out = parseJson(r.stdout) as { error: { details: { violations: { field: string }[] } } };
    expect(out.error.details.violations.map((v) => v.field).sort()).toEqual(["query.from_block", "query.page_size"]);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("chainmail run: usage errors exit 2", () => {
  it.each([
    ["an unknown node", ["run", "nft-nope", "--input", "{}"], /Unknown node "nft-nope"/],
    ["input that is not JSON", ["run", "nft-transactions-on-chain", "--input", "{query:"], /not valid JSON/],
    [
      "a missing @file",
      ["run", "nft-transactions-on-chain", "--input", "@/nonexistent/x.json"],
      /Cannot read --input file/,
    ],
    ["--limit abc", ["run", "nft-transactions-on-chain", "--input", "{}", "--limit", "abc"], /--limit abc is invalid/],
    ["--limit -1", ["run", "nft-transactions-on-chain", "--input", "{}", "--limit=-1"], /--limit -1 is invalid/],
    ["no --input", ["run", "nft-transactions-on-chain"], /--input <json\|@file\|-> is required/],
  ])("%s", async (_name, args, message) => {
    const r = await cli(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
    expect(upstream.requests).toHaveLength(0);
  });
});

describe("chainmail run --all / --limit", () => {
  it("--all: one JSON object holding every record of every page, in order, exact", async () => {
    const expected: unknown[] = [];
    const config = testConfig({ NFTPORT_BASE_URL: upstream.url });
    for await (const r of records(
      nftTransactionsByContract,
      { query: { contract_address: CONTRACT_1155, page_size: 7 }, params: { api_key: VALID_KEY } },
      {},
      { config },
    ))
      expected.push(r);
    upstream.requests.length = 0;
    const r = await cli([
      "run",
      "nft-transactions-by-contract",
      "--all",
      "--input",
      input({ contract_address: CONTRACT_1155, page_size: 7 }),
    ]);
    expect(r.code).toBe(0);
    const out = parseJson(r.stdout) as { data: { transactions: unknown[]; continuation: string }; error?: unknown };
    expect(out.data.transactions).toEqual(expected);
    expect(out.data.transactions.length).toBeGreaterThan(100);
    expect(out.data.continuation).toBe("");
    expect(out.error).toBeUndefined();
    expect(upstream.requests.length).toBe(Math.ceil(expected.length / 7) + (expected.length % 7 === 0 ? 1 : 0));
    // Not a terminal: no progress anywhere.
    expect(r.stderr).toBe("");
  });

  it("--limit N asks for no page it does not need and resumes exactly after the last record", async () => {
    const r = await cli([
      "run",
      "nft-transactions-by-contract",
      "--limit",
      "25",
      "--input",
      input({ contract_address: CONTRACT_721, page_size: 10 }),
    ]);
    expect(r.code).toBe(0);
    const out = parseJson(r.stdout) as { data: { transactions: unknown[]; continuation: string } };
    expect(out.data.transactions).toHaveLength(25);
    expect(upstream.requests.map((q) => q.query.get("page_size"))).toEqual(["10", "10", "5"]);
    const next = await cli([
      "run",
      "nft-transactions-by-contract",
      "--limit",
      "1",
      "--input",
      input({ contract_address: CONTRACT_721, page_size: 10, continuation: out.data.continuation }),
    ]);
    const all = await cli([
      "run",
      "nft-transactions-by-contract",
      "--limit",
      "26",
      "--input",
      input({ contract_address: CONTRACT_721, page_size: 10 }),
    ]);
    const nextRecord = (parseJson(next.stdout) as { data: { transactions: unknown[] } }).data.transactions[0];
    expect(nextRecord).toEqual((parseJson(all.stdout) as { data: { transactions: unknown[] } }).data.transactions[25]);
  });

  it("--limit without page_size asks for min(50, N)", async () => {
    const r = await cli(["run", "nft-transactions-on-chain", "--limit", "3", "--input", input({})]);
    expect(r.code).toBe(0);
    expect(upstream.requests.map((q) => q.query.get("page_size"))).toEqual(["3"]);
  });

  it("a failure midway keeps the records so far, a continuation to resume from, and the error (exit 1)", async () => {
    upstream.fault({ ...FAULTS.serverErrorJson(), after: 2 });
    const query = { contract_address: CONTRACT_721, page_size: 10 };
    const r = await cli(["run", "nft-transactions-by-contract", "--all", "--input", input(query)], {
      env: { NFTPORT_MAX_RETRIES: "0" },
    });
    expect(r.code).toBe(1);
    const out = parseJson(r.stdout) as {
      data: { transactions: unknown[]; continuation: string };
      error: { details: { code: string } };
      response: { status: number };
    };
    expect(out.data.transactions).toHaveLength(20);
    expect(out.error.details.code).toBe("upstream_server_error");
    expect(out.response.status).toBe(500);
    expect(out.data.continuation).not.toBe("");
    // Resuming from data.continuation gives exactly the rest: nothing lost, nothing twice.
    const rest = await cli([
      "run",
      "nft-transactions-by-contract",
      "--all",
      "--input",
      input({ ...query, continuation: out.data.continuation }),
    ]);
    const full = await cli(["run", "nft-transactions-by-contract", "--all", "--input", input(query)]);
    const restRecords = (parseJson(rest.stdout) as { data: { transactions: unknown[] } }).data.transactions;
    const fullRecords = (parseJson(full.stdout) as { data: { transactions: unknown[] } }).data.transactions;
    expect([...out.data.transactions, ...restRecords]).toEqual(fullRecords);
  });

  it("a failure on the first page prints just the error (exit 1)", async () => {
    const r = await cli([
      "run",
      "nft-transactions-by-contract",
      "--all",
      "--input",
      input({ contract_address: CONTRACT_721 }, { api_key: "nope" }),
    ]);
    expect(r.code).toBe(1);
    const out = parseJson(r.stdout) as { data?: unknown; error: { details: { code: string } } };
    expect(out.data).toBeUndefined();
    expect(out.error.details.code).toBe("upstream_auth");
  });
});

describe("chainmail nodes", () => {
  it("prints a short table by default: one line per node with its id, title, input and output ports", async () => {
    const r = await cli(["nodes"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +TITLE +INPUT PORTS +OUTPUT PORTS$/);
    expect(lines).toHaveLength(5);
    expect(lines[1]).toMatch(
      /^nft-transactions-by-contract +NFT transactions by contract retriever +query, params +data, response, error$/,
    );
    expect(lines[4]).toMatch(/^email-send +Email sender +params, request +messages sent, response, error$/);
    // Aligned columns: every row's title starts where the header's does.
    const titleAt = lines[0]!.indexOf("TITLE");
    for (const line of lines.slice(1)) expect(line[titleAt - 1]).toBe(" ");
    expect(lines.slice(1).map((line) => line.slice(titleAt, titleAt + 3))).toEqual(["NFT", "All", "NFT", "Ema"]);
    expect(r.stdout.length).toBeLessThan(1000);
  });

  it("prints every node with JSON Schemas for its ports with --json", async () => {
    const r = await cli(["nodes", "--json"]);
    expect(r.code).toBe(0);
    const nodes = JSON.parse(r.stdout) as {
      id: string;
      version: string;
      inputs: Record<string, { type: string; properties: Record<string, unknown>; required?: string[] }>;
      outputs: Record<string, { type?: string }>;
    }[];
    const ids = nodes.map((n) => n.id);
    expect(ids).toEqual(
      expect.arrayContaining([
        "nft-transactions-by-contract",
        "nft-transactions-on-chain",
        "nft-transactions-by-token",
      ]),
    );
    const byToken = nodes.find((n) => n.id === "nft-transactions-by-token")!;
    expect(byToken.version).toBe("v0");
    expect(byToken.inputs.query!.type).toBe("object");
    expect(byToken.inputs.query!.required).toEqual(["contract_address", "token_id"]);
    expect(byToken.inputs.query!.properties.type).toMatchObject({ type: "array", default: ["all"] });
    expect(Object.keys(byToken.outputs).sort()).toEqual(["data", "error", "response"]);
  });
});

describe("a reader that goes away", () => {
  it("stops quietly when stdout is closed early (`| head`), no EPIPE stack trace", async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      // `nodes --json` prints ~100 kB, more than a pipe holds, so the writer meets the closed pipe.
      const child = spawn("sh", [
        "-c",
        `"${process.execPath}" "${MAIN}" nodes --json | head -c 10 > /dev/null; exit $?`,
      ]);
      let err = "";
      child.stderr.on("data", (chunk) => {
        err += chunk;
      });
      child.on("error", reject);
      child.on("close", (status) => resolve({ code: status, stderr: err }));
    });
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
    expect(code).toBe(0);
  });
});
