#!/usr/bin/env node
/**
 * The `chainmail` command: a thin shell over the library. `chainmail --version` alone is answered before anything
 * else loads (it is what scripts and installers run to check the tool is there); every other command loads the
 * program and the modules of its own command only.
 */
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander prints for it: the package's version (package.json sits two levels above, in src/ and dist/).
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
  process.stdout.write(`${version}\n`);
} else {
  await main();
}

async function main(): Promise<void> {
  const [{ CommanderError }, { ChainmailError }, { EXIT, UsageError }, { buildProgram }] = await Promise.all([
    import("commander"),
    import("../core/errors.js"),
    import("./io.js"),
    import("./program.js"),
  ]);
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
}
