/**
 * Every command and code block of README.md and docs/*.md runs as pasted, against the local upstreams
 * (test/support/docs-world.ts), unless a `<!-- docs-test: skip reason -->` marker says why it cannot
 * (docs/development.md, "Code blocks in the documentation"). Blocks of one document run in order in one working
 * folder (a file one block writes, the next reads); documents run side by side, a few at a time.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJson } from "../../src/core/json.js";
import { freePort } from "../../src/demo/devchain.js";
import { type DocBlock, extractBlocks } from "../support/docs-blocks.js";
import { type BlockResult, runBlock } from "../support/docs-run.js";
import { type DocsWorld, REPO, startDocsWorld } from "../support/docs-world.js";
import { deferred } from "../support/helpers.js";

const DOCUMENTS = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const blocksOf = new Map(DOCUMENTS.map((file) => [file, extractBlocks(readFileSync(join(REPO, file), "utf8"), file)]));
/** Documents whose blocks run at the same time (each runs its blocks one after another). */
const DOCS_AT_ONCE = 3;
/** Blocks marked `skip` across README.md and docs/ (README's quick start, which runs this test, is one). */
const MAX_SKIPPED = 5;

let world: DocsWorld;
const postgresAnswers = await (async () => {
  const { default: pg } = await import("pg");
  const { TEST_POSTGRES_URL } = await import("../support/index-backend.js");
  const client = new pg.Client({ connectionString: TEST_POSTGRES_URL, connectionTimeoutMillis: 3000 });
  return client.connect().then(
    () => client.end().then(() => true),
    () => false,
  );
})();

beforeAll(async () => {
  world = await startDocsWorld();
}, 240_000);
afterAll(async () => {
  await world?.close();
});

/** Each document's working folder, once its blocks started. */
const folders = new Map<string, string>();

/** Runs a document's blocks in order, once; each block's result as soon as it is there. */
const documentRuns = new Map<string, Promise<BlockResult | undefined>[]>();
let running = 0;
const waiting: (() => void)[] = [];
async function slot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= DOCS_AT_ONCE) await new Promise<void>((r) => waiting.push(r));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function resultsOf(file: string): Promise<BlockResult | undefined>[] {
  let runs = documentRuns.get(file);
  if (runs) return runs;
  const blocks = blocksOf.get(file)!;
  const settle = blocks.map(() => deferred<BlockResult | undefined>());
  runs = settle.map((s) => s.promise);
  documentRuns.set(file, runs);
  void slot(async () => {
    const cwd = world.workdir(file);
    folders.set(file, cwd);
    for (const [i, block] of blocks.entries()) {
      if (!runnable(block)) {
        settle[i]!.resolve(undefined);
        continue;
      }
      try {
        settle[i]!.resolve(await runBlock(block, cwd, world));
      } catch (err) {
        settle[i]!.reject(err);
      }
    }
  });
  return runs;
}

function runnable(block: DocBlock): boolean {
  return block.kind !== "shown" && !block.skip && block.problems.length === 0 && (!block.postgres || postgresAnswers);
}

function show(block: DocBlock, result: BlockResult): string {
  const lines = [`${block.file}:${block.line} (\`\`\`${block.lang}) exited ${result.code}`];
  if (result.stdout) lines.push(`stdout:\n${result.stdout.slice(-3000)}`);
  if (result.stderr) lines.push(`stderr:\n${result.stderr.slice(-3000)}`);
  for (const bg of result.background) {
    lines.push(`background chainmail ${bg.args.join(" ")} exited ${bg.code}:\n${(bg.stdout + bg.stderr).slice(-2000)}`);
  }
  return lines.join("\n");
}

const RETRIEVERS = new Set(["nft-transactions-by-contract", "nft-transactions-on-chain", "nft-transactions-by-token"]);

/** What each `chainmail` call printed must be what it promises, beyond its exit status. */
function checkCalls(block: DocBlock, result: BlockResult, context: string) {
  for (const call of result.calls) {
    const where = `${context}\nchainmail ${call.args.join(" ")}`;
    if (call.args[0] !== "run" || call.code !== 0) continue;
    if (call.stdout.trim() === "") continue; // redirected to a file: the block's own lines read it, or not
    const out = parseJson(call.stdout) as Record<string, unknown>;
    if (RETRIEVERS.has(call.args[1]!)) {
      const data = out.data as { transactions: unknown[] } | undefined;
      expect(data?.transactions.length, `${where}: no records`).toBeGreaterThan(0);
    } else {
      expect(Object.keys(out), where).toContain("messages sent");
    }
  }
  for (const bg of result.background) {
    expect(bg.code, `${context}\n${bg.args.join(" ")} did not exit 0 when stopped`).toBe(0);
    if (bg.args[0] === "serve") {
      expect(bg.health, `${context}\n/healthz of chainmail ${bg.args.join(" ")}`).toBe(200);
      // Every request the block made answered as the block expects (a 4xx behind `curl -s` fails nothing else).
      for (const line of bg.stdout.split("\n").filter((l) => l.includes('"request completed"'))) {
        const status = (JSON.parse(line) as { res: { statusCode: number } }).res.statusCode;
        if (block.exit === 0) expect(status, `${context}\nthe service answered ${line}`).toBeLessThan(400);
      }
    }
  }
}

