/**
 * Copies the Rarible v1 exchange that test/ingest/venues/rarible.test.ts deploys on anvil out of the compiled artifacts
 * Rarible keeps in github.com/rarible/protocol-contracts (projects/deploy/build/contracts, Truffle builds of
 * ExchangeV1, the contract behind 0xcd4e…5b06, with solc 0.5.17) together with the state and order-holder
 * contracts it is built with. Each is written as test/fixtures/rarible/<Name>.json = { contractName, source,
 * compiler, abi, bytecode }; only those JSON files are committed. Rerun with the path of a checkout of that
 * repository at a commit that holds those files (fd976d97, 2025-04-24, put them back):
 *
 *   npx tsx scripts/extract-rarible-v1.ts path/to/protocol-contracts
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CONTRACTS = ["ExchangeV1", "ExchangeStateV1", "ExchangeOrdersHolderV1", "TransferProxyForDeprecated"];
const BUILD = "projects/deploy/build/contracts";

const checkout = process.argv[2];
if (!checkout) {
  process.stderr.write("usage: npx tsx scripts/extract-rarible-v1.ts path/to/protocol-contracts\n");
  process.exit(2);
}
const outDir = join(resolve(dirname(fileURLToPath(import.meta.url)), ".."), "test/fixtures/rarible");
mkdirSync(outDir, { recursive: true });
const commit = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
for (const name of CONTRACTS) {
  const path = `${BUILD}/${name}.json`;
  const built = JSON.parse(readFileSync(join(checkout, path), "utf8")) as {
    abi: unknown[];
    bytecode: string;
    compiler: { version: string };
  };
  const artifact = {
    contractName: name,
    source: `rarible/protocol-contracts @ ${commit} ${path}`,
    compiler: { solc: built.compiler.version },
    abi: built.abi,
    bytecode: built.bytecode,
  };
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  process.stdout.write(`${name}: ${(built.bytecode.length - 2) / 2} bytes\n`);
}
