/**
 * `npm run bench`: runs every bench/*.bench.ts in turn (or those named on the command line) and prints their
 * figures. Each bench starts its own local upstreams on loopback; nothing leaves the machine.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

console.log(
  `chainmail bench — ${new Date().toISOString()} — node ${process.version}, ${process.platform}/${process.arch}`,
);
for (const file of files) {
  console.log(`\n## ${file}`);
  const mod = (await import(pathToFileURL(join(dir, file)).href)) as { default: () => Promise<void> };
  await mod.default();
}
