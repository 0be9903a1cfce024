/** `chainmail run <node-id> --input <json | @file | -> [--all] [--limit N]` */
import { setFlagsFromString } from "node:v8";
import type { Command } from "commander";
import { stringifyJson } from "../../core/json.js";
import type { AnyNode } from "../../core/node.js";
import { EXIT, integerOption, printJson, readInput, required, UsageError, write } from "../io.js";

interface RunOptions {
  input?: string;
  all?: boolean;
  limit?: string;
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .description("Run one node on an input object and print the output object as JSON")
    .argument("<node-id>", "the node to run (chainmail nodes lists them)")
    .option("-i, --input <json|@file|->", "the input object, keyed by input port (required)")
    .option("--all", "fetch every page and print one output holding every record")
    .option("--limit <n>", "stop after exactly n records (implies paging)")
    .action(async (id: string, options: RunOptions) => {
      // One run ends before optimising undici's HTTP parser (WebAssembly) pays back: V8's optimising compile of it
      // took ~100 ms of CPU and ~35 MiB of memory, even over 600 pages, and Node waits for it before exiting.
      // The baseline compiler alone parses fast enough. Long-lived commands (serve, index) keep the default.
      setFlagsFromString("--liftoff-only");
      // The young generation stays at its first size: a page's records die young, and V8 doubling it as pages go
      // by was what grew a 600-page run's peak RSS over a 60-page one's (75 → 83 MiB; now 64 → 68 MiB).
      setFlagsFromString("--semi-space-growth-factor=1");
      // Loaded here, not at start-up, so that other commands do not pay for the nodes and their validators.
      const { getNode, nodes } = await import("../../nodes/index.js");
      const node = getNode(id);
      if (!node) throw new UsageError(`Unknown node "${id}". Nodes: ${Object.keys(nodes).join(", ")}`);
      const input = await readInput(required("-i, --input <json|@file|->", options.input));
      const limit = integerOption("--limit", options.limit);
      const paging = options.all || limit !== undefined;
      if (paging && node.successPort !== "data")
        throw new UsageError(`--all and --limit apply to the retrievers, not ${id}`);
      const { closeNftSources } = await import("../../sources/index.js");
      try {
        if (!paging) {
          const { runNode } = await import("../../core/node.js");
          const output = await runNode(node, input);
          await printJson(output);
          process.exitCode = exitStatusOf(node, output);
          return;
        }
        process.exitCode = await runAllPages(node, input as Record<string, unknown>, limit);
      } finally {
        // The index's connections end with the run, so the process exits as soon as it has printed.
        await closeNftSources();
      }
    });
}

/** The exit status of one run by the ports that fired. */
function exitStatusOf(node: AnyNode, output: Record<string, unknown>): number {
  // A partly failed email batch fires both `messages sent` and `error`: that is a failure (exit 1).
  if (!(node.successPort in output) || output.error !== undefined) return EXIT.ERROR;
  // Every message of a batch failed on its own (each result `Status: "error"`): nothing went out.
  const results = (output["messages sent"] as { Messages?: { Status?: unknown }[] } | undefined)?.Messages;
  if (results?.length && results.every((result) => result.Status !== "success")) return EXIT.NOTHING_SENT;
  return EXIT.OK;
}

/**
 * Streams one output object whose `data.transactions` holds every record, page after page, so memory stays
 * flat. If a page fails, the records so far are kept, `data.continuation` says where to resume, and `error`
 * says what failed.
 */
async function runAllPages(node: AnyNode, input: Record<string, unknown>, limit: number | undefined): Promise<number> {
  const progress = process.stderr.isTTY
    ? (p: { page: number; total: number }) => process.stderr.write(`\rpage ${p.page}, ${p.total} records`)
    : undefined;
  let first = true;
  let continuation = "";
  let lastResponse: unknown;
  let opened = false;
  const open = async () => {
    if (!opened) await write('{\n"data": {"response": "OK", "transactions": [');
    opened = true;
  };
  const { PageError, pages } = await import("../../core/paginate.js");
  let failure: InstanceType<typeof PageError> | undefined;
  try {
    for await (const page of pages(node, input as never, { limit, onPage: progress })) {
      await open();
      if (page.transactions.length > 0) {
        // One write per page: a record per line, the page's records joined before they go out.
        await write(`${first ? "\n" : ",\n"}${page.transactions.map((record) => stringifyJson(record)).join(",\n")}`);
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
