#!/usr/bin/env node
/** The `chainmail` command: a thin shell over the library. */
import { Command, CommanderError } from "commander";
import { ChainmailError } from "../core/errors.js";
import { registerDemo } from "./commands/demo.js";
import { registerIndexChain } from "./commands/index-chain.js";
import { registerNodes } from "./commands/nodes.js";
import { registerOutbox } from "./commands/outbox.js";
import { registerRun } from "./commands/run.js";
import { registerServe } from "./commands/serve.js";
import { registerWatch } from "./commands/watch.js";
import { EXIT, UsageError } from "./io.js";

const program = new Command()
  .name("chainmail")
  .description("Ethereum NFT transactions and batch email, as typed nodes")
  .showHelpAfterError()
  .exitOverride();

registerRun(program);
registerNodes(program);
registerIndexChain(program);
registerDemo(program);
registerServe(program);
registerOutbox(program);
registerWatch(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  } else if (err instanceof UsageError || (err instanceof ChainmailError && err.code === "invalid_input")) {
    process.stderr.write(`chainmail: ${err.message}\n`);
    process.exitCode = EXIT.USAGE;
  } else {
    process.stderr.write(`chainmail: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT.ERROR;
  }
}
