/** The `chainmail` command line as one commander program: every command, `--version`, and how usage errors read. */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { checkSettings } from "../core/env.js";
import { nftSourceChoices } from "../sources/catalog.js";
import { mailTransportChoices } from "../transports/catalog.js";
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

/** One choice's lines of the help: `  NFT_SOURCE=<id>` then its words, further lines under its words. */
function choiceLines(variable: string, choice: { id: string; help: readonly string[] }): string[] {
  const name = `  ${`${variable}=${choice.id}`.padEnd(24)}  `;
  return choice.help.map((line, at) => `${at === 0 ? name : " ".repeat(name.length)}${line}`);
}

/**
 * The settings that choose where records come from and where mail goes, with the credentials each choice needs
 * (each source's and transport's definition says them): what someone told `params.api_key is required` looks for
 * (every setting: docs/configuration.md).
 */
export function choicesHelp(): string {
  return [
    "",
    "Where records come from and where mail goes (environment variables):",
    ...nftSourceChoices().flatMap((choice) => choiceLines("NFT_SOURCE", choice)),
    ...mailTransportChoices().flatMap((choice) => choiceLines("EMAIL_TRANSPORT", choice)),
    "",
    "Every setting is checked before a command runs: a bad one is named (exit 2).",
    "All settings: docs/configuration.md in the chainmail repository.",
  ].join("\n");
}

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
  program.addHelpText("after", choicesHelp());
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
