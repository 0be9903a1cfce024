/**
 * How the service answers with an error: every error is a `ChainmailError` whose code gives the status from
 * `ErrorCode`'s one table, and whose `toPayload()` gives the body. Fastify's own failures (a body that is not JSON,
 * too large or refused by Fastify) and the connection-level ones it never sees as requests are turned into one here.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ChainmailError, httpStatusOf, InvalidInputError } from "../core/errors.js";
import { JsonTooDeepError, MAX_JSON_DEPTH, stringifyJson } from "../core/json.js";
import type { ServerSettings } from "./settings.js";

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type("application/json; charset=utf-8").send(stringifyJson(body));
}

/**
 * Answers `{ error: payload }` with the status of the error's code. `status` overrides it only where HTTP itself
 * names a finer status than the code's (431 for oversized headers, Fastify's own 4xx).
 */
export function sendError(reply: FastifyReply, err: ChainmailError, status = httpStatusOf(err.code)): FastifyReply {
  return sendJson(reply, status, { error: err.toPayload() });
}

/** A request body that is not JSON, or nested deeper than MAX_JSON_DEPTH: the node's `invalid_input` shape. */
export function malformedBody(err: unknown): InvalidInputError {
  const reason = err instanceof Error ? err.message : String(err);
  const tooDeep = err instanceof JsonTooDeepError;
  const message = tooDeep
    ? `The request body is nested too deeply: ${reason}. Send the input object with at most ${MAX_JSON_DEPTH} levels of arrays and objects.`
    : `The request body is not valid JSON: ${reason}. Send the input object, keyed by input port.`;
  return new InvalidInputError([
    { field: "(body)", rule: tooDeep ? `at most ${MAX_JSON_DEPTH} levels` : "a JSON object", message },
  ]);
}

/** Fastify's error handler: a chainmail error as it is; Fastify's own failures in the same shape. */
export function errorHandler(settings: ServerSettings) {
  return (err: Error & { code?: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ChainmailError) return sendError(reply, err);
    if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      const tooLarge = new ChainmailError(
        "REQUEST_TOO_LARGE",
        `The request body is larger than ${settings.bodyLimitBytes} bytes.`,
        {
          hint: "Split the batch into smaller requests, or ask the operator to raise CHAINMAIL_BODY_LIMIT_BYTES.",
          details: { limit_bytes: settings.bodyLimitBytes },
        },
      );
      return sendError(reply, tooLarge);
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      const invalid = new ChainmailError("INVALID_INPUT", `The request is invalid: ${err.message}.`, {
        details: { violations: [] },
      });
      return sendError(reply, invalid, err.statusCode);
    }
    request.log.error({ err }, "request failed");
    return sendError(reply, new ChainmailError("INTERNAL", "Internal error in chainmail. Please report it."));
  };
}

/** No route: 404 `not_found`, naming the routes there are. */
export function notFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const missing = new ChainmailError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`, {
    hint: "Routes: POST /nodes/<node-id>, GET /nodes, POST /events/mailjet, GET /messages/<id>, GET /openapi.json, GET /docs, GET /metrics, GET /healthz.",
  });
  return sendError(reply, missing);
}

/**
 * A connection-level failure Fastify never sees as a request: the headers or the body did not arrive in time
 * (408 `receive_timeout`), or the bytes are not HTTP (400, 431 for oversized headers). Answered in the service's
 * error shape, then the socket is closed.
 */
export function clientError(err: Error & { code?: string }, socket: Duplex, settings: ServerSettings): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  let status: number;
  let failure: ChainmailError;
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    failure = new ChainmailError(
      "RECEIVE_TIMEOUT",
      `The request did not arrive in time: headers within ${settings.headersTimeoutMs} ms, the body within ${settings.bodyTimeoutMs} ms more.`,
      {
        hint: "Send the request at once; for a large body over a slow link, ask the operator to raise CHAINMAIL_BODY_TIMEOUT_MS.",
        details: { headers_timeout_ms: settings.headersTimeoutMs, body_timeout_ms: settings.bodyTimeoutMs },
      },
    );
    status = httpStatusOf(failure.code);
  } else {
    // Oversized headers have an HTTP status of their own, finer than invalid_input's 400.
    status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : httpStatusOf("invalid_input");
    const message = `The request is not valid HTTP/1.1${status === 431 ? " (its headers are too large)" : ""}.`;
    failure = new InvalidInputError([{ field: "(request)", rule: "an HTTP/1.1 request", message }]);
  }
  const body = stringifyJson({ error: failure.toPayload() });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
