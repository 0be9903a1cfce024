/**
 * Writes the parts of the workflow packages' files that come from the lists of sources and transports: the Node-RED
 * config node's editor fields (packages/node-red-contrib-chainmail/src/nodes/config.html, through config-editor.ts)
 * and the n8n package's list of credentials. Run `npx tsx scripts/workflow-options.ts` after changing a definition;
 * a test fails while a file and the lists differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { withConfigEditor } from "../packages/node-red-contrib-chainmail/src/config-editor.js";
import { portableMailTransports, workflowSources } from "../src/workflow/index.js";

export const NODE_RED_HTML = new URL("../packages/node-red-contrib-chainmail/src/nodes/config.html", import.meta.url);
export const N8N_MANIFEST = new URL("../packages/n8n-nodes-chainmail/package.json", import.meta.url);

/** The built file of each n8n credential the package offers: `chainmailNftPortApi` is ChainmailNftPortApi's. */
export function n8nCredentialFiles(): string[] {
  return [...workflowSources(), ...portableMailTransports()].flatMap(({ n8nCredential: name }) =>
    name ? [`dist/credentials/${name[0]!.toUpperCase()}${name.slice(1)}.credentials.js`] : [],
  );
}

/** The n8n package.json with its `n8n.credentials` list replaced by the definitions' (the rest kept as written). */
export function withN8nCredentials(manifest: string): string {
  const list = /("credentials": \[)([^\]]*)(\n(\s*)\])/;
  const match = list.exec(manifest);
  if (!match) throw new Error('the n8n package.json has no "credentials": [ … ] list');
  const indent = `${match[4]}  `;
  const items = n8nCredentialFiles()
    .map((file) => `\n${indent}${JSON.stringify(file)}`)
    .join(",");
  return manifest.replace(list, (_, start: string, __: string, end: string) => `${start}${items}${end}`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  writeFileSync(NODE_RED_HTML, withConfigEditor(readFileSync(NODE_RED_HTML, "utf8")));
  writeFileSync(N8N_MANIFEST, withN8nCredentials(readFileSync(N8N_MANIFEST, "utf8")));
}
