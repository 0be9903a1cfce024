/**
 * Writes docs/configuration.md's table of environment variables from the schema in src/core/env.ts (between the
 * `settings-table` markers). Run `npx tsx scripts/configuration-table.ts` after changing the schema; a test fails
 * while the table and the schema differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { configurationTable } from "../src/core/env.js";

export const DOC = new URL("../docs/configuration.md", import.meta.url);
export const START = "<!-- settings-table: generated from src/core/env.ts by scripts/configuration-table.ts -->";
export const END = "<!-- /settings-table -->";

/** The document with its table replaced by the schema's. */
export function withTable(doc: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start === -1 || end < start) throw new Error(`docs/configuration.md has no ${START} … ${END} block`);
  return `${doc.slice(0, start + START.length)}\n\n${configurationTable()}\n\n${doc.slice(end)}`;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  writeFileSync(DOC, withTable(readFileSync(DOC, "utf8")));
}
