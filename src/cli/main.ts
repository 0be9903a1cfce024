#!/usr/bin/env node
/** The `chainmail` command: a thin shell over the library. */
import { CommanderError } from "commander";
import { ChainmailError } from "../core/errors.js";
import { EXIT, UsageError } from "./io.js";
import { buildProgram } from "./program.js";

try {
  await buildProgram().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander has said what was wrong (and printed help or the version when asked to).
    process.exitCode = err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  } else if (err instanceof UsageError || (err instanceof ChainmailError && err.code === "invalid_input")) {
    process.stderr.write(`chainmail: ${err.message}\n`);
    process.exitCode = EXIT.USAGE;
  } else {
    process.stderr.write(`chainmail: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = EXIT.ERROR;
  }
}
