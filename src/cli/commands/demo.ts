/** `chainmail demo` (what `npm start` runs): the embedded demo, up until Ctrl-C, then everything it started stops. */
import type { Command } from "commander";
import { EXIT, integerOption } from "../io.js";

/** Writes the last line, then ends the process: work the stop abandoned (a call to a dead anvil) must not hold it. */
const exitWith = (line: string, code: number) => process.stdout.write(line, () => process.exit(code));

/** How long a failed start-up step waits for the Ctrl-C that may have caused it. */
const SIGNAL_LAG_MS = 1_000;

/** Resolves when `signal` aborts, or after `ms`. */
function abortWithin(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .description(
      "Start a local dev chain with NFT activity, index it, serve it over HTTP and query it once; Ctrl-C stops it all",
    )
    .option("--port <n>", "port of the HTTP service (default CHAINMAIL_PORT or 8080; a free one if taken)")
    .option("--host <host>", "host of the HTTP service (default CHAINMAIL_HOST or 127.0.0.1)")
    .option("--data-dir <dir>", "where the demo's index lives; wiped on every start", "data/demo")
    .action(async (options: { port?: string; host?: string; dataDir: string }) => {
      const port = integerOption("--port", options.port, 65535);
      // The chain tooling is an optional peer: without it, say what to install before anything starts.
      const { demoInstallMessage, missingDemoPackages } = await import("../../demo/requirements.js");
      const missing = missingDemoPackages();
      if (missing.length > 0) throw new Error(demoInstallMessage(missing));
      // One Ctrl-C at any moment, start-up included, stops everything (a terminal's Ctrl-C also reaches anvil, in the
      // same process group). A second one while stopping: exit at once (the exit hook still kills anvil).
      const stopping = new AbortController();
      let signals = 0;
      const onSignal = (signal: NodeJS.Signals) => {
        if (++signals > 1) process.exit(130);
        process.stdout.write(`\n${signal}: stopping…\n`);
        stopping.abort(signal);
      };
      process.on("SIGINT", onSignal).on("SIGTERM", onSignal).on("SIGHUP", onSignal);
      const { startDemo } = await import("../../demo/demo.js");
      let demo: Awaited<ReturnType<typeof startDemo>>;
      try {
        demo = await startDemo({
          dataDir: options.dataDir,
          signal: stopping.signal,
          ...(port !== undefined ? { port } : {}),
          ...(options.host ? { host: options.host } : {}),
        });
      } catch (err) {
        // A terminal's Ctrl-C reaches anvil too, which may die before this process handles its own SIGINT: the step
        // it broke then fails first. A failure the signal follows within a second is that stop, not an error.
        if (!stopping.signal.aborted) await abortWithin(stopping.signal, SIGNAL_LAG_MS);
        if (!stopping.signal.aborted) throw err;
        exitWith("Stopped during start-up: what had started (service, indexer, watch, anvil) is down.\n", EXIT.OK);
        return;
      }
      process.stdout.write("\nRunning. Press Ctrl-C to stop the service, the indexer, the watch and anvil.\n");
      if (!stopping.signal.aborted) await new Promise((resolve) => stopping.signal.addEventListener("abort", resolve));
      await demo.stop();
      exitWith("Stopped: service, indexer, watch and anvil are down.\n", EXIT.OK);
    });
}
