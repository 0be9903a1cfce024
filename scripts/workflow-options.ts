/**
 * Writes the parts of the workflow packages' files that come from the lists of sources and transports (today the
 * Node-RED config node's editor: packages/node-red-contrib-chainmail/src/config-editor.ts). Run
 * `npx tsx scripts/workflow-options.ts` after changing a definition; a test fails while a file and the lists differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withConfigEditor } from "../packages/node-red-contrib-chainmail/src/config-editor.js";

export const NODE_RED_HTML = new URL("../packages/node-red-contrib-chainmail/src/chainmail.html", import.meta.url);

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  writeFileSync(NODE_RED_HTML, withConfigEditor(readFileSync(NODE_RED_HTML, "utf8")));
}
