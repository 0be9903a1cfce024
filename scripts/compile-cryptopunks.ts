/**
 * Builds the CryptoPunks market that test/ingest/venues/cryptopunks.test.ts deploys on anvil: Larva Labs' published
 * source (CryptoPunksMarket.sol of github.com/larvalabs/cryptopunks, MIT, the code deployed at 0xb47e…3bbb, bug
 * included), compiled with solc 0.4.26 (its `pragma solidity ^0.4.8`), and written as
 * test/fixtures/cryptopunks/CryptoPunksMarket.json = { contractName, source, compiler, abi, bytecode }. Only that
 * JSON is committed, not the source. The 0.4 compiler is the `solc@0.4.26` npm package's soljson.js, fetched with
 * `npm pack` into a temporary folder and driven by this project's `solc` wrapper. Rerun with the path of the
 * source file:
 *
 *   npx tsx scripts/compile-cryptopunks.ts path/to/CryptoPunksMarket.sol
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const wrapper = require("solc/wrapper") as (soljson: unknown) => {
  version(): string;
  compile(input: string): string;
};

const SOURCE = "larvalabs/cryptopunks @ 11532167fa705ced569fc3206df0484f9027e1ee contracts/CryptoPunksMarket.sol (MIT)";
const COMPILER = "solc@0.4.26";
const OPTIMIZER_RUNS = 200;

const sourcePath = process.argv[2];
if (!sourcePath) {
  process.stderr.write("usage: npx tsx scripts/compile-cryptopunks.ts path/to/CryptoPunksMarket.sol\n");
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const work = mkdtempSync(join(tmpdir(), "cryptopunks-"));
try {
  const tarball = execFileSync("npm", ["pack", COMPILER, "--silent", "--pack-destination", work], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  execFileSync("tar", ["xzf", join(work, tarball), "-C", work]);
  const solc = wrapper(require(join(work, "package", "soljson.js")));
  const input = {
    language: "Solidity",
    sources: { "CryptoPunksMarket.sol": { content: readFileSync(sourcePath, "utf8") } },
    settings: {
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const e of errors) process.stderr.write(e.formattedMessage);
  if (errors.length) process.exit(1);
  const compiled = output.contracts["CryptoPunksMarket.sol"]?.CryptoPunksMarket;
  if (!compiled) throw new Error("no contract named CryptoPunksMarket");
  const artifact = {
    contractName: "CryptoPunksMarket",
    source: SOURCE,
    compiler: { solc: solc.version(), optimizerRuns: OPTIMIZER_RUNS },
    abi: compiled.abi,
    bytecode: `0x${compiled.evm.bytecode.object}`,
  };
  writeFileSync(
    join(root, "test/fixtures/cryptopunks/CryptoPunksMarket.json"),
    `${JSON.stringify(artifact, null, 2)}\n`,
  );
  process.stdout.write(`CryptoPunksMarket: ${compiled.evm.bytecode.object.length / 2} bytes\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
