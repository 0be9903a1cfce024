/**
 * The package as a user gets it, by the route README.md gives until it is on npm: in the clone, `npm pack` (which
 * builds), then `npm install <tarball>` in the user's project, from the npm cache (`--prefer-offline`), and the
 * installed copy used as a user would — library, `chainmail index`, `chainmail serve`, `chainmail demo` — with
 * nothing of this repository on its module path; the workflow packages' tarballs likewise into Node-RED's and n8n's
 * folders. The README's blocks run as written, in a home folder of their own (`~/chainmail` is this clone).
 * `npm run test:install` (CI runs it under Node 24, the current LTS).
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DocBlock, extractBlocks } from "../support/docs-blocks.js";
import { type Anvil, address, erc721Transfer, installEmitters, startAnvil } from "../support/index-helpers.js";
import { call } from "../support/server-helpers.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const semver = createRequire(import.meta.url)("semver") as { subset(sub: string, sup: string): boolean };
/** Whether this Node has SQLite built in (22.13 and later); without it, chainmail needs better-sqlite3. */
const nodeHasSqlite = process.getBuiltinModule?.("node:sqlite") !== undefined;
const MiB = 1024 * 1024;
const NFT = address(0x721);
/** Scripts npm runs when a package is installed: a tarball carrying one makes npm warn (or run it). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"];
const WORKFLOW_PACKAGES = ["node-red-contrib-chainmail", "n8n-nodes-chainmail"];

/** The blocks this test runs, of README.md and the workflow packages' READMEs: their `skip` marker names this file. */
const readmeBlocks = ["README.md", ...WORKFLOW_PACKAGES.map((name) => `packages/${name}/README.md`)].flatMap((file) =>
  extractBlocks(readFileSync(join(root, file), "utf8"), file).filter((block) =>
    block.skip?.includes("test/install/tarball.test.ts"),
  ),
);
const packBlock = readmeBlocks.find((b) => b.code.includes(`npm install ~/chainmail/${pkg.name}-`));
const workflowBlocks = readmeBlocks.filter((b) => b !== packBlock);

/** The tarballs the README's `npm pack` lines write into the clone (removed afterwards). */
const tarballs = [pkg.name, ...WORKFLOW_PACKAGES].map((name) => {
  const { version } = JSON.parse(
    readFileSync(join(root, name === pkg.name ? "" : join("packages", name), "package.json"), "utf8"),
  );
  return join(root, `${name}-${version}.tgz`);
});

let dir: string;
let app: string;
let installLog: string;
let anvil: Anvil;
let blockEnv: Record<string, string>;

