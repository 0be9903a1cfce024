/** How the docs test reads Markdown: fences, `docs-test` markers, and what it refuses (test/support/docs-blocks.ts). */
import { describe, expect, it } from "vitest";
import { extractBlocks, shellScript } from "../support/docs-blocks.js";

const one = (markdown: string) => {
  const blocks = extractBlocks(markdown, "doc.md");
  expect(blocks).toHaveLength(1);
  return blocks[0]!;
};

describe("docs blocks", () => {
  it("reads a fence's language, line and text, also indented in a list", () => {
    const blocks = extractBlocks(
      "# T\n\n```sh\nchainmail nodes\n```\n\n- item\n\n  ```ts\n  const a = 1;\n  ```\n",
      "d.md",
    );
    expect(blocks.map((b) => [b.line, b.lang, b.kind, b.code])).toEqual([
      [3, "sh", "shell", "chainmail nodes"],
      [9, "ts", "script", "const a = 1;"],
    ]);
  });

  it("takes the info string's first word as the language", () => {
    expect(one('```ts title="a.ts"\nconst a = 1;\n```\n').lang).toBe("ts");
  });

  it("takes the markers right above a block, blank lines between them allowed", () => {
    const block = one(
      [
        "<!-- docs-test: env A=1 B={rpc} -->",
        "<!-- docs-test: replace https://node.example => {rpc} -->",
        "",
        "<!-- docs-test: exit 1 -->",
        "",
        "```sh",
        "x",
        "```",
      ].join("\n"),
    );
    expect(block.env).toEqual({ A: "1", B: "{rpc}" });
    expect(block.replace).toEqual([["https://node.example", "{rpc}"]]);
    expect(block.exit).toBe(1);
    expect(block.problems).toEqual([]);
  });

  it("does not take a marker separated from the block by text", () => {
    const block = one("<!-- docs-test: skip a reason long enough -->\nSome text.\n\n```sh\nx\n```\n");
    expect(block.skip).toBeUndefined();
  });

  it("takes the packages to link and the commands to run in the background", () => {
    const block = one(
      "<!-- docs-test: packages openapi-fetch openapi-typescript -->\n<!-- docs-test: background chainmail serve --port 8080 -->\n```ts\nx\n```",
    );
    expect([block.packages, block.background, block.problems]).toEqual([
      ["openapi-fetch", "openapi-typescript"],
      ["chainmail serve --port 8080"],
      [],
    ]);
  });

  it("writes a file block where the marker says", () => {
    const block = one('<!-- docs-test: file conf/watch.json -->\n```json\n{"a":1}\n```\n');
    expect([block.kind, block.path]).toEqual(["file", "conf/watch.json"]);
  });

  it("refuses markers it does not know, a skip without a reason, a file outside the folder", () => {
    expect(one("<!-- docs-test: skipp x -->\n```sh\nx\n```").problems).toEqual(['unknown marker "docs-test: skipp x"']);
    expect(one("<!-- docs-test: skip -->\n```sh\nx\n```").problems).toEqual(["`skip` needs a reason"]);
    expect(one("<!-- docs-test: file ../x.json -->\n```json\n{}\n```").problems).toEqual([
      "`file` takes a relative path",
    ]);
  });

  it("refuses an untagged block of commands and a language it neither runs nor shows", () => {
    expect(one("```\nNFT_SOURCE=index chainmail serve --port 8080\n```").problems).toHaveLength(1);
    expect(one("```python\nprint(1)\n```").problems).toHaveLength(1);
    // Output lines that start like a command's name are output.
    expect(one("```\nchainmail index: waiting 2 s\n```").problems).toEqual([]);
  });

  it("runs a console block's prompts and their continuation lines, not its output", () => {
    const block = one("```console\n$ chainmail run x \\\n  --input '{}'\n{\"data\":1}\n$ echo done\ndone\n```");
    expect(shellScript(block)).toBe("chainmail run x \\\n  --input '{}'\necho done");
  });
});
