/** The `chainmail` command line as one commander program: every command, `--version`, and how usage errors read. */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { checkSettings } from "../core/env.js";
import { registerDemo } from "./commands/demo.js";
import { registerIndexChain } from "./commands/index-chain.js";
import { registerMail } from "./commands/mail.js";
import { registerNodes } from "./commands/nodes.js";
import { registerOutbox } from "./commands/outbox.js";
import { registerRun } from "./commands/run.js";
import { registerServe } from "./commands/serve.js";
import { registerWatch } from "./commands/watch.js";

/** The package's version (package.json sits two levels above this module in src/ and in dist/). */
function packageVersion(): string {
  return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
}

/**
 * The settings that choose where records come from and where mail goes, with the credentials each choice needs:
 * what someone told `params.api_key is required` looks for (every setting: docs/configuration.md).
 */
const CHOICES_HELP = `
Where records come from and where mail goes (environment variables):
  NFT_SOURCE=nftport        NFTPort, the default: NFTPORT_API_KEY (or params.api_key in each input)
  NFT_SOURCE=opensea        OpenSea: OPENSEA_API_KEY (or params.api_key) and, for blocks and USD prices,
                            INDEX_RPC_URL
  NFT_SOURCE=index          the own index that \`chainmail index\` builds: INDEX_DB; no key
  NFT_SOURCE=index+opensea  the own index, bids and listings from OpenSea: INDEX_DB, OPENSEA_API_KEY
  NFT_SOURCE=service        another \`chainmail serve\`: CHAINMAIL_SERVICE_URL, CHAINMAIL_SERVICE_TOKEN
  EMAIL_TRANSPORT=mailjet   Mailjet, the default: MAILJET_API_KEY and MAILJET_SECRET_KEY (or params)
  EMAIL_TRANSPORT=smtp      an SMTP server: SMTP_URL, e.g. smtps://user:password@smtp.example.com:465
  EMAIL_TRANSPORT=outbox    .eml files in OUTBOX_DIR (default ./data/outbox), nothing sent

Every setting is checked before a command runs: a bad one is named (exit 2).
All settings: docs/configuration.md in the chainmail repository.`;

export function buildProgram(): Command {
  const program = new Command()
    .name("chainmail")
    .description("Ethereum NFT transactions and batch email, as typed nodes")
    .version(packageVersion(), "-V, --version", "print the version of chainmail")
    // A command's options come after its name (`chainmail watch status --config f`: --config is status's own).
    .enablePositionalOptions()
    .exitOverride()
    // Every setting is checked before any command runs: a bad one is named at start (exit 2), never found midway.
    .hook("preAction", () => checkSettings(process.env));
  registerRun(program);
  registerNodes(program);
  registerIndexChain(program);
  registerDemo(program);
  registerServe(program);
  registerOutbox(program);
  registerMail(program);
  registerWatch(program);
  program.addHelpText("after", CHOICES_HELP);
  hintHelpAfterErrors(program);
  return program;
}

/**
 * After a usage error (an unknown or misspelt flag, with the closest known one suggested; a missing argument), one
 * line saying where the usage is, not the whole help again.
 */
function hintHelpAfterErrors(command: Command, path: readonly string[] = []): void {
  const name = [...path, command.name()].join(" ");
  command.showHelpAfterError(`See: ${name} --help`);
  for (const sub of command.commands) hintHelpAfterErrors(sub, [...path, command.name()]);
}
