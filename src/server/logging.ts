/** What the service's structured logs hold, and what they never hold: secrets and query strings. */
import { type FastifyBaseLogger, type FastifyReply, type FastifyRequest, LogController } from "fastify";

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
 * One access line per request instead of Fastify's two: `request completed` (or `request errored`) carries what
 * `incoming request` said of the request (`req`) beside the status and `responseTime`. Each line is a JSON
 * serialisation and a synchronous write, a measurable share of a request's CPU (issue 24). The `request completed`
 * line is written without the redaction pass, which was most of its cost and has nothing to find in it: `req` is
 * `requestForLog`'s (no headers, no query string, no params), `res` is Fastify's (the status code), the rest are a
 * request id and a number. Every other line, `request errored` included, is redacted as before.
 */
export class AccessLog extends LogController {
  /** The service's logger without redaction, made once from the first request's. */
  private plain: FastifyBaseLogger | undefined;

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, "request errored");
      return;
    }
    this.plain ??= request.server.log.child({}, { redact: [] });
    this.plain.info(
      { reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime },
      "request completed",
    );
  }
}

/**
 * What the access line (`req`) says of a request: Fastify's fields, with the query string redacted whole, since
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
