/** `chainmail watch --config watch.json [--dry-run] [--once]`: NFT activity to email until Ctrl-C. */
import { readFile, stat } from "node:fs/promises";
import type { Command } from "commander";
import { ChainmailError } from "../../core/errors.js";
import { parseJson, stringifyJson } from "../../core/json.js";
import type { Logger } from "../../core/node.js";
import { EXIT, UsageError, write } from "../io.js";

/** A watch file is a few rules: anything larger is a mistake (or hostile) and is not read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

async function readConfig(path: string): Promise<unknown> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > MAX_CONFIG_BYTES) throw new UsageError(`--config ${path} is ${size} bytes; at most 1 MiB is read`);
    text = await readFile(path, "utf8");
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`Cannot read --config ${path}: ${(err as Error).message}`);
  }
  try {
    return parseJson(text);
  } catch (err) {
    throw new UsageError(`--config ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

/** One JSON line per event on stdout, like the service's logs. */
function jsonLogger(): Logger {
  const line = (level: string) => (obj: object, msg?: string) => {
    process.stdout.write(`${stringifyJson({ time: new Date().toISOString(), level, msg, ...obj })}\n`);
  };
  return { debug: () => undefined, info: line("info"), warn: line("warn"), error: line("error") };
}

export function registerWatch(program: Command): void {
  program
    .command("watch")
    .description("Email NFT activity as it happens: rules read new records from the index or NFTPort and mail them")
    .requiredOption("--config <file>", "the watch file (JSON): rules, templates, source")
    .option("--dry-run", "print the emails the next poll would send (JSON lines); write and send nothing")
    .option("--once", "poll once, send, and stop")
    .action(async (options: { config: string; dryRun?: boolean; once?: boolean }) => {
      const config = await readConfig(options.config);
      const { previewWatch, watch } = await import("../../watch/watch.js");
      const controller = new AbortController();
      let signals = 0;
      const onSignal = () => {
        // First signal: finish the poll in hand (its sends are settled) and stop. A second: stop at once.
        if (++signals > 1) process.exit(130);
        controller.abort();
      };
      process.on("SIGINT", onSignal).on("SIGTERM", onSignal).on("SIGHUP", onSignal);
      try {
        if (options.dryRun) {
          for (const email of await previewWatch({ config, signal: controller.signal })) {
            await write(`${stringifyJson(email)}\n`);
          }
        } else {
          const summary = await watch({
            config,
            signal: controller.signal,
            logger: jsonLogger(),
            ...(options.once ? { once: true } : {}),
          });
          process.stderr.write(
            `chainmail watch: stopped after ${summary.polls} polls: ${summary.sent} sent, ${summary.failed} failed, ${summary.unknown} delivery unknown\n`,
          );
        }
        process.exitCode = EXIT.OK;
      } catch (err) {
        if (!(err instanceof ChainmailError)) throw err;
        // The nodes' error shape: `{ "error": { error, details } }` on stdout, the sentence on stderr.
        await write(`${stringifyJson({ error: err.toPayload() }, 2)}\n`);
        process.stderr.write(`chainmail watch: ${err.message}\n`);
        process.exitCode = EXIT.ERROR;
      } finally {
        process.off("SIGINT", onSignal).off("SIGTERM", onSignal).off("SIGHUP", onSignal);
        await (await import("../../sources/index.js")).closeNftSources();
      }
    });
}
