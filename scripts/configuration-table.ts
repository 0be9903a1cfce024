/**
 * Writes docs/configuration.md's generated tables: the sources and transports from their lists
 * (src/sources/catalog.ts, src/transports/catalog.ts) and the environment variables from the schema in
 * src/core/env.ts, each between its markers. Run `npx tsx scripts/configuration-table.ts` after changing either; a
 * test fails while the document and the code differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { configurationTable } from "../src/core/env.js";
import { nftSourceChoices, nftSources } from "../src/sources/catalog.js";
import { mailTransportChoices } from "../src/transports/catalog.js";

export const DOC = new URL("../docs/configuration.md", import.meta.url);
export const START = "<!-- settings-table: generated from src/core/env.ts by scripts/configuration-table.ts -->";
export const END = "<!-- /settings-table -->";
export const CHOICES_START =
  "<!-- choices-table: generated from src/sources/catalog.ts and src/transports/catalog.ts by scripts/configuration-table.ts -->";
export const CHOICES_END = "<!-- /choices-table -->";

/** A Markdown table, its columns as wide as their widest cell. */
function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...rows.map(line)].join("\n");
}

/** The table of every value of NFT_SOURCE and EMAIL_TRANSPORT: what it is, what it reads, where it runs. */
export function choicesTable(): string {
  const yesNo = (value: boolean | undefined) => (value === undefined ? "" : value ? "yes" : "no");
  const variables = (names: readonly string[]) => [...new Set(names)].map((name) => `\`${name}\``).join(", ");
  const rows = [
    ...nftSourceChoices().map((choice) => {
      const definition = nftSources.find((source) => source.id === choice.id);
      return [
        `\`NFT_SOURCE=${choice.id}\``,
        choice.description,
        variables(choice.variables),
        // A combination has the order book of its parts (the index with OpenSea's bids and listings).
        definition ? yesNo(definition.capabilities.orderBook) : "yes",
        definition ? yesNo(definition.portable) : "no",
      ];
    }),
    ...mailTransportChoices().map((choice) => [
      `\`EMAIL_TRANSPORT=${choice.id}\``,
      choice.description,
      variables(choice.variables),
      "",
      yesNo(choice.portable),
    ]),
  ];
  return markdownTable(["choice", "what it is", "variables it reads", "bids and listings", "workflow packages"], rows);
}

/** The text between `start` and `end` in `doc` replaced by `table`. */
function replaced(doc: string, start: string, end: string, table: string): string {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from === -1 || to < from) throw new Error(`docs/configuration.md has no ${start} … ${end} block`);
  return `${doc.slice(0, from + start.length)}\n\n${table}\n\n${doc.slice(to)}`;
}

/** The document with its tables replaced by the code's. */
export function withTable(doc: string): string {
  const choices = replaced(doc, CHOICES_START, CHOICES_END, choicesTable());
  return replaced(choices, START, END, configurationTable());
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  writeFileSync(DOC, withTable(readFileSync(DOC, "utf8")));
}
