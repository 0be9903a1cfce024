/** `chainmail watch --config watch.json [--dry-run] [--once]`: NFT activity to email until Ctrl-C. */
import type { Command } from "commander";
import { ChainmailError } from "../../core/errors.js";
import { parseJson, stringifyJson } from "../../core/json.js";
import type { Logger } from "../../core/node.js";
import type { RulePreview, WatchSummary } from "../../watch/watch.js";
import { EXIT, plural, printJson, readTextFile, required, UsageError, write } from "../io.js";

/** A watch file is a few rules: anything larger is a mistake (or hostile) and is not read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

async function readConfig(path: string): Promise<unknown> {
  const text = await readTextFile(path, MAX_CONFIG_BYTES, `--config ${path}`);
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

/** The watch file flag every `watch` command takes. */
const CONFIG_FLAG = ["--config <file>", "the watch file (JSON): rules, templates, source"] as const;

const requireConfig = (options: { config?: string }): string => required("--config <file>", options.config);

/** Writes a watch command's `{ error }` payload on stdout and its sentence on stderr; exit 1. */
async function failed(err: unknown): Promise<void> {
  if (!(err instanceof ChainmailError)) throw err;
  await write(`${stringifyJson({ error: err.toPayload() }, 2)}\n`);
  process.stderr.write(`chainmail watch: ${err.message}\n`);
  process.exitCode = EXIT.ERROR;
}

/** `chainmail watch`: polls until a signal (or once), or prints the dry run's emails. */
async function runWatch(options: { config?: string; dryRun?: boolean; once?: boolean }): Promise<void> {
  const configPath = requireConfig(options);
  const config = await readConfig(configPath);
  const { dryRunWatch, watch } = await import("../../watch/watch.js");
  const controller = new AbortController();
  const stopOnSignals = onSignals(controller);
  try {
    if (options.dryRun) {
      const { emails, rules } = await dryRunWatch({ config, signal: controller.signal });
      for (const email of emails) await write(`${stringifyJson(email)}\n`);
      // Never silent: each rule says where it reads and what it would mail (or why it cannot start yet).
      for (const rule of rules) {
        process.stderr.write(`chainmail watch: ${rulePreviewText(rule)}\n`);
      }
      process.exitCode = EXIT.OK;
      return;
    }
    const summary = await watch({
      config,
      signal: controller.signal,
      logger: jsonLogger(),
      ...(options.once ? { once: true } : {}),
    });
    process.exitCode = reportSummary(summary, configPath);
  } catch (err) {
    // The nodes' error shape: `{ "error": { error, details } }` on stdout, the sentence on stderr.
    await failed(err);
  } finally {
    stopOnSignals();
    await (await import("../../sources/index.js")).closeNftSources();
  }
}

/** First signal: finish the poll in hand (its sends are settled) and stop. A second: stop at once. */
function onSignals(controller: AbortController): () => void {
  let signals = 0;
  const onSignal = () => {
    if (++signals > 1) process.exit(130);
    controller.abort();
  };
  process.on("SIGINT", onSignal).on("SIGTERM", onSignal).on("SIGHUP", onSignal);
  return () => process.off("SIGINT", onSignal).off("SIGTERM", onSignal).off("SIGHUP", onSignal);
}

/** A read position for people: its block, and its date for records without a block. */
function placeText(at: { block: number | undefined; date: string }): string {
  const block = at.block !== undefined && at.block >= 0 ? `block ${at.block}` : "";
  if (!at.date) return block;
  return block ? `${block} (${at.date}Z for records without a block)` : `${at.date}Z`;
}

/** One dry-run line of a rule: where it starts or reads on from, and how many records it would mail. */
function rulePreviewText(preview: RulePreview): string {
  const { read } = preview;
  const rule = `rule ${preview.rule}`;
  if (!read) return `${rule}: not read (stopped)`;
  if (read.waiting) return `${rule}: ${read.why}; nothing to mail`;
  const mails = preview.emails
    ? `would mail ${plural(preview.records, "record")} in ${plural(preview.emails, "email")}`
    : "nothing to mail";
  const from = placeText(read.from) || "its first record";
  if (!read.started) return `${rule}: saved state: reads on from ${from}: ${mails}`;
  const start = placeText(read.started);
  const starts = start ? `the watch would mail what comes after ${start}` : "it has no records yet: all to come is new";
  return `${rule}: new (no saved state): ${starts}; this preview reads its newest records, from ${from}: ${mails}`;
}

/** Says how the run went on stderr; its exit status. */
function reportSummary(summary: WatchSummary, configPath: string): number {
  process.stderr.write(
    `chainmail watch: stopped after ${plural(summary.polls, "poll")}: ${summary.sent} sent, ${summary.failed} failed, ${summary.unknown} delivery unknown, ${summary.retrying} waiting to be sent again\n`,
  );
  // Emails that did not go out in this run are a failure of the run, whatever else went well.
  if (summary.failed + summary.unknown + summary.retrying === 0) return EXIT.OK;
  process.stderr.write(
    `chainmail watch: not every email went out; list them with: chainmail watch status --config ${configPath}\n`,
  );
  return EXIT.ERROR;
}

export function registerWatch(program: Command): void {
  const watchCommand = program
    .command("watch")
    .description("Email NFT activity as it happens: rules read new records from the index or NFTPort and mail them")
    // Options after `watch status` / `watch resend` are theirs, not the watch's own.
    .enablePositionalOptions()
    .option(...CONFIG_FLAG)
    .option("--dry-run", "print the emails the next poll would send (JSON lines); write and send nothing")
    .option("--once", "poll once, send, and stop")
    .action(runWatch);

  watchCommand
    .command("status")
    .description(
      "List the watch's emails that did not go out (delivery unknown, failed, waiting to be sent again) as JSON",
    )
    .option(...CONFIG_FLAG)
    .option("--all", "list every email, sent ones too")
    .action(async (options: { config?: string; all?: boolean }) => {
      const config = await readConfig(requireConfig(options));
      const { watchStatus } = await import("../../watch/watch.js");
      try {
        await printJson(await watchStatus({ config, ...(options.all ? { all: true } : {}) }));
      } catch (err) {
        await failed(err);
      }
    });

  watchCommand
    .command("resend")
    .description("Send these emails again at the watch's next poll (only delivery unknown or failed ones)")
    .argument("<custom-id...>", "the emails' custom ids, as `chainmail watch status` lists them")
    .option(...CONFIG_FLAG)
    .action(async (customIds: string[], options: { config?: string }) => {
      const config = await readConfig(requireConfig(options));
      const { resendWatchMails } = await import("../../watch/watch.js");
      try {
        const outcome = await resendWatchMails({ config, customIds });
        await printJson(outcome);
        process.exitCode = outcome.not_resent.length ? EXIT.ERROR : EXIT.OK;
      } catch (err) {
        await failed(err);
      }
    });
}
