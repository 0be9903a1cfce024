/** What the service's structured logs hold, and what they never hold: secrets and query strings. */
import type { FastifyRequest } from "fastify";

/** Where structured logs go: `true` for JSON lines on stdout, or a level and a destination. */
export type LoggerOption = boolean | { level?: string; stream?: { write(line: string): void } };

/** Secrets that must never reach a log line, wherever a caller's object ends up. */
const REDACT = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  "params.api_key",
  "params.password",
  'params["user id"]',
  "*.params.api_key",
  "*.params.password",
  '*.params["user id"]',
];

/** Fastify's `logger` option for a `LoggerOption`. */
export function loggerOptions(option: LoggerOption | undefined) {
  if (!option) return false;
  const { level = "info", stream } = option === true ? {} : option;
  return {
    level,
    redact: { paths: REDACT, censor: "[REDACTED]" },
    serializers: { req: requestForLog },
    ...(stream ? { stream } : {}),
  };
}

/**
 * What the `incoming request` line says of a request: Fastify's fields, with the query string redacted whole, since
 * callers put tokens and keys there (`?access_token=…`) and a parameter's name may be the secret itself.
 */
function requestForLog(request: FastifyRequest) {
  const query = request.url.indexOf("?");
  return {
    method: request.method,
    url: query === -1 ? request.url : `${request.url.slice(0, query)}?[REDACTED]`,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
