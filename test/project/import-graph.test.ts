/**
 * The shape of src's imports: no file reaches itself again through its imports (static, type-only and dynamic
 * `import()` alike), and the layers keep the directions that keep them easy to change: `schemas` imports none of
 * the others; `core` only `schemas`; `chain` only `core` and `schemas`; `sources` and `transports` never import
 * `nodes`, `cli` or `server`; `ingest` and `mail` never import `nodes`, `cli`, `server` or `watch`; `nodes` never
 * import `cli` or `server`. The folders split by job (`chain`, `ingest`, `sources/own-index`) are reached from
 * outside through their face (`index.ts`) alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const SRC = resolve(import.meta.dirname, "../../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The src files each src file imports, keyed and valued by paths relative to src. */
function importGraph(): { graph: Map<string, string[]>; unresolved: string[] } {
  const files = sourceFiles(SRC);
  const known = new Set(files.map((f) => relative(SRC, f)));
  const graph = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    // preProcessFile reads `import`, `export … from`, `import()` (also in type positions) and `require()`.
    const { importedFiles } = ts.preProcessFile(text, true, true);
    const from = relative(SRC, file);
    const targets = new Set<string>();
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith(".")) continue;
      const target = relative(SRC, resolve(dirname(file), fileName)).replace(/\.js$/, ".ts");
      if (known.has(target)) targets.add(target);
      else if (known.has(join(target, "index.ts"))) targets.add(join(target, "index.ts"));
      else if (!/\.(json|sol)$/.test(fileName)) unresolved.push(`${from} → ${fileName}`);
    }
    // A dynamic import whose module is an expression cannot be followed: refuse it, so no cycle hides behind one.
    for (const match of text.matchAll(/\bimport\(\s*(?!["'`])/g))
      unresolved.push(`${from}: import() at ${match.index}`);
    graph.set(from, [...targets].sort());
  }
  return { graph, unresolved };
}

/** Every cycle's files, found by depth-first search (each cycle reported once, from its first file met). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

const layer = (file: string) => file.split("/")[0] ?? file;

/** Which top-level folders of src a folder must never import (the directions docs/architecture.md states). */
const FORBIDDEN: Record<string, (to: string) => boolean> = {
  schemas: (to) => to !== "schemas",
  core: (to) => !["core", "schemas"].includes(to),
  chain: (to) => !["chain", "core", "schemas"].includes(to),
  ingest: (to) => ["nodes", "cli", "server", "watch"].includes(to),
  sources: (to) => ["nodes", "cli", "server"].includes(to),
  transports: (to) => ["nodes", "cli", "server"].includes(to),
  nodes: (to) => ["cli", "server"].includes(to),
  mail: (to) => ["nodes", "cli", "server", "watch"].includes(to),
};

/** Folders whose files the rest of src reaches only through the folder's face, its `index.ts`. */
const FACED = ["chain", "ingest", "sources/own-index"];

/** Each import from outside a faced folder into one of its files other than its face. */
function pastFaces(graph: Map<string, string[]>, folders: readonly string[]): string[] {
  const folderOf = (file: string) => folders.find((folder) => file.startsWith(`${folder}/`));
  const breaches: string[] = [];
  for (const [from, targets] of graph)
    for (const to of targets) {
      const folder = folderOf(to);
      if (folder && folderOf(from) !== folder && to !== `${folder}/index.ts`) breaches.push(`${from} → ${to}`);
    }
  return breaches;
}

describe("src's imports", () => {
  const { graph, unresolved } = importGraph();

  it("finds the files and their imports", () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get("index.ts")?.length).toBeGreaterThan(5);
    expect(unresolved).toEqual([]);
  });

  it("contain no cycle, dynamic imports included", () => {
    expect(cycles(graph).map((c) => c.join(" → "))).toEqual([]);
  });

  it("keep the layer directions", () => {
    const breaches: string[] = [];
    for (const [from, targets] of graph) {
      const forbidden = FORBIDDEN[layer(from)];
      if (!forbidden) continue;
      for (const to of targets) if (forbidden(layer(to)) && layer(to) !== layer(from)) breaches.push(`${from} → ${to}`);
    }
    expect(breaches).toEqual([]);
  });

  it("reach the chain, the ingestion and the own index through their faces alone", () => {
    for (const folder of FACED) expect(graph.has(`${folder}/index.ts`)).toBe(true);
    expect(pastFaces(graph, FACED)).toEqual([]);
  });

  it("finds an import past a face when there is one (the check itself can fail)", () => {
    const sample = new Map([
      ["a/index.ts", ["a/inner.ts"]],
      ["a/inner.ts", ["b/index.ts"]],
      ["b/inner.ts", []],
      ["c.ts", ["a/index.ts", "b/inner.ts"]],
    ]);
    expect(pastFaces(sample, ["a", "b"])).toEqual(["c.ts → b/inner.ts"]);
  });

  it("finds a cycle when there is one (the walker itself can fail)", () => {
    const sample = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts"]],
      ["d.ts", ["a.ts"]],
    ]);
    expect(cycles(sample)).toEqual([["a.ts", "b.ts", "c.ts", "a.ts"]]);
  });
});