/** Runs a README block with bash as pasted, from the home folder; its output, failing on a non-zero exit. */
async function runReadmeBlock(block: DocBlock | undefined) {
  if (!block) throw new Error("README.md has no such block (its marker must name test/install/tarball.test.ts)");
  const script = join(dir, `${block.file.replaceAll("/", "_")}-${block.line}.sh`);
  writeFileSync(script, `set -euo pipefail\n${block.code}\n`);
  try {
    return await run("bash", [script], { cwd: dir, env: blockEnv, timeout: 600_000, maxBuffer: 16 * MiB });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${block.file}:${block.line} failed:\n${block.code}\n${stdout ?? ""}\n${stderr ?? ""}`);
  }
}

let packed: { stdout: string; stderr: string };
let workflowInstall = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "chainmail-install-"));
  // The blocks' home: ~/chainmail is this clone, ~/my-project an empty project. npm keeps its cache and settings.
  const npmConfig = async (key: string) => (await run("npm", ["config", "get", key], { cwd: root })).stdout.trim();
  blockEnv = {
    ...(process.env as Record<string, string>),
    HOME: dir,
    npm_config_cache: await npmConfig("cache"),
    npm_config_userconfig: await npmConfig("userconfig"),
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  symlinkSync(root, join(dir, "chainmail"), "dir");
  app = join(dir, "my-project");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "my-project", private: true, type: "module" }));
  packed = await runReadmeBlock(packBlock);
  installLog = packed.stderr;
  for (const block of workflowBlocks) workflowInstall += (await runReadmeBlock(block)).stderr;
  anvil = await startAnvil();
  await installEmitters(anvil, [NFT]);
  await erc721Transfer(anvil, NFT, address(0), address(0xa11ce), 1);
  await erc721Transfer(anvil, NFT, address(0xa11ce), address(0xb0b), 1);
});

afterAll(async () => {
  await anvil?.stop();
  for (const tarball of tarballs) rmSync(tarball, { force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs the installed `chainmail` (its bin link), with only PATH and `env` in its environment. */
function chainmail(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(app, "node_modules", ".bin", "chainmail"), ...args],
      { cwd: app, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** The installed tree as npm recorded it (node_modules/.package-lock.json). */
const installed = (): Record<string, { version: string; engines?: { node?: string }; hasInstallScript?: boolean }> =>
  JSON.parse(readFileSync(join(app, "node_modules", ".package-lock.json"), "utf8")).packages;

describe("README.md's route: npm pack in the clone, npm install <tarball> in a project", () => {
  it("runs as pasted: the tarball installs and `npx chainmail nodes` lists the nodes", () => {
    // README.md's two, and one in each workflow package's README.
    expect(readmeBlocks.map((b) => b.file)).toEqual([
      "README.md",
      "README.md",
      ...WORKFLOW_PACKAGES.map((name) => `packages/${name}/README.md`),
    ]);
    for (const tarball of tarballs) expect(existsSync(tarball), tarball).toBe(true);
    expect(packed.stdout).toContain("nft-transactions-by-contract");
    expect(packed.stdout).toContain("email-send");
  });

  it("installs a package.json with no install-time script: npm neither warns nor runs one", () => {
    const installedPkg = JSON.parse(readFileSync(join(app, "node_modules", "chainmail", "package.json"), "utf8"));
    expect(INSTALL_SCRIPTS.filter((name) => Object.hasOwn(installedPkg.scripts ?? {}, name))).toEqual([]);
    expect(installLog).not.toMatch(/install.scripts/i);
  });

  it("stays within 60 MiB and leaves the demo's chain tooling and better-sqlite3 out", async () => {
    const { stdout } = await run("du", ["-s", "--apparent-size", "--block-size=1", join(app, "node_modules")]);
    const bytes = Number(stdout.split("\t")[0]);
    console.log(`installed: ${(bytes / MiB).toFixed(1)} MiB, ${Object.keys(installed()).length} packages`);
    expect(bytes).toBeGreaterThan(MiB);
    expect(bytes).toBeLessThanOrEqual(60 * MiB);
    const names = Object.keys(installed()).map((path) => path.replace(/^.*node_modules\//, ""));
    expect(names).toContain("chainmail");
    for (const optional of ["viem", "@foundry-rs/anvil", "@opensea/seaport-js", "ethers", "better-sqlite3"]) {
      expect(names).not.toContain(optional);
    }
  });

  it("runs no install script: nothing is compiled or downloaded at install", () => {
    const withScripts = Object.entries(installed()).filter(([, entry]) => entry.hasInstallScript);
    expect(withScripts.map(([path]) => path)).toEqual([]);
    expect(installLog).not.toMatch(/gyp|EBADENGINE/);
  });

  it("pulls only packages that support the Node versions chainmail's engines declares", () => {
    const needMore = Object.entries(installed())
      .filter(([, entry]) => entry.engines?.node && !semver.subset(pkg.engines.node, entry.engines.node))
      .map(([path, entry]) => `${path.replace(/^.*node_modules\//, "")}@${entry.version}: ${entry.engines?.node}`);
    expect(needMore).toEqual([]);
  });

  it("carries the LICENSE", () => {
    expect(readFileSync(join(app, "node_modules", "chainmail", "LICENSE"), "utf8")).toMatch(/^MIT License/);
  });
});

describe("README.md's route for the workflow packages: their tarballs into Node-RED's and n8n's folders", () => {
  const hosts = {
    "node-red-contrib-chainmail": () => join(dir, ".node-red"),
    "n8n-nodes-chainmail": () => join(dir, ".n8n", "nodes"),
  } as const;

  it.each(WORKFLOW_PACKAGES)("%s installs alone: chainmail inside it, nothing fetched, no install script", (name) => {
    const folder = hosts[name as keyof typeof hosts]();
    const tree = JSON.parse(readFileSync(join(folder, "node_modules", ".package-lock.json"), "utf8"))
      .packages as Record<string, { hasInstallScript?: boolean }>;
    expect(Object.keys(tree), workflowInstall).toEqual([`node_modules/${name}`]);
    expect(tree[`node_modules/${name}`]!.hasInstallScript).toBeUndefined();
    const manifest = JSON.parse(readFileSync(join(folder, "node_modules", name, "package.json"), "utf8"));
    expect(INSTALL_SCRIPTS.filter((script) => Object.hasOwn(manifest.scripts ?? {}, script))).toEqual([]);
    // Every file the host loads is there, built.
    const entries: string[] =
      name === "node-red-contrib-chainmail"
        ? Object.values(manifest["node-red"].nodes)
        : [...manifest.n8n.nodes, ...manifest.n8n.credentials];
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(existsSync(join(folder, "node_modules", name, entry)), entry).toBe(true);
  });
});

