/**
 * The library's types, checked the way a user meets them: tsc on sample programs that import "chainmail" (mapped
 * to src/index.ts). `runNode` by id or node types its input and output from the port schemas, so a program that
 * passes must compile and each mistake must not; every name the README and docs/ import must be exported; the
 * TypeScript examples of docs/library.md compile as written.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
/** Under the repo's node_modules, so @types/node and the packages src imports resolve as in the repo. */
const CACHE = join(ROOT, "node_modules", ".cache");

const PASSES = `
import {
  emailSend, getNode, type InputOf, loadConfig, nftTransactionsByToken, type OutputOf, pages, records, runNode,
  type TransactionRecord,
} from "chainmail";

// By id, an input declared \`as const\` (readonly arrays), a key that may be undefined (the operator's then).
const input = {
  query: { contract_address: "0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d", token_id: "567", type: ["sale"] },
  params: { api_key: process.env.NFTPORT_API_KEY },
} as const;
const byId = await runNode("nft-transactions-by-token", input);
const page: TransactionRecord[] | undefined = byId.data?.transactions;
const next: string | undefined = byId.data?.continuation;

// By node; params left out (the operator's key); the output is the node's.
const byNode = await runNode(nftTransactionsByToken, { query: { contract_address: "0x01", token_id: "1" } });
const code: string | undefined = byNode.error?.details.code;

// A declared input, a uint64 block as a bigint, an on-chain query with nothing required.
const onChain: InputOf<"nft-transactions-on-chain"> = { query: { from_block: 2n ** 60n, type: ["sale"] } };
await runNode("nft-transactions-on-chain", onChain);
await runNode("nft-transactions-on-chain", {});

// Mailjet's fields beyond those listed compile (they are forwarded); the MessageID is exact.
const sent: OutputOf<"email-send"> = await runNode("email-send", {
  request: {
    Messages: [{ From: { Email: "news@chainmail.test" }, To: [{ Email: "reader@example.org" }], Priority: 2 }],
    Globals: { Subject: "Hi" },
  },
});
const id: number | bigint | undefined = sent["messages sent"]?.Messages[0]?.To?.[0]?.MessageID;
await runNode(emailSend, { params: { "user id": "key", password: "secret" }, request: { Messages: [] } });

// The own index through the fourth argument; records are TransactionRecords unless said otherwise.
const config = loadConfig({ NFT_SOURCE: "index", INDEX_DB: "index.sqlite" });
for await (const record of records("nft-transactions-on-chain", { query: { type: ["sale"] } }, { limit: 5 }, { config })) {
  const kind: TransactionRecord["type"] = record.type;
  console.log(kind);
}
for await (const record of records<{ type: string }>(nftTransactionsByToken, input, { limit: 5 })) console.log(record.type);
for await (const p of pages("nft-transactions-by-contract", { query: { contract_address: "0x01" } })) {
  const more: string = p.continuation;
  console.log(more);
}
// Input the program has not typed (parsed JSON) goes to a node typed AnyNode.
const untyped: unknown = JSON.parse('{"query": {}}');
const generic = getNode("nft-transactions-on-chain");
if (generic) await runNode(generic, untyped);
console.log(page, next, code, id);
`;

/** Each must fail to compile, with a message that names what is wrong. */
const FAILS: Record<string, { code: string; names: RegExp }> = {
  "misspelt-field": {
    code: `await runNode("nft-transactions-by-token", { query: { contract_adress: "0x01", token_id: "1" } });`,
    names: /contract_adress/,
  },
  "misspelt-field-by-node": {
    code: `await runNode(nftTransactionsByContract, { query: { contract_address: "0x01", page_sise: 5 } });`,
    names: /page_sise/,
  },
  "missing-required-field": {
    code: `await runNode("nft-transactions-by-token", { query: { contract_address: "0x01" } });`,
    names: /token_id/,
  },
  "unknown-kind": {
    code: `await runNode("nft-transactions-on-chain", { query: { type: ["sales"] } });`,
    names: /"sales"/,
  },
  "unknown-port": {
    code: `await runNode("email-send", { request: { Messages: [] }, param: {} });`,
    names: /param/,
  },
  "misspelt-credential": {
    code: `await runNode("email-send", { params: { user_id: "key" }, request: { Messages: [] } });`,
    names: /user_id/,
  },
  "unknown-id": {
    code: `await runNode("nft-transactions-by-tokens", {});`,
    names: /nft-transactions-by-tokens/,
  },
  "wrong-output-port": {
    code: `const out = await runNode("email-send", { request: { Messages: [] } }); console.log(out.data);`,
    names: /'data' does not exist/,
  },
  "records-of-email": {
    code: `records("email-send", { request: { Messages: [] } });`,
    names: /email-send/,
  },
};
const FAIL_IMPORTS = `import { nftTransactionsByContract, records, runNode } from "chainmail";\n`;

