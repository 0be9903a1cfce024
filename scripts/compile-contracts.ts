/**
 * Compiles the demo's own Solidity contracts (src/demo/contracts/*.sol) with the `solc` npm package (a bundled
 * wasm compiler: no download) and writes `<Name>.json` = { contractName, abi, bytecode, compiler } beside each
 * source. The JSON is committed, so running the demo needs no compiler; rerun after editing a .sol file:
 *
 *   npx tsx scripts/compile-contracts.ts
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const solc = require("solc") as { version(): string; compile(input: string, options?: object): string };

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const contractsDir = join(root, "src/demo/contracts");
// Seaport 1.6 in @opensea/seaport-js is built for cancun; the demo's own contracts use the same target.
const EVM_VERSION = "cancun";

const sources = Object.fromEntries(
  readdirSync(contractsDir)
    .filter((file) => file.endsWith(".sol"))
    .map((file) => [file, { content: readFileSync(join(contractsDir, file), "utf8") }]),
);

const input = {
  language: "Solidity",
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: EVM_VERSION,
    outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
  },
};

function findImports(path: string): { contents: string } | { error: string } {
  try {
    return { contents: readFileSync(require.resolve(path), "utf8") };
  } catch {
    return { error: `not found: ${path}` };
  }
}

const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as {
  errors?: { severity: string; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
};
const errors = (output.errors ?? []).filter((e) => e.severity === "error");
for (const e of output.errors ?? []) process.stderr.write(e.formattedMessage);
if (errors.length) process.exit(1);

for (const file of Object.keys(sources)) {
  const name = file.replace(/\.sol$/, "");
  const compiled = output.contracts[file]?.[name];
  if (!compiled) throw new Error(`${file} has no contract named ${name}`);
  const artifact = {
    contractName: name,
    compiler: { solc: solc.version(), evmVersion: EVM_VERSION, optimizerRuns: 200 },
    abi: compiled.abi,
    bytecode: `0x${compiled.evm.bytecode.object}`,
  };
  writeFileSync(join(contractsDir, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  process.stdout.write(`${name}: ${compiled.evm.bytecode.object.length / 2} bytes\n`);
}