describe("the installed package", () => {
  it("`chainmail demo` says exactly what to install for its chain, and starts nothing", async () => {
    const out = await chainmail(["demo", "--data-dir", join(dir, "demo")]);
    expect(out.code).toBe(1);
    const peers = pkg.peerDependencies;
    expect(out.stderr).toContain(
      `npm install viem@${peers.viem} @foundry-rs/anvil@${peers["@foundry-rs/anvil"]} @opensea/seaport-js@${peers["@opensea/seaport-js"]}\n`,
    );
    expect(out.stdout).toBe("");
  });

  it("without a SQLite library, `chainmail index` says what to install", async () => {
    const db = join(dir, "no-driver.sqlite");
    // On a Node with node:sqlite, asking for better-sqlite3 (not installed) shows the same kind of message.
    const env: Record<string, string> = nodeHasSqlite ? { CHAINMAIL_SQLITE_DRIVER: "better-sqlite3" } : {};
    const out = await chainmail(["index", "--rpc", anvil.rpcUrl, "--db", db, "--contracts", NFT, "--once"], env);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("better-sqlite3 is not installed");
    expect(out.stderr).toContain("npm install better-sqlite3@^12");
  });

  describe("with SQLite", () => {
    const db = () => join(dir, "data", "index.sqlite");

    beforeAll(() => {
      if (nodeHasSqlite) return;
      // Node 20: the user installs better-sqlite3 as told above; the repository's copy is built for this Node.
      for (const name of ["better-sqlite3", "bindings", "file-uri-to-path"]) {
        cpSync(join(root, "node_modules", name), join(app, "node_modules", name), { recursive: true });
      }
    });

    it("`chainmail index` builds an index from a node", async () => {
      const out = await chainmail(["index", "--rpc", anvil.rpcUrl, "--db", db(), "--contracts", NFT, "--once"]);
      expect(out.stderr).toBe("");
      const result = JSON.parse(out.stdout);
      expect(result).toMatchObject({ db: db(), last_block: 2, records: 2, unknown_logs: 0 });
      // What the run spent at the node: a plain node is not metered, so its usage is counted in requests.
      expect(result.rpc).toMatchObject({ rate_unit: "requests", throttled_share: 0 });
      expect(result.rpc.calls.eth_getLogs).toBeGreaterThan(0);
    });

    it('the library reads it (`import … from "chainmail"`)', async () => {
      const script = join(app, "read.mjs");
      writeFileSync(
        script,
        `import { close, loadConfig, nftTransactionsByContract, runNode } from "chainmail";
const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: process.argv[2] });
const out = await runNode(nftTransactionsByContract, { query: { contract_address: "${NFT}" }, params: {} }, { config });
await close();
console.log(JSON.stringify(out.data.transactions.map((t) => [t.type, String(t.token_id)])));`,
      );
      const { stdout } = await run(process.execPath, [script, db()], { cwd: app });
      expect(JSON.parse(stdout)).toEqual([
        ["transfer", "1"],
        ["mint", "1"],
      ]);
    });

    it("`chainmail serve` answers from it over HTTP", async () => {
      const child = spawn(process.execPath, [join(app, "node_modules", ".bin", "chainmail"), "serve", "--port", "0"], {
        cwd: app,
        env: { PATH: process.env.PATH ?? "", NFT_SOURCE: "index", INDEX_DB: db() },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      try {
        while (!/listening on (http:\S+)/.test(stderr) && child.exitCode === null) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        const url = /listening on (http:\S+)/.exec(stderr)?.[1];
        expect(url, stderr).toBeDefined();
        const res = await call(`${url}/nodes/nft-transactions-by-contract`, "POST", {
          query: { contract_address: NFT },
          params: {},
        });
        expect(res.status).toBe(200);
        expect(res.body.data.transactions.map((t: { type: string }) => t.type)).toEqual(["transfer", "mint"]);
        const docs = await call(`${url}/openapi.json`, "GET");
        expect(docs.body.info.license.name).toBe("MIT");
      } finally {
        child.kill("SIGTERM");
        await once(child, "exit");
      }
    });
  });
});
