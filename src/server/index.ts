/** The HTTP service (issue 4). Placeholder with the agreed signature until it lands. */
import type { Config } from "../core/config.js";

export interface ServerOptions {
  port?: number;
  host?: string;
  config?: Config;
  /** Structured request logs (pino) on stdout; off by default for library use. */
  logger?: boolean;
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

export async function startServer(_options: ServerOptions = {}): Promise<RunningServer> {
  throw new Error("chainmail serve is not available in this build");
}
