/**
 * `chainmail nodes`: one line per node (id, title, input ports, output ports), short enough to read at a glance;
 * `--json` prints every node with its port schemas (JSON Schema), what programs read.
 */
import type { Command } from "commander";
import type { AnyNode } from "../../core/node.js";
import { printJson, write } from "../io.js";

/** The nodes as an aligned text table, one line per node; port names joined by ", " (`messages sent` has a space). */
export function nodesTable(nodes: readonly AnyNode[]): string {
  const rows = [
    ["ID", "TITLE", "INPUT PORTS", "OUTPUT PORTS"],
    ...nodes.map((node) => [
      node.id,
      node.title,
      Object.keys(node.inputs).join(", "),
      Object.keys(node.outputs).join(", "),
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  "),
    )
    .map((line) => `${line}\n`)
    .join("");
}

export function registerNodes(program: Command): void {
  program
    .command("nodes")
    .description("List the nodes: id, title, input and output ports (--json: with their port schemas)")
    .option("--json", "print every node with its input and output port schemas (JSON Schema)")
    .action(async (options: { json?: boolean }) => {
      const [{ describeNode }, { nodes }] = await Promise.all([
        import("../../core/node.js"),
        import("../../nodes/index.js"),
      ]);
      const all = Object.values(nodes) as AnyNode[];
      if (options.json) await printJson(all.map(describeNode));
      else await write(nodesTable(all));
    });
}
