/**
 * Builds the LooksRare v2 exchange that test/ingest/venues/looksrare.v2.test.ts deploys on anvil, from the Solidity
 * sources LooksRare publishes on npm (`@looksrare/contracts-exchange-v2`, with the `@looksrare/contracts-libs`
 * version it pins): fetched with `npm pack` into a temporary folder, compiled with the `solc` npm package, and
 * written as test/fixtures/looksrare-v2/<Name>.json = { contractName, abi, bytecode, compiler, source }.
 * The JSON is committed, so the test needs neither the packages nor a compiler. The sources pin solc 0.8.17
 * exactly; the bundled compiler is newer, so the pin is relaxed to ^0.8.17 at compile time (the code is not
 * touched). Rerun to rebuild:
 *
 *   npx tsx scripts/compile-looksrare-v2.ts
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const solc = require("solc") as { version(): string; compile(input: string, options?: object): string };

const EXCHANGE = "@looksrare/contracts-exchange-v2@0.1.3";
const LIBS = "@looksrare/contracts-libs@3.0.3";
const CONTRACTS = {
  LooksRareProtocol: "contracts/LooksRareProtocol.sol",
  TransferManager: "contracts/TransferManager.sol",
};
const EVM_VERSION = "cancun";
const OPTIMIZER_RUNS = 200;

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "test/fixtures/looksrare-v2");
const work = mkdtempSync(join(tmpdir(), "looksrare-v2-"));

/** `npm pack`s a package into its own folder under `work`; returns the unpacked package folder. */
function unpack(spec: string, name: string): string {
  const dir = join(work, name);
  execFileSync("mkdir", ["-p", dir]);
  const tarball = execFileSync("npm", ["pack", spec, "--silent", "--pack-destination", dir], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop()!;
  execFileSync("tar", ["xzf", join(dir, tarball), "-C", dir]);
  return join(dir, "package");
}

try {
  const roots: Record<string, string> = {
    "@looksrare/contracts-exchange-v2/": `${unpack(EXCHANGE, "exchange")}/`,
    "@looksrare/contracts-libs/": `${unpack(LIBS, "libs")}/`,
  };
  const read = (path: string) => {
    const prefix = Object.keys(roots).find((p) => path.startsWith(p));
    if (!prefix) throw new Error(`not found: ${path}`);
    return readFileSync(roots[prefix] + path.slice(prefix.length), "utf8").replace(
      /pragma solidity 0\.8\.17;/,
      "pragma solidity ^0.8.17;",
    );
  };
  const sources = Object.fromEntries(
    Object.values(CONTRACTS).map((file) => {
      const path = `@looksrare/contracts-exchange-v2/${file}`;
      return [path, { content: read(path) }];
    }),
  );
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: OPTIMIZER_RUNS },
      evmVersion: EVM_VERSION,
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
  for (const [name, file] of Object.entries(CONTRACTS)) {
    const compiled = output.contracts[`@looksrare/contracts-exchange-v2/${file}`]?.[name];
    if (!compiled) throw new Error(`${file} has no contract named ${name}`);
    const artifact = {
      contractName: name,
      source: `${EXCHANGE} ${file} (with ${LIBS})`,
      compiler: { solc: solc.version(), evmVersion: EVM_VERSION, optimizerRuns: OPTIMIZER_RUNS },
      abi: compiled.abi,
      bytecode: `0x${compiled.evm.bytecode.object}`,
    };
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    process.stdout.write(`${name}: ${compiled.evm.bytecode.object.length / 2} bytes\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
