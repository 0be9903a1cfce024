/**
 * Builds the Foundation contracts that test/ingest/venues/foundation.test.ts deploys on anvil from Foundation's published
 * source (github.com/f8n/fnd-protocol, the NFTMarket behind 0xcda7…0b6f, its FETH and treasury), compiled as
 * Foundation's hardhat config does (solc 0.8.17, optimizer 1337 runs) with the OpenZeppelin 4.7.3 and Manifold
 * royalty registry 1.0.9 packages it pins; the royalty registry itself is copied as Manifold built it
 * (`@manifoldxyz/royalty-registry-solidity` build/contracts, as Foundation's config imports it). Each is written as
 * test/fixtures/foundation/<Name>.json = { contractName, source, compiler, abi, bytecode }; only those JSON files
 * are committed. The compiler and packages are fetched with `npm pack` into a temporary folder. Rerun with the path
 * of a checkout of that repository:
 *
 *   npx tsx scripts/compile-foundation.ts path/to/fnd-protocol
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wrapper = require("solc/wrapper") as (soljson: unknown) => {
  version(): string;
  compile(input: string, options?: object): string;
};

const COMPILER = "solc@0.8.17";
const PACKAGES = [
  "@openzeppelin/contracts@4.7.3",
  "@openzeppelin/contracts-upgradeable@4.7.3",
  "@manifoldxyz/royalty-registry-solidity@1.0.9",
];
const ROYALTY_REGISTRY = "@manifoldxyz/royalty-registry-solidity@1.0.9";
const OPTIMIZER_RUNS = 1337;
const CONTRACTS: Record<string, string> = {
  NFTMarket: "contracts/NFTMarket.sol",
  FETH: "contracts/FETH.sol",
  FoundationTreasury: "contracts/FoundationTreasury.sol",
};

const checkout = process.argv[2];
if (!checkout) {
  process.stderr.write("usage: npx tsx scripts/compile-foundation.ts path/to/fnd-protocol\n");
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "test/fixtures/foundation");
const work = mkdtempSync(join(tmpdir(), "foundation-"));

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
const write = (artifact: { contractName: string; bytecode: string }) => {
  writeFileSync(join(outDir, `${artifact.contractName}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  process.stdout.write(`${artifact.contractName}: ${(artifact.bytecode.length - 2) / 2} bytes\n`);
};

try {
  const commit = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  const roots: Record<string, string> = {};
  for (const spec of PACKAGES) roots[`${spec.slice(0, spec.lastIndexOf("@"))}/`] = `${unpack(spec)}/`;
  const read = (path: string) => {
    const prefix = Object.keys(roots).find((p) => path.startsWith(p));
    return readFileSync(prefix ? roots[prefix] + path.slice(prefix.length) : join(checkout, path), "utf8");
  };
  const solc = wrapper(require(join(unpack(COMPILER), "soljson.js")));
  const input = {
    language: "Solidity",
    sources: Object.fromEntries(Object.values(CONTRACTS).map((file) => [file, { content: read(file) }])),
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
  for (const [name, file] of Object.entries(CONTRACTS)) {
    const compiled = output.contracts[file]?.[name];
    if (!compiled) throw new Error(`${file} has no contract named ${name}`);
    write({
      contractName: name,
      source: `f8n/fnd-protocol @ ${commit} ${file} (with ${PACKAGES.join(", ")})`,
      compiler: { solc: solc.version(), optimizerRuns: OPTIMIZER_RUNS },
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
    } as never);
  }
  const built = JSON.parse(
    readFileSync(
      join(roots["@manifoldxyz/royalty-registry-solidity/"]!, "build/contracts/RoyaltyRegistry.json"),
      "utf8",
    ),
  ) as { abi: unknown[]; bytecode: string };
  write({
    contractName: "RoyaltyRegistry",
    source: `${ROYALTY_REGISTRY} build/contracts/RoyaltyRegistry.json`,
    abi: built.abi,
    bytecode: built.bytecode,
  } as never);
} finally {
  rmSync(work, { recursive: true, force: true });
}
