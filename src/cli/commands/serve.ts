/** `chainmail serve [--port N] [--host H]`: the HTTP service, JSON logs on stdout, graceful stop on SIGTERM/SIGINT. */
import type { Command } from "commander";
import { HOST_RULE, isHost } from "../../core/env.js";
import { integerOption, UsageError } from "../io.js";

interface ServeOptions {
  port?: string;
  host?: string;
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("Start the HTTP service (POST /nodes/<node-id>, GET /nodes, /openapi.json, /docs, /metrics, /healthz)")
    .option("-p, --port <n>", "port to listen on (default: CHAINMAIL_PORT or 8080)")
    .option("-H, --host <host>", "address to listen on (default: CHAINMAIL_HOST or 127.0.0.1)")
    .action(async (options: ServeOptions) => {
      const port = integerOption("--port", options.port, 65535);
      if (options.host !== undefined && !isHost(options.host))
        throw new UsageError(`--host ${JSON.stringify(options.host)} is invalid: must be ${HOST_RULE}`);
      const { startServer } = await import("../../server/index.js");
      const server = await startServer({
        ...(port !== undefined ? { port } : {}),
        ...(options.host ? { host: options.host } : {}),
        logger: true,
      });
      process.stderr.write(`chainmail serve: listening on ${server.url} (API page: ${server.url}/docs)\n`);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        process.stderr.write(`chainmail serve: ${signal}, finishing requests in flight\n`);
        server.close().then(
          () => process.exit(0),
          (err: unknown) => {
            process.stderr.write(`chainmail serve: ${err instanceof Error ? err.message : String(err)}\n`);
            process.exit(1);
          },
        );
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
}
