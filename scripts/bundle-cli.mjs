/**
 * Builds the `chainmail` command as a few bundled files in dist/cli (part of `npm run build`).
 *
 * Why: Node's ES module loader pays for every file it resolves and reads, and the light commands (`nodes`, a
 * one-page `run`) need TypeBox (~250 files) and our own ~40: unbundled, loading them took several
 * times longer than the work itself. Bundled, each command loads one entry file and the chunks it imports on demand.
 *
 * Only the packages the light commands load are bundled; every other package (Fastify, nodemailer, and the optional
 * better-sqlite3 and viem…) stays an ordinary import from node_modules, loaded only by the commands that use it (serve, index,
 * demo), so native parts and files a package reads from its own directory keep working.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const BUNDLED = new Set(["commander", "@sinclair/typebox", "lossless-json"]);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
// Every package the CLI may import stays outside the bundle but the few above: runtime dependencies, and the optional
// peers (better-sqlite3, the demo's chain tooling) that are dev dependencies in this repository.
const external = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.devDependencies }).filter(
  (name) => !BUNDLED.has(name),
);
const outdir = join(root, "dist", "cli");

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [join(root, "src", "cli", "main.ts")],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.18",
  // Chunks sit beside main.js, two levels below the package root like every module of dist/: some find package
  // files relative to themselves (package.json, migrations/).
  chunkNames: "[name]-[hash]",
  external,
  // CommonJS packages in the bundle call `require("node:…")`, which needs a `require` in an ES module.
  banner: {
    js: `import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);`,
  },
  logLevel: "warning",
});
