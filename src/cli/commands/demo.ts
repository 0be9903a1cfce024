/** `chainmail demo` (what `npm start` runs): the embedded demo, up until Ctrl-C, then everything it started stops. */
import type { Command } from "commander";
import { EXIT, integerOption } from "../io.js";

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
      // First signal: orderly stop. A second one while stopping: exit at once (the exit hook still kills anvil).
      let signals = 0;
      const stopped = new Promise<NodeJS.Signals>((resolve) => {
        const onSignal = (signal: NodeJS.Signals) => {
          if (++signals > 1) process.exit(130);
          resolve(signal);
        };
        process.on("SIGINT", onSignal);
        process.on("SIGTERM", onSignal);
        process.on("SIGHUP", onSignal);
      });
      const { startDemo } = await import("../../demo/demo.js");
      const demo = await startDemo({
        dataDir: options.dataDir,
        ...(port !== undefined ? { port } : {}),
        ...(options.host ? { host: options.host } : {}),
      });
      process.stdout.write("\nRunning. Press Ctrl-C to stop the service, the indexer and anvil.\n");
      const signal = await stopped;
      process.stdout.write(`\n${signal}: stopping…\n`);
      await demo.stop();
      process.stdout.write("Stopped: service, indexer and anvil are down.\n");
      process.exitCode = EXIT.OK;
    });
}
