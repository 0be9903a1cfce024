/**
 * Functions a reader takes in at once: at most ten functions of the product's code (src and both workflow
 * packages) run over 50 lines, and each that does says why in a comment starting "Long on purpose" just before
 * it (or, for a method, on its doc comment).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..", "..");
const FOLDERS = ["src", "packages/node-red-contrib-chainmail/src", "packages/n8n-nodes-chainmail/nodes"];
const MAX_LINES = 50;
const MAX_LONG = 10;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" || entry.name === "dist" ? [] : sourceFiles(path);
    return /\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

interface LongFunction {
  where: string;
  lines: number;
  /** Whether the comments just before it say why it is long. */
  reasoned: boolean;
}

/** Every function-like body over `MAX_LINES` lines, where it starts, and whether it carries its reason. */
function longFunctions(text: string, file: string): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.end).line;
      if (last - first + 1 > MAX_LINES) {
        // The comments before the declaration (or before the statement holding it: `const f = () => …`).
        const holder = ts.isVariableDeclaration(node.parent) ? node.parent.parent.parent : node;
        const comments = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
        const said = comments.map((c) => text.slice(c.pos, c.end)).join("\n");
        out.push({
          where: `${relative(ROOT, file)}:${first + 1}`,
          lines: last - first + 1,
          reasoned: /Long on purpose/.test(said),
        });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const all = FOLDERS.flatMap((folder) => sourceFiles(join(ROOT, folder))).flatMap((file) =>
  longFunctions(readFileSync(file, "utf8"), file),
);

describe("function length", () => {
  it(`at most ${MAX_LONG} functions run over ${MAX_LINES} lines`, () => {
    expect(all.length, all.map((f) => `${f.where} (${f.lines} lines)`).join("\n")).toBeLessThanOrEqual(MAX_LONG);
  });

  it("each long one says why, in a comment just before it", () => {
    expect(all.filter((f) => !f.reasoned).map((f) => `${f.where} (${f.lines} lines)`)).toEqual([]);
  });

  it("the check finds a long function and its reason (so that it can fail)", () => {
    const body = Array.from({ length: MAX_LINES }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const plain = longFunctions(`function f() {\n${body}\n}\n`, join(ROOT, "x.ts"));
    const said = longFunctions(`// Long on purpose: a test.\nconst g = () => {\n${body}\n};\n`, join(ROOT, "y.ts"));
    expect(plain).toEqual([{ where: "x.ts:1", lines: MAX_LINES + 2, reasoned: false }]);
    expect(said).toEqual([{ where: "y.ts:2", lines: MAX_LINES + 2, reasoned: true }]);
  });
});
