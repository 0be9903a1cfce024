/**
 * The parts of the config node's editor (nodes/config.html) that come from the lists of sources and transports: its fields and
 * credentials, the choice of source, and each setting's row, each between `generated: <part>` markers. Written by
 * `npx tsx scripts/workflow-options.ts`; a test fails while the file and the lists differ.
 */
import {
  portableMailTransports,
  type Setting,
  type SourceEntry,
  type TransportEntry,
  workflowSources,
} from "../../../src/workflow/index.js";

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** The settings the config node holds, each with the source it belongs to (none: a transport's, always shown). */
function editorSettings(): { setting: Setting & { nodeRed: NonNullable<Setting["nodeRed"]> }; source?: string }[] {
  const of = (entry: SourceEntry | TransportEntry, source?: string) =>
    entry.settings.flatMap((setting) =>
      setting.nodeRed ? [{ setting: { ...setting, nodeRed: setting.nodeRed }, ...(source ? { source } : {}) }] : [],
    );
  // Node-RED's config node sends through Mailjet alone (the packages' hostConfig).
  const mail = portableMailTransports().filter((transport) => transport.id === "mailjet");
  // The service's rows are always shown: besides a source, it is where the delivery-events node reads and where
  // email send looks up suppressions, whatever the NFT source.
  const shownWhen = (source: SourceEntry) => (source.id === "service" ? undefined : source.id);
  return [...workflowSources().flatMap((source) => of(source, shownWhen(source))), ...mail.flatMap((t) => of(t))];
}

/** Each generated part's lines, by its marker's name. */
export function configEditorParts(): Record<string, string[]> {
  const sources = workflowSources();
  const settings = editorSettings();
  const row = ({ setting, source }: ReturnType<typeof editorSettings>[number]) => {
    const { field, label, placeholder } = setting.nodeRed;
    const id = `node-config-input-${field}`;
    const shown = placeholder ?? setting.default;
    const icon = setting.secret ? '<i class="fa fa-key"></i> ' : "";
    return (
      `<div class="form-row${source ? ` chainmail-source-${source}` : ""}">` +
      `<label for="${id}">${icon}${escapeHtml(label)}</label>` +
      `<input type="${setting.secret ? "password" : "text"}" id="${id}"` +
      `${shown ? ` placeholder="${escapeHtml(shown)}"` : ""}></div>`
    );
  };
  return {
    "config-fields": [
      `source: { value: ${JSON.stringify(sources[0]?.id ?? "")} },`,
      ...settings
        .filter(({ setting }) => !setting.secret)
        .map(({ setting }) => `${setting.nodeRed.field}: { value: "" },`),
    ],
    "config-credentials": settings
      .filter(({ setting }) => setting.secret)
      .map(({ setting }) => `${setting.nodeRed.field}: { type: "password" },`),
    "config-toggles": sources.map(
      (source) => `$(".chainmail-source-${source.id}").toggle(source === ${JSON.stringify(source.id)});`,
    ),
    "config-source": [
      '<select id="node-config-input-source">' +
        sources.map((source) => `<option value="${source.id}">${escapeHtml(source.title)}</option>`).join("") +
        "</select>",
    ],
    "config-rows": settings.map(row),
  };
}

/** `html` with each generated part replaced, indented as its opening marker. */
export function withConfigEditor(html: string): string {
  let out = html;
  for (const [name, lines] of Object.entries(configEditorParts())) {
    const pattern = new RegExp(
      `(\\n([ \\t]*)[^\\n]*generated: ${name}\\b[^\\n]*\\n)[\\s\\S]*?(\\n[ \\t]*[^\\n]*/generated: ${name}\\b)`,
    );
    const match = pattern.exec(out);
    if (!match) throw new Error(`nodes/config.html has no "generated: ${name}" … "/generated: ${name}" block`);
    const indent = match[2]!;
    out = out.replace(
      pattern,
      (_, start: string, __: string, end: string) =>
        `${start}${lines.map((line) => `${indent}${line}`).join("\n")}${end}`,
    );
  }
  return out;
}
