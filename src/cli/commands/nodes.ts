/** `chainmail nodes`: every node with its port schemas (JSON Schema). */
import type { Command } from "commander";
import { printJson } from "../io.js";

export function registerNodes(program: Command): void {
  program
    .command("nodes")
    .description("List the nodes with their input and output port schemas (JSON Schema)")
    .action(async () => {
      const [{ describeNode }, { nodes }] = await Promise.all([
        import("../../core/node.js"),
        import("../../nodes/index.js"),
      ]);
      await printJson(Object.values(nodes).map(describeNode));
    });
}
