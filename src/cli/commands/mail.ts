/**
 * `chainmail mail status <id>` and `chainmail mail suppressions list|add|remove`: the mail lifecycle kept in
 * CHAINMAIL_MAIL_DB (or `--db`).
 */
import type { Command } from "commander";
import { ChainmailError } from "../../core/errors.js";
import { stringifyJson } from "../../core/json.js";
import { BIGINT_FLAG, bigintOption, EXIT, printJson, required, write } from "../io.js";

const DB_FLAG = [
  "--db <file|url>",
  "the lifecycle store: an SQLite file or a postgres:// URL (default: CHAINMAIL_MAIL_DB)",
] as const;

interface EntryOptions {
  db?: string;
  sender?: string;
  email?: string;
}

/** Runs a mail command: a refusal is printed as `{ error }` on stdout and its sentence on stderr (exit 1). */
async function guarded(work: () => Promise<void>): Promise<void> {
  const { closeMailStores } = await import("../../mail/open.js");
  try {
    await work();
  } catch (err) {
    if (!(err instanceof ChainmailError) || err.code === "invalid_input") throw err;
    await write(`${stringifyJson({ error: err.toPayload() }, 2)}\n`);
    process.stderr.write(`chainmail mail: ${err.message}\n`);
    process.exitCode = EXIT.ERROR;
  } finally {
    await closeMailStores();
  }
}

export function registerMail(program: Command): void {
  const mail = program
    .command("mail")
    .description("The mail lifecycle: a message's state, the suppression list (CHAINMAIL_MAIL_DB)");
  mail
    .command("status")
    .description("Print the state and events of the messages under a MessageID, MessageUUID or CustomID")
    .argument("<id>", "a MessageID, a MessageUUID or a CustomID")
    .option(...DB_FLAG)
    .option(...BIGINT_FLAG)
    .action((id: string, options: { db?: string; bigint?: string }) => guarded(() => printStatus(id, options)));
  const suppressions = mail.command("suppressions").description("The suppression list: list, add, remove");
  suppressions
    .command("list")
    .description("Print the suppressed recipients as JSON (sender, email, reason, since, cause)")
    .option("--sender <address>", "only this sender's (* for those of every sender)")
    .option("--email <address>", "only this recipient")
    .option(...DB_FLAG)
    .action((options: EntryOptions) =>
      guarded(async () => {
        const { listSuppressions } = await import("../../mail/api.js");
        await printJson(await listSuppressions({ sender: options.sender, email: options.email }, { db: options.db }));
      }),
    );
  entryCommand(
    suppressions,
    "add",
    "Suppress a recipient for a sender (reason manual)",
    "or * for every sender",
  ).action((options: EntryOptions) =>
    guarded(async () => {
      const entry = entryOf(options);
      const { addSuppression } = await import("../../mail/api.js");
      const changed = await addSuppression(entry, { db: options.db });
      await printJson({ ...entry, suppressed: true, changed });
    }),
  );
  entryCommand(suppressions, "remove", "Take a recipient off a sender's list: mail may go to it again", "or *").action(
    (options: EntryOptions) =>
      guarded(async () => {
        const entry = entryOf(options);
        const { removeSuppression } = await import("../../mail/api.js");
        const removed = await removeSuppression(entry, { db: options.db });
        await printJson({ ...entry, removed });
        if (!removed) process.stderr.write(`chainmail mail: ${entry.email} was not on the list of ${entry.sender}\n`);
      }),
  );
}

async function printStatus(id: string, options: { db?: string; bigint?: string }): Promise<void> {
  const bigint = bigintOption(options.bigint);
  const { mailStatus } = await import("../../mail/api.js");
  const messages = await mailStatus(id, { db: options.db });
  if (messages.length === 0) {
    process.stderr.write(`chainmail mail: no message under ${JSON.stringify(id)}\n`);
    process.exitCode = EXIT.ERROR;
    return;
  }
  await printJson({ messages }, bigint);
}

/** `suppressions add|remove`: one sender and one recipient, both required. */
function entryCommand(parent: Command, name: string, description: string, anySender: string): Command {
  return parent
    .command(name)
    .description(description)
    .option("--sender <address>", `the sender address, ${anySender} (required)`)
    .option("--email <address>", "the recipient (required)")
    .option(...DB_FLAG);
}

const entryOf = (options: EntryOptions) => ({
  sender: required("--sender <address>", options.sender),
  email: required("--email <address>", options.email),
});
