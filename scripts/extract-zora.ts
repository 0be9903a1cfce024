/**
 * Copies the Zora contracts that test/ingest/venues/zora.test.ts deploys on anvil out of the packages Zora publishes on npm,
 * compiled as Zora built them: the v3 modules and their plumbing from `@zoralabs/v3` (dist/artifacts) and the
 * Auction House from `@zoralabs/auction-house` (dist/artifacts). Each is written as
 * test/fixtures/zora/<Name>.json = { contractName, source, abi, bytecode }; only those JSON files are committed.
 * The packages are fetched with `npm pack` into a temporary folder. Rerun to rebuild:
 *
 *   npx tsx scripts/extract-zora.ts
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const V3 = "@zoralabs/v3@1.0.13";
const AUCTION_HOUSE = "@zoralabs/auction-house@1.1.3";
/** Contract name → package and artifact path inside its dist/artifacts. */
const CONTRACTS: Record<string, [string, string]> = {
  ZoraRegistrar: [V3, "ZoraRegistrar.sol/ZoraRegistrar.json"],
  ZoraProtocolFeeSettings: [V3, "ZoraProtocolFeeSettings.sol/ZoraProtocolFeeSettings.json"],
  ZoraModuleManager: [V3, "ZoraModuleManager.sol/ZoraModuleManager.json"],
  ERC20TransferHelper: [V3, "ERC20TransferHelper.sol/ERC20TransferHelper.json"],
  ERC721TransferHelper: [V3, "ERC721TransferHelper.sol/ERC721TransferHelper.json"],
  RoyaltyEngine: [V3, "RoyaltyEngine.sol/RoyaltyEngine.json"],
  AsksV1_1: [V3, "AsksV1_1.sol/AsksV1_1.json"],
  OffersV1: [V3, "OffersV1.sol/OffersV1.json"],
  AsksCoreEth: [V3, "AsksCoreEth.sol/AsksCoreEth.json"],
  AsksPrivateEth: [V3, "AsksPrivateEth.sol/AsksPrivateEth.json"],
  WETH: [V3, "WETH.sol/WETH.json"],
  AuctionHouse: [AUCTION_HOUSE, "AuctionHouse.sol/AuctionHouse.json"],
};

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = join(root, "test/fixtures/zora");
const work = mkdtempSync(join(tmpdir(), "zora-"));

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
  mkdirSync(outDir, { recursive: true });
  const packages = new Map([V3, AUCTION_HOUSE].map((spec) => [spec, unpack(spec)]));
  for (const [name, [spec, path]] of Object.entries(CONTRACTS)) {
    const built = JSON.parse(readFileSync(join(packages.get(spec)!, "dist/artifacts", path), "utf8")) as {
      abi: unknown[];
      bytecode: string | { object: string };
    };
    const code = typeof built.bytecode === "string" ? built.bytecode : built.bytecode.object;
    const artifact = {
      contractName: name,
      source: `${spec} dist/artifacts/${path}`,
      abi: built.abi,
      bytecode: code.startsWith("0x") ? code : `0x${code}`,
    };
    writeFileSync(join(outDir, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    process.stdout.write(`${name}: ${(artifact.bytecode.length - 2) / 2} bytes\n`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
