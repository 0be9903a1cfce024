/**
 * Builds the Rarible contracts that test/ingest/venues/rarible.test.ts deploys on anvil from Rarible's published source
 * (github.com/rarible/protocol-contracts, the monorepo whose `projects/` hold the `@rarible/*` packages):
 * ExchangeV2 (the implementation behind 0x9757…8cd6), its transfer proxies, the royalties registry and Rarible's
 * ERC-721 token with lazy minting. Compiled as Rarible's hardhat config does (solc 0.7.6, optimizer 200 runs), with
 * the OpenZeppelin 3.4.0 packages it pins, and written as test/fixtures/rarible/<Name>.json = { contractName,
 * source, compiler, abi, bytecode }; only those JSON files are committed. solc 0.7.6 and OpenZeppelin are fetched
 * with `npm pack` into a temporary folder. Rerun with the path of a checkout of that repository:
 *
 *   npx tsx scripts/compile-rarible.ts path/to/protocol-contracts
 *
 * With `legacy` after the path, only ExchangeV2 is built, written as ExchangeV2Legacy.json: check the repository
 * out at db9a9df1 (2022-03-10), the last version whose `Match` names the makers and asset types, as mainnet's
 * logged until September 2022 (the packages then sat at the top of the repository, not under projects/).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wrapper = require("solc/wrapper") as (soljson: unknown) => {
  version(): string;
  compile(input: string, options?: object): string;
};

const COMPILER = "solc@0.7.6";
const OPENZEPPELIN = ["@openzeppelin/contracts@3.4.0", "@openzeppelin/contracts-upgradeable@3.4.0"];
const OPTIMIZER_RUNS = 200;
/** Contract name → its file, by package. */
const CONTRACTS: Record<string, string> = {
  ExchangeV2: "@rarible/exchange-v2/contracts/ExchangeV2.sol",
  TransferProxy: "@rarible/transfer-proxy/contracts/proxy/TransferProxy.sol",
  ERC20TransferProxy: "@rarible/transfer-proxy/contracts/proxy/ERC20TransferProxy.sol",
  ERC721LazyMintTransferProxy: "@rarible/transfer-proxy/contracts/lazy-mint/erc721/ERC721LazyMintTransferProxy.sol",
  RoyaltiesRegistry: "@rarible/royalties-registry/contracts/RoyaltiesRegistry.sol",
  ERC721RaribleMinimal: "@rarible/tokens/contracts/erc-721-minimal/ERC721RaribleMinimal.sol",
};

const [checkout, mode] = process.argv.slice(2);
if (!checkout || (mode !== undefined && mode !== "legacy")) {
  process.stderr.write("usage: npx tsx scripts/compile-rarible.ts path/to/protocol-contracts [legacy]\n");
  process.exit(2);
}
const wanted = mode === "legacy" ? { ExchangeV2: CONTRACTS.ExchangeV2! } : CONTRACTS;
const outName = (name: string) => (mode === "legacy" ? `${name}Legacy` : name);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "test/fixtures/rarible");
const work = mkdtempSync(join(tmpdir(), "rarible-"));

/** `npm pack`s a package into its own folder under `work`; returns the unpacked package folder. */
function unpack(spec: string): string {
  const dir = join(work, spec.replace(/[^a-z0-9.]+/gi, "_"));
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", dir], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  execFileSync("tar", ["xzf", join(dir, tarball), "-C", dir]);
  return join(dir, "package");
}

try {
  const commit = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  // Import prefix → folder: each monorepo project under its package name, and the OpenZeppelin packages.
  const roots: Record<string, string> = {};
  for (const parent of [checkout, join(checkout, "projects")]) {
    if (!existsSync(parent)) continue;
    for (const folder of readdirSync(parent)) {
      const manifest = join(parent, folder, "package.json");
      if (!existsSync(manifest)) continue;
      const { name } = JSON.parse(readFileSync(manifest, "utf8")) as { name: string };
      if (name.startsWith("@rarible/")) roots[`${name}/`] = join(parent, folder, "/");
    }
  }
  for (const spec of OPENZEPPELIN) roots[`${spec.slice(0, spec.lastIndexOf("@"))}/`] = `${unpack(spec)}/`;
  const read = (path: string) => {
    const prefix = Object.keys(roots).find((p) => path.startsWith(p));
    return readFileSync(prefix ? roots[prefix] + path.slice(prefix.length) : join(checkout, path), "utf8");
  };
  const solc = wrapper(require(join(unpack(COMPILER), "soljson.js")));
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.values(wanted).map((file) => [file, { content: read(file) }])),
    settings: {
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const findImports = (path: string) => {
    try {
      return { contents: read(path) };
    } catch {
      return { error: `not found: ${path}` };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const e of errors) process.stderr.write(e.formattedMessage);
  if (errors.length) process.exit(1);
  mkdirSync(outDir, { recursive: true });
  for (const [name, file] of Object.entries(wanted)) {
    const compiled = output.contracts[file]?.[name];
    if (!compiled) throw new Error(`${file} has no contract named ${name}`);
    const artifact = {
      contractName: outName(name),
      source: `rarible/protocol-contracts @ ${commit} ${file} (with ${OPENZEPPELIN.join(", ")})`,
      compiler: { solc: solc.version(), optimizerRuns: OPTIMIZER_RUNS },
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
    };
    writeFileSync(join(outDir, `${outName(name)}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    process.stdout.write(`${outName(name)}: ${compiled.evm.bytecode.object.length / 2} bytes\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
