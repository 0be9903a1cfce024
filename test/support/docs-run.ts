/**
 * Runs one documented block in its document's working folder: shell blocks with bash (`set -euo pipefail`, so an
 * unset variable or a failing command fails the block), TypeScript and JavaScript blocks as a module through tsx,
 * `file` blocks written where a later block reads them. Long-running commands the shim started are stopped at the
 * end of the block; what each `chainmail` call printed is handed back for the test to check.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { freePort } from "../../src/demo/devchain.js";
import { type DocBlock, shellScript } from "./docs-blocks.js";
import { type DocsWorld, REPO, USER_VALUES } from "./docs-world.js";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface CliCall {
  args: string[];
  code: number;
  stdout: string;
}

export interface BackgroundRun {
  args: string[];
  /** Exit status after the test's SIGTERM (null: it had to be killed). */
  code: number | null;
  /** For `serve`: the status of its `/healthz` just before it was stopped. */
  health?: number;
  stdout: string;
  stderr: string;
}

export interface BlockResult {
  code: number | null;
  stdout: string;
  stderr: string;
  calls: CliCall[];
  background: BackgroundRun[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The block's text as it runs: the user's values filled in, the well-known local ports moved to free ones. */
export function prepare(text: string, block: DocBlock, values: Record<string, string>): string {
  let out = text;
  for (const [from, to] of block.replace) out = out.replaceAll(from, expand(to, values));
  for (const [name, value] of Object.entries(USER_VALUES)) out = out.replaceAll(name, value);
  // A local node's default port (8545) is the tests' anvil; the service's (8080) a free port of this block.
  out = out.replace(/\b(127\.0\.0\.1|localhost):8545\b/g, values.rpc!.replace(/^https?:\/\//, ""));
  out = out.replace(/(?<=(?:127\.0\.0\.1|localhost|0\.0\.0\.0):|--port[ =]|_PORT=)8080\b/g, values.port!);
  return out;
}

export function expand(text: string, values: Record<string, string>): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);
}

function exec(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    // A safety net against a block that hangs (a command the shim did not know runs forever), not a speed goal.
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr: code === null ? `${stderr}\n(killed after ${timeoutMs} ms)` : stderr });
    });
  });
}

function readState(state: string): { calls: CliCall[]; background: { id: string; args: string[]; pid: number }[] } {
  const files = readdirSync(state);
  const byNumber = (prefix: string) =>
    files
      .filter((f) => f.startsWith(prefix) && f.endsWith(".json"))
      .map((f) => f.slice(prefix.length, -".json".length))
      .sort((a, b) => Number(a) - Number(b));
  const calls = byNumber("call-").map((id) => {
    const { args, code } = JSON.parse(readFileSync(join(state, `call-${id}.json`), "utf8"));
    return { args, code, stdout: readFileSync(join(state, `call-${id}.out`), "utf8") };
  });
  const background = byNumber("bg-").map((id) => ({
    id,
    ...JSON.parse(readFileSync(join(state, `bg-${id}.json`), "utf8")),
  }));
  return { calls, background };
}

/** Stops what the shim started in the background (SIGTERM, as Ctrl-C would) and waits for each to end. */
async function stopBackground(state: string, started: { id: string; args: string[]; pid: number }[]) {
  const runs: BackgroundRun[] = [];
  for (const bg of started) {
    const record = join(state, `bg-${bg.id}.json`);
    const read = (ext: string) => readFileSync(join(state, `bg-${bg.id}.${ext}`), "utf8");
    const url = /listening on (\S+)/.exec(read("err"))?.[1];
    const health = url
      ? await fetch(`${url}/healthz`).then(
          (r) => r.status,
          () => 0,
        )
      : undefined;
    const ended = () => JSON.parse(readFileSync(record, "utf8")) as { code?: number | null; signal?: string };
    try {
      process.kill(bg.pid, "SIGTERM");
    } catch {
      // Already gone: its record says how it ended.
    }
    let end = ended();
    for (let i = 0; i < 600 && end.code === undefined; i++) {
      await sleep(100);
      end = ended();
    }
    if (end.code === undefined) {
      try {
        process.kill(bg.pid, "SIGKILL");
      } catch {}
    }
    runs.push({
      args: bg.args,
      code: end.code ?? null,
      stdout: read("out"),
      stderr: read("err"),
      ...(health !== undefined ? { health } : {}),
    });
  }
  return runs;
}

/** A package the user would install (a dev dependency of this repository), linked into a document's folder. */
function linkPackage(name: string, cwd: string) {
  const source = join(REPO, "node_modules", name);
  const target = join(cwd, "node_modules", name);
  if (existsSync(target)) return;
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(source, target, "dir");
  const { bin } = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as {
    bin?: string | Record<string, string>;
  };
  const bins = typeof bin === "string" ? { [name.split("/").pop()!]: bin } : (bin ?? {});
  for (const [command, file] of Object.entries(bins)) {
    const link = join(cwd, "node_modules", ".bin", command);
    if (!existsSync(link)) symlinkSync(join(source, file), link);
  }
}

export async function runBlock(block: DocBlock, cwd: string, world: DocsWorld): Promise<BlockResult> {
  const values: Record<string, string> = { ...world.placeholders, port: String(await freePort()) };
  const scratch: { drop(): Promise<void> }[] = [];
  const state = join(cwd, ".docs-test", `${block.line}`);
  mkdirSync(state, { recursive: true });
  try {
    if (block.postgres) {
      const db = await world.scratchPostgres();
      scratch.push(db);
      values.postgres = db.url;
      values.postgres_index = await world.postgresIndex();
    }
    const env: Record<string, string> = {
      ...world.env,
      CHAINMAIL_PORT: values.port!,
      DOCS_TEST_STATE: state,
    };
    for (const [name, value] of Object.entries(block.env)) env[name] = prepare(expand(value, values), block, values);
    const code = prepare(block.kind === "shell" ? shellScript(block) : block.code, block, values);
    for (const name of block.packages) linkPackage(name, cwd);

    if (block.kind === "file") {
      const target = join(cwd, block.path!);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, `${code}\n`);
      return { code: 0, stdout: "", stderr: "", calls: [], background: [] };
    }
    let result: { code: number | null; stdout: string; stderr: string };
    const started = block.background.map((command) => prepare(command, block, values)).join("\n");
    const before = started ? await exec("bash", ["-euc", started], cwd, env, 180_000) : undefined;
    if (before && before.code !== 0) {
      result = before;
    } else if (block.kind === "shell") {
      const script = join(state, "block.sh");
      writeFileSync(script, `set -euo pipefail\n${code}\n`);
      result = await exec("bash", [script], cwd, env, 180_000);
    } else {
      const ext = block.lang === "ts" || block.lang === "typescript" ? "ts" : "mjs";
      const script = join(cwd, `block-${block.line}.${ext}`);
      writeFileSync(script, `${code}\n`);
      result = await exec(process.execPath, ["--import", TSX, script], cwd, env, 180_000);
    }
    const { calls, background } = readState(state);
    return { ...result, calls, background: await stopBackground(state, background) };
  } finally {
    for (const db of scratch) await db.drop().catch(() => undefined);
  }
}
