/**
 * Copies the SuperRare contracts that test/ingest/venues/superrare.test.ts deploys on anvil out of the build files SuperRare
 * publishes in github.com/superrare/pixura-contracts (contracts/build and contracts/abis: ABI and compiled
 * bytecode of the contracts behind SuperRare's mainnet markets): the original SuperRare token with its own market
 * (0x41a3…850d), SuperRareMarketAuctionV2 (0x65b4…5e2c), SuperRareAuctionHouse (0x8c9f…e656) and the settings and
 * registries they read. Each is written as test/fixtures/superrare/<Name>.json = { contractName, source, abi,
 * bytecode }; only those JSON files are committed. Rerun with the path of a checkout of that repository:
 *
 *   npx tsx scripts/extract-superrare.ts path/to/pixura-contracts
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CONTRACTS: Record<string, string> = {
  SupeRare: "contracts/abis/SupeRare.json",
  SuperRareMarketAuctionV2: "contracts/build/SuperRareMarketAuctionV2.json",
  SuperRareAuctionHouse: "contracts/build/SuperRareAuctionHouse.json",
  MarketplaceSettings: "contracts/build/Marketplace/MarketplaceSettings.json",
  SuperRareRoyaltyRegistry: "contracts/build/SuperRareRoyaltyRegistry.json",
  SuperRareTokenCreatorRegistry: "contracts/build/SuperRareTokenCreatorRegistry.json",
};

const checkout = process.argv[2];
if (!checkout) {
  process.stderr.write("usage: npx tsx scripts/extract-superrare.ts path/to/pixura-contracts\n");
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "test/fixtures/superrare");
mkdirSync(outDir, { recursive: true });
const commit = execFileSync("git", ["-C", checkout, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
for (const [name, path] of Object.entries(CONTRACTS)) {
  const built = JSON.parse(readFileSync(join(checkout, path), "utf8")) as {
    abi: unknown[];
    code: { bytecode: string | { object: string } };
  };
  const code = typeof built.code.bytecode === "string" ? built.code.bytecode : built.code.bytecode.object;
  const artifact = {
    contractName: name,
    source: `superrare/pixura-contracts @ ${commit} ${path}`,
    abi: built.abi,
    bytecode: code.startsWith("0x") ? code : `0x${code}`,
  };
  writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
  process.stdout.write(`${name}: ${(artifact.bytecode.length - 2) / 2} bytes\n`);
}
