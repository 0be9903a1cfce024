/**
 * Builds the `chainmail` command as a few bundled files in dist/cli (part of `npm run build`).
 *
 * Why: Node's ES module loader pays for every file it resolves and reads, and the light commands (`nodes`, a
 * one-page `run`) need TypeBox (~250 files) and our own ~40: unbundled, loading them took several
 * times longer than the work itself. Bundled, each command loads one entry file and the chunks it imports on demand.
 *
 * Only the packages the light commands load are bundled; every other dependency (Fastify, viem, better-sqlite3,
 * nodemailer…) stays an ordinary import from node_modules, loaded only by the commands that use it (serve, index,
 * demo), so native parts and files a package reads from its own directory keep working.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const BUNDLED = new Set(["commander", "@sinclair/typebox", "lossless-json"]);
const { dependencies } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
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
  external: Object.keys(dependencies).filter((name) => !BUNDLED.has(name)),
  // CommonJS packages in the bundle call `require("node:…")`, which needs a `require` in an ES module.
  banner: {
    js: `import { createRequire as createRequireForBundle } from "node:module"; const require = createRequireForBundle(import.meta.url);`,
  },
  logLevel: "warning",
});
