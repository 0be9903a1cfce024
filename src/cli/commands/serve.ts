/** `chainmail serve [--port N] [--host H]`: the HTTP service, JSON logs on stdout, graceful stop on SIGTERM/SIGINT. */
import cluster from "node:cluster";
import type { Command } from "commander";
import { checkSettings, HOST_RULE, isHost, setting } from "../../core/env.js";
import { integerOption, UsageError } from "../io.js";

interface ServeOptions {
  port?: string;
  host?: string;
}

const say = (line: string) => process.stderr.write(`chainmail serve: ${line}\n`);

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
      const workers = setting(process.env, "CHAINMAIL_WORKERS");
      if (workers > 1 && cluster.isPrimary) {
        checkSettings(process.env); // a bad setting named once, here, rather than by each worker
        const { superviseWorkers } = await import("../../server/workers.js");
        process.exit(await superviseWorkers(workers, say));
      }
      const { startServer } = await import("../../server/index.js");
      const { isServeWorker, reportListening } = await import("../../server/workers.js");
      const worker = isServeWorker();
      const server = await startServer({
        ...(port !== undefined ? { port } : {}),
        ...(options.host ? { host: options.host } : {}),
        logger: true,
      }).catch((err: unknown) => {
        // A worker's channel to its primary would keep it running after the error is reported; closed so, the worker
        // still ends with the error's exit code (cluster ends one whose channel closes otherwise with 0).
        if (worker) cluster.worker?.disconnect();
        throw err;
      });
      // A worker's primary says these once for all of them.
      if (worker) reportListening(server.url);
      else say(`listening on ${server.url} (API page: ${server.url}/docs)`);
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        if (!worker) say(`${signal}, finishing requests in flight`);
        server.close().then(
          () => process.exit(0),
          (err: unknown) => {
            say(err instanceof Error ? err.message : String(err));
            process.exit(1);
          },
        );
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
}
