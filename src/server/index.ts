/** The HTTP service: `startServer` for the CLI and the demo, `buildApp` for tests. */
import type { Config } from "../core/config.js";
import { checkSettings, setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import { buildApp, type LoggerOption } from "./app.js";

export { type AppOptions, buildApp, type LoggerOption, statusOf } from "./app.js";
export { loadServerSettings, type ServerSettings } from "./settings.js";

export interface ServerOptions {
  port?: number;
  host?: string;
  config?: Config;
  /** Structured request logs (pino): `true` for JSON lines on stdout; off by default for library use. */
  logger?: LoggerOption;
  /** Bearer tokens; overrides CHAINMAIL_TOKENS. */
  tokens?: string[];
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  /** Stops taking connections, finishes the requests in flight, then resolves. */
  close(): Promise<void>;
}

/**
 * Starts the service. Port and host default to CHAINMAIL_PORT / CHAINMAIL_HOST of the configuration's
 * environment, else 8080 / 127.0.0.1; port 0 picks a free one. Throws a clear error when the settings are unsafe
 * (default credentials configured without CHAINMAIL_TOKENS) or invalid.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  // Every setting at start, as every command checks them: a bad one is named now, not at the first request.
  checkSettings(options.config?.env ?? process.env);
  const app = await buildApp({
    ...(options.config ? { config: options.config } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.tokens ? { tokens: options.tokens } : {}),
  });
  const env = options.config?.env ?? process.env;
  const port = options.port ?? setting(env, "CHAINMAIL_PORT");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ChainmailError(
      "INVALID_INPUT",
      `The port ${JSON.stringify(options.port)} is invalid: must be an integer from 0 to 65535.`,
      {
        details: { setting: "CHAINMAIL_PORT" },
      },
    );
  }
  const host = options.host ?? setting(env, "CHAINMAIL_HOST");
  try {
    await app.listen({ port, host });
  } catch (err) {
    await app.close();
    throw listenError(err, host, options.host === undefined);
  }
  const address = app.server.address();
  const bound = typeof address === "object" && address ? address.port : port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  return { url: `http://${shownHost}:${bound}`, close: () => app.close() };
}

/** Errors of `listen` that mean the host is not an address of this machine (or no name that resolves). */
const NOT_HERE = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EADDRNOTAVAIL"]);

/**
 * A host that passes the rules of a host name but is no address of this machine is found only by listening on it:
 * that refusal names the host and where it came from, as a bad setting is (`invalid_input`), not as Node words it.
 */
function listenError(err: unknown, host: string, fromSetting: boolean): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !NOT_HERE.has(code)) return err;
  const source = fromSetting ? `Setting CHAINMAIL_HOST=${JSON.stringify(host)}` : `The host ${JSON.stringify(host)}`;
  return new ChainmailError(
    "INVALID_INPUT",
    `${source} is invalid: it is not an address of this machine, nor a name of one (${code}).`,
    {
      hint: "Use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of this machine's addresses.",
      ...(fromSetting ? { details: { setting: "CHAINMAIL_HOST" } } : {}),
    },
  );
}
