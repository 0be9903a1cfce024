/**
 * Fenced code blocks of the documentation, with the `<!-- docs-test: … -->` markers written above them
 * (docs/development.md, "Code blocks in the documentation", describes the convention).
 */

/** How a block is treated. */
export type BlockKind = "shell" | "script" | "file" | "shown";

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  kind: BlockKind;
  /** Why the block is not run (`skip`), when it is not. */
  skip?: string;
  /** Extra environment (`env NAME=value …`); `{placeholder}`s are expanded by the runner. */
  env: Record<string, string>;
  /** Text replaced before running (`replace OLD => NEW`): a user's own host, proxy or database. */
  replace: [string, string][];
  /** Where a `file` block is written, relative to the document's working folder. */
  path?: string;
  /** The exit status the block must end with (`exit N`, default 0). */
  exit: number;
  /** The block needs the machine's PostgreSQL (`needs postgres`). */
  postgres: boolean;
  /** Packages the user installs first (`packages NAME …`): the repository's own copies are linked in. */
  packages: string[];
  /** Commands running while the block runs (`background COMMAND`), e.g. the service a client block calls. */
  background: string[];
  /** Problems with the markers themselves (a test failure, never ignored). */
  problems: string[];
}

const SHELL = new Set(["sh", "bash", "shell", "console"]);
const SCRIPT = new Set(["ts", "typescript", "js", "javascript", "mjs"]);
/** Shown, not run: output, diagrams, layouts, other programs' configuration. */
const SHOWN = new Set(["", "text", "json", "jsonl", "http", "diff", "mermaid", "nginx", "yaml", "ini", "toml"]);

const MARKER = /^<!--\s*docs-test:\s*(.*?)\s*-->$/;

/** Every fenced block of a Markdown text. */
export function extractBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    // The language is the info string's first word (```ts title="x" is a `ts` block).
    const open = /^(\s*)(`{3,})\s*([\w+-]*)[^`]*$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      if (line.trim() === fence || (line.trim().startsWith(fence) && line.trim().replaceAll("`", "") === "")) break;
      body.push(line.startsWith(indent) ? line.slice(indent.length) : line.trimStart());
    }
    blocks.push(classify(file, i + 1, lang.toLowerCase(), body.join("\n"), markersAbove(lines, i)));
    i = j;
  }
  return blocks;
}

/** The `docs-test` markers on the lines right above a fence (blank lines between them allowed). */
function markersAbove(lines: string[], fenceIndex: number): string[] {
  const markers: string[] = [];
  for (let k = fenceIndex - 1; k >= 0; k--) {
    const text = lines[k]!.trim();
    if (text === "") continue;
    const m = MARKER.exec(text);
    if (!m) break;
    markers.unshift(m[1]!);
  }
  return markers;
}

function classify(file: string, line: number, lang: string, code: string, markers: string[]): DocBlock {
  const block: DocBlock = {
    file,
    line,
    lang,
    code,
    kind: SHELL.has(lang) ? "shell" : SCRIPT.has(lang) ? "script" : "shown",
    env: {},
    replace: [],
    exit: 0,
    postgres: false,
    packages: [],
    background: [],
    problems: [],
  };
  for (const marker of markers) {
    const [verb = "", ...rest] = marker.split(/\s+/);
    const arg = rest.join(" ");
    if (verb === "skip") {
      if (arg.length < 8) block.problems.push("`skip` needs a reason");
      block.skip = arg;
    } else if (verb === "env") {
      for (const pair of rest) {
        const eq = pair.indexOf("=");
        if (eq <= 0) block.problems.push(`\`env\` takes NAME=value pairs, not ${pair}`);
        else block.env[pair.slice(0, eq)] = pair.slice(eq + 1);
      }
    } else if (verb === "replace") {
      const parts = arg.split(" => ");
      if (parts.length !== 2 || !parts[0]) block.problems.push("`replace` takes OLD => NEW");
      else block.replace.push([parts[0], parts[1]!]);
    } else if (verb === "file") {
      if (!arg || arg.startsWith("/") || arg.includes("..")) block.problems.push("`file` takes a relative path");
      block.kind = "file";
      block.path = arg;
    } else if (verb === "exit") {
      if (!/^\d+$/.test(arg)) block.problems.push("`exit` takes a number");
      block.exit = Number(arg);
    } else if (verb === "needs" && arg === "postgres") {
      block.postgres = true;
    } else if (verb === "packages" && rest.length > 0) {
      block.packages.push(...rest);
    } else if (verb === "background" && arg.startsWith("chainmail ")) {
      block.background.push(arg);
    } else {
      block.problems.push(`unknown marker "docs-test: ${marker}"`);
    }
  }
  if (block.kind === "shown" && !SHOWN.has(lang)) {
    block.problems.push(`a \`${lang}\` block is neither run nor shown: tag it, or mark it docs-test: file / skip`);
  }
  if (block.kind === "shown" && lang !== "json" && looksLikeCommands(code)) {
    block.problems.push("an untagged block that holds commands: tag it ```sh so that it is run");
  }
  return block;
}

/** A block of commands (not output, not a layout): its lines start like the commands the docs show. */
function looksLikeCommands(code: string): boolean {
  return code
    .split("\n")
    .some((line) => /^(\$ )?([A-Z_]+=\S+ )*(chainmail|npx|npm|curl|export) [^\s:]+(\s|$)/.test(line));
}

/** The commands of a block: `console` blocks hold `$ ` prompts and output; the other shells are all commands. */
export function shellScript(block: DocBlock): string {
  if (block.lang !== "console") return block.code;
  const out: string[] = [];
  let continuing = false;
  for (const line of block.code.split("\n")) {
    if (line.startsWith("$ ")) out.push(line.slice(2));
    else if (continuing) out.push(line);
    else continue;
    continuing = line.endsWith("\\");
  }
  return out.join("\n");
}
