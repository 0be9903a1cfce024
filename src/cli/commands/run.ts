/** `chainmail run <node-id> --input <json | @file | -> [--all] [--limit N]` */
import type { Command } from "commander";
import { stringifyJson } from "../../core/json.js";
import { runNode } from "../../core/node.js";
import { PageError, pages } from "../../core/paginate.js";
import { getNode, nodes } from "../../nodes/index.js";
import { EXIT, integerOption, printJson, readInput, UsageError, write } from "../io.js";

interface RunOptions {
  input: string;
  all?: boolean;
  limit?: string;
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .description("Run one node on an input object and print the output object as JSON")
    .argument("<node-id>", `one of: ${Object.keys(nodes).join(", ")}`)
    .requiredOption("-i, --input <json|@file|->", "the input object, keyed by input port")
    .option("--all", "fetch every page and print one output holding every record")
    .option("--limit <n>", "stop after exactly n records (implies paging)")
    .action(async (id: string, options: RunOptions) => {
      const node = getNode(id);
      if (!node) throw new UsageError(`Unknown node "${id}". Nodes: ${Object.keys(nodes).join(", ")}`);
      const input = await readInput(options.input);
      const limit = integerOption("--limit", options.limit);
      const paging = options.all || limit !== undefined;
      if (paging && node.successPort !== "data")
        throw new UsageError(`--all and --limit apply to the retrievers, not ${id}`);
      if (!paging) {
        const output = await runNode(node, input);
        await printJson(output);
        // A partly failed email batch fires both `messages sent` and `error`: that is a failure (exit 1).
        process.exitCode = node.successPort in output && output.error === undefined ? EXIT.OK : EXIT.ERROR;
        return;
      }
      process.exitCode = await runAllPages(node, input as Record<string, unknown>, limit);
    });
}

/**
 * Streams one output object whose `data.transactions` holds every record, page after page, so memory stays
 * flat. If a page fails, the records so far are kept, `data.continuation` says where to resume, and `error`
 * says what failed.
 */
async function runAllPages(
  node: Parameters<typeof pages>[0],
  input: Record<string, unknown>,
  limit: number | undefined,
): Promise<number> {
  const progress = process.stderr.isTTY
    ? (p: { page: number; total: number }) => process.stderr.write(`\rpage ${p.page}, ${p.total} records`)
    : undefined;
  let first = true;
  let continuation = "";
  let lastResponse: unknown;
  let failure: PageError | undefined;
  let opened = false;
  const open = async () => {
    if (!opened) await write('{\n"data": {"response": "OK", "transactions": [');
    opened = true;
  };
  try {
    for await (const page of pages(node, input as never, { limit, onPage: progress })) {
      await open();
      for (const record of page.transactions) {
        await write(`${first ? "\n" : ",\n"}${stringifyJson(record)}`);
        first = false;
      }
      continuation = page.continuation;
      lastResponse = page.response;
    }
  } catch (err) {
    if (!(err instanceof PageError)) throw err;
    failure = err;
    continuation = err.resumeFrom ?? "";
    lastResponse = err.response;
  }
  if (progress) process.stderr.write("\n");
  if (failure && !opened) {
    await printJson({ error: failure.payload, ...(lastResponse ? { response: lastResponse } : {}) });
    return EXIT.ERROR;
  }
  await open();
  let tail = `${first ? "" : "\n"}], "continuation": ${JSON.stringify(continuation)}}`;
  if (lastResponse !== undefined) tail += `,\n"response": ${stringifyJson(lastResponse)}`;
  if (failure) tail += `,\n"error": ${stringifyJson(failure.payload)}`;
  await write(`${tail}\n}\n`);
  return failure ? EXIT.ERROR : EXIT.OK;
}