describe.each(DOCUMENTS.filter((file) => blocksOf.get(file)!.length > 0))("%s", (file) => {
  const blocks = blocksOf.get(file)!;
  for (const [i, block] of blocks.entries()) {
    const name = `line ${block.line}: \`\`\`${block.lang || "(untagged)"}${block.path ? ` → ${block.path}` : ""}`;
    if (block.problems.length > 0) {
      it(name, () => expect(block.problems, `${file}:${block.line}`).toEqual([]));
    } else if (block.kind === "shown") {
      it.skip(`${name} (shown, not run)`, () => undefined);
    } else if (block.skip) {
      it.skip(`${name} (skip: ${block.skip})`, () => undefined);
    } else if (block.postgres && !postgresAnswers) {
      it.skip(`${name} (needs PostgreSQL: none answers at TEST_POSTGRES_URL)`, () => undefined);
    } else {
      it.concurrent(name, async () => {
        const result = (await resultsOf(file)[i])!;
        const context = show(block, result);
        expect(result.code, context).toBe(block.exit);
        if (block.kind === "file") return;
        const ran = result.calls.length + result.background.length;
        expect(result.stdout + result.stderr + ran, `${context}\nit printed nothing`).not.toBe("0");
        // A library block prints nothing on stderr (its errors go there), Node's own warnings aside.
        const warning = /^\(node:\d+\) |^\(Use `node --trace-/;
        const stderr = result.stderr.split("\n").filter((line) => line.trim() && !warning.test(line));
        if (block.kind === "script") expect(stderr, context).toEqual([]);
        checkCalls(block, result, context);
      }, 600_000);
    }
  }
});

describe("skipped blocks", () => {
  it("stay few, each with its reason", () => {
    const skipped = [...blocksOf.values()].flat().filter((b) => b.skip !== undefined);
    // Raise this only for a block that truly cannot run here; a key, a host or a database can be filled in.
    const list = skipped.map((b) => `${b.file}:${b.line} ${b.skip}`).join("\n");
    expect(skipped.length, list).toBeLessThanOrEqual(MAX_SKIPPED);
  });
});

describe("library blocks", () => {
  it("type-check against the package's declarations, where they ran", async () => {
    // Each as it ran, in its document's folder: the files and packages the blocks before it set up are there.
    const withScripts = [...blocksOf.entries()].filter(([, blocks]) => blocks.some((b) => b.kind === "script"));
    const files: string[] = [];
    for (const [file, blocks] of withScripts) {
      await Promise.allSettled(resultsOf(file));
      for (const block of blocks.filter((b) => b.kind === "script" && runnable(b) && b.lang.startsWith("t"))) {
        files.push(join(folders.get(file)!, `block-${block.line}.ts`));
      }
    }
    expect(files.length).toBeGreaterThan(0);
    const dir = world.workdir("typecheck");
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          skipLibCheck: true,
          types: ["node"],
          typeRoots: [join(REPO, "node_modules", "@types")],
        },
        files,
      }),
    );
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
    const result = await promisify(execFile)(process.execPath, [tsc, "-p", dir], { cwd: dir }).then(
      () => "",
      (err: { stdout: string }) => err.stdout,
    );
    expect(result, `tsc -p ${dir}`).toBe("");
  }, 600_000);
});

describe("README's library example, NFTPort out of reach", () => {
  it("ends normally, each failure one line on stderr (the iterator's PageError caught), no stack", async () => {
    const block = blocksOf.get("README.md")!.find((b) => b.kind === "script" && b.code.includes("records<"))!;
    expect(block.code).toContain("PageError");
    // Nothing listens on a port just found free: every call is refused, as offline.
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const offline = { ...block, env: { ...block.env, NFTPORT_BASE_URL: nowhere } };
    const result = await runBlock(offline, world.workdir("readme-offline"), world);
    const lines = result.stderr.split("\n").filter((line) => line.trim() !== "");
    expect(result.code, result.stderr).toBe(0);
    // runNode's error output, then the PageError of records(): each as `code: message`.
    expect(lines, result.stderr).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/^upstream_unreachable: Could not reach NFTPort at /);
  }, 180_000);
});
