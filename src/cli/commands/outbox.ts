/** `chainmail outbox list` and `chainmail outbox show <id>`: read back what EMAIL_TRANSPORT=outbox stored. */
import type { Command } from "commander";
import { defaultConfig } from "../../core/config.js";
import { findInOutbox, listOutbox } from "../../transports/outbox/store.js";
import { BIGINT_FLAG, bigintOption, EXIT, printJson, write } from "../io.js";

interface DirOption {
  dir?: string;
  bigint?: string;
}

export function registerOutbox(program: Command): void {
  const outbox = program
    .command("outbox")
    .description("Read the messages stored by EMAIL_TRANSPORT=outbox (OUTBOX_DIR, default ./data/outbox)");
  outbox
    .command("list")
    .description("Print the outbox index as JSON, oldest first: id, date, from, to, cc, bcc, subject, custom id")
    .option("--dir <path>", "the outbox directory (default: OUTBOX_DIR)")
    .option(...BIGINT_FLAG)
    .action(async (options: DirOption) => {
      const bigint = bigintOption(options.bigint);
      await printJson(await listOutbox(options.dir ?? defaultConfig().outboxDir), bigint);
    });
  outbox
    .command("show")
    .description("Print one stored message as MIME (.eml); --json prints its index entry instead")
    .argument("<id>", "the outbox id, the Message-ID, or a recipient's MessageUUID or MessageID")
    .option("--dir <path>", "the outbox directory (default: OUTBOX_DIR)")
    .option("--json", "print the index entry (recipients, ids, Bcc) instead of the message")
    .option(...BIGINT_FLAG)
    .action(async (id: string, options: DirOption & { json?: boolean }) => {
      const bigint = bigintOption(options.bigint);
      const dir = options.dir ?? defaultConfig().outboxDir;
      const found = await findInOutbox(dir, id);
      if (!found) {
        process.stderr.write(`chainmail: no message "${id}" in the outbox ${dir} (see: chainmail outbox list)\n`);
        process.exitCode = EXIT.ERROR;
        return;
      }
      if (options.json) await printJson(found.entry, bigint);
      else await write(found.eml.toString("utf8"));
    });
}
