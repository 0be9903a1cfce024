/**
 * n8n's community-package scanner (@n8n/scan-community-package's analyzePackage) on an unpacked tarball: what
 * n8n checks before it lists a package. Loaded from the runtimes cache (N8N_TOOLS).
 *   node scripts/ci/scan-n8n-package.mjs <unpacked package folder>
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const tools = process.env.N8N_TOOLS;
if (!tools) throw new Error("N8N_TOOLS is not set: run through scripts/ci/workflow-tests.sh");
const scanner = join(tools, "node_modules", "@n8n", "scan-community-package", "scanner", "scanner.mjs");
const { analyzePackage } = await import(pathToFileURL(scanner).href);
const result = await analyzePackage(process.argv[2]);
if (!result.passed) {
  console.error(`n8n's scanner refused the package: ${result.message}`);
  if (result.details) console.error(result.details);
  process.exit(1);
}
console.log("n8n's scanner: the packed n8n-nodes-chainmail passes");