/** `import … from "chainmail"` / `"chainmail/server"` anywhere in a Markdown file, in code blocks or in prose. */
const IMPORT = /import\s+(?:type\s+)?\{[^}]*\}\s+from\s+"chainmail(?:\/server)?";?/g;

/** The TypeScript code blocks of a Markdown file (indented ones too, as in a list item). */
function tsBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  for (const match of markdown.matchAll(/^( *)```ts\n([\s\S]*?)^\1```/gm)) {
    const indent = match[1]!.length;
    blocks.push(
      match[2]!
        .split("\n")
        .map((line) => line.slice(indent))
        .join("\n"),
    );
  }
  return blocks;
}

let dir: string;
/** Diagnostics per sample file name. */
let diagnostics: Map<string, string[]>;
/** Import statements found per Markdown file. */
const imports = new Map<string, string[]>();
let libraryBlocks: string[] = [];

beforeAll(async () => {
  await mkdir(CACHE, { recursive: true });
  dir = await mkdtemp(join(CACHE, "chainmail-types-"));
  const files: Record<string, string> = { "passes.ts": PASSES };
  for (const [name, { code }] of Object.entries(FAILS)) files[`fails-${name}.ts`] = FAIL_IMPORTS + code;
  const docs = ["README.md", ...(await readdir(join(ROOT, "docs"))).map((f) => `docs/${f}`)].filter((f) =>
    f.endsWith(".md"),
  );
  for (const doc of docs) {
    const text = await readFile(join(ROOT, doc), "utf8");
    const found = [...text.matchAll(IMPORT)].map((m) => m[0].replace(/;?$/, ";"));
    if (found.length === 0) continue;
    imports.set(doc, found);
    // One file per import line: two lines may import the same name.
    found.forEach((line, i) => {
      files[`imports-${doc.replace(/\W/g, "_")}-${i}.ts`] = `${line}\nexport {};\n`;
    });
  }
  // A name nobody exports: the check must catch it.
  files["imports-control.ts"] = `import { notExportedAnywhere } from "chainmail";\nexport {};\n`;
  libraryBlocks = tsBlocks(await readFile(join(ROOT, "docs", "library.md"), "utf8"));
  libraryBlocks.forEach((block, i) => {
    files[`library-block-${i}.ts`] = `${block}\nexport {};\n`;
  });
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);

  const program = ts.createProgram(
    Object.keys(files).map((name) => join(dir, name)),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      noEmit: true,
      types: ["node"],
      baseUrl: ROOT,
      paths: { chainmail: ["src/index.ts"], "chainmail/server": ["src/server/index.ts"] },
    },
  );
  diagnostics = new Map(Object.keys(files).map((name) => [name, []]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const name = d.file ? d.file.fileName.slice(dir.length + 1) : "(global)";
    const list = diagnostics.get(name) ?? [];
    list.push(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    diagnostics.set(name, list);
  }
}, 120_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("runNode typed per node", () => {
  it("compiles a program that uses runNode, pages and records as documented", () => {
    expect(diagnostics.get("passes.ts")).toEqual([]);
    expect(diagnostics.get("(global)")).toBeUndefined();
  });

  for (const [name, { names }] of Object.entries(FAILS)) {
    it(`does not compile: ${name}`, () => {
      const errors = diagnostics.get(`fails-${name}.ts`)!;
      expect(errors.length, "it compiled").toBeGreaterThan(0);
      expect(errors.join("\n")).toMatch(names);
    });
  }
});

describe("what the README and docs/ import", () => {
  it("finds the import lines (README, library, email, watch, own index)", () => {
    expect([...imports.keys()]).toEqual(
      expect.arrayContaining(["README.md", "docs/library.md", "docs/email.md", "docs/watch.md", "docs/own-index.md"]),
    );
  });

  it("is exported from the package entry: every import line compiles", () => {
    for (const [doc, lines] of imports) {
      lines.forEach((line, i) => {
        expect(diagnostics.get(`imports-${doc.replace(/\W/g, "_")}-${i}.ts`), `${doc}: ${line}`).toEqual([]);
      });
    }
  });

  it("is checked by a compile that does catch a name the package does not export", () => {
    expect(diagnostics.get("imports-control.ts")!.join("\n")).toMatch(/notExportedAnywhere/);
  });

  it("docs/library.md's examples compile as written", () => {
    expect(libraryBlocks.length).toBeGreaterThanOrEqual(2);
    libraryBlocks.forEach((_, i) => {
      expect(diagnostics.get(`library-block-${i}.ts`), `block ${i}`).toEqual([]);
    });
  });
});
