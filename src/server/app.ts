/**
 * The HTTP service as a Fastify app: every node of the registry at `POST /nodes/<node-id>`, served generically
 * through `runNode` (validation lives in the node), plus `/nodes`, `/openapi.json`, `/docs`, `/metrics` and
 * `/healthz`. Bodies are read with `parseJson` and written with `stringifyJson` so integers beyond 2^53 stay
 * exact; Fastify's own validation and serialisation are not used.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { type Config, defaultConfig } from "../core/config.js";
import { ChainmailError, type ErrorPayload, httpStatusOf, invalidInput, toErrorPayload } from "../core/errors.js";
import { JsonTooDeepError, MAX_JSON_DEPTH, parseJson, stringifyJson } from "../core/json.js";
import { type AnyNode, describeNode, type GenericOutput, runNode } from "../core/node.js";
import { nodes as registry } from "../nodes/index.js";
import { bearerChecker } from "./auth.js";
import { bigintForm, inForm } from "./integers.js";
import { createMetrics, indexLag, type ServiceMetrics } from "./metrics.js";
import { buildOpenApi } from "./openapi.js";
import { loadServerSettings, type ServerSettings } from "./settings.js";

/** Where structured logs go: `true` for JSON lines on stdout, or a level and a destination. */
export type LoggerOption = boolean | { level?: string; stream?: { write(line: string): void } };

export interface AppOptions {
  config?: Config;
  logger?: LoggerOption;
  /** Bearer tokens; overrides CHAINMAIL_TOKENS (e.g. for the demo). */
  tokens?: string[];
  /** The nodes to serve; the full registry by default. */
  nodes?: Readonly<Record<string, AnyNode>>;
}

declare module "fastify" {
  interface FastifyInstance {
    chainmail: { settings: ServerSettings; metrics: ServiceMetrics; openapi: Record<string, unknown> };
  }
  interface FastifyContextConfig {
    /** The node a route serves, for metrics. */
    node?: string;
  }
}

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

/** Time the node gets to report a cancelled run itself before the service answers 504 on its own. */
const ABORT_GRACE_MS = 1_000;

const version: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
  } catch {
    return "0.0.0";
  }
})();

function loggerOptions(option: LoggerOption | undefined) {
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

/**
 * A connection-level failure Fastify never sees as a request: the headers or the body did not arrive in time
 * (408 `receive_timeout`), or the bytes are not HTTP (400, 431 for oversized headers). Answered in the service's
 * error shape, then the socket is closed.
 */
function clientError(err: Error & { code?: string }, socket: Duplex, settings: ServerSettings): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  let status: number;
  let payload: ErrorPayload;
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    status = 408;
    payload = new ChainmailError(
      "RECEIVE_TIMEOUT",
      `The request did not arrive in time: headers within ${settings.headersTimeoutMs} ms, the body within ${settings.bodyTimeoutMs} ms more.`,
      {
        hint: "Send the request at once; for a large body over a slow link, ask the operator to raise CHAINMAIL_BODY_TIMEOUT_MS.",
        details: { headers_timeout_ms: settings.headersTimeoutMs, body_timeout_ms: settings.bodyTimeoutMs },
      },
    ).toPayload();
  } else {
    status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
    const message = `The request is not valid HTTP/1.1${status === 431 ? " (its headers are too large)" : ""}.`;
    payload = invalidInput([{ field: "(request)", rule: "an HTTP/1.1 request", message }]);
  }
  const body = stringifyJson({ error: payload });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** A request body that is not JSON, in the node's `invalid_input` shape. */
class MalformedBody extends Error {
  readonly statusCode = 400;
  /** Valid JSON nested deeper than MAX_JSON_DEPTH, rather than broken text. */
  readonly tooDeep: boolean;
  constructor(err: unknown) {
    super(err instanceof Error ? err.message : String(err));
    this.tooDeep = err instanceof JsonTooDeepError;
  }
}

function malformedPayload(err: MalformedBody): ErrorPayload {
  const message = err.tooDeep
    ? `The request body is nested too deeply: ${err.message}. Send the input object with at most ${MAX_JSON_DEPTH} levels of arrays and objects.`
    : `The request body is not valid JSON: ${err.message}. Send the input object, keyed by input port.`;
  return invalidInput([
    { field: "(body)", rule: err.tooDeep ? `at most ${MAX_JSON_DEPTH} levels` : "a JSON object", message },
  ]);
}

function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type("application/json; charset=utf-8").send(stringifyJson(body));
}

/** 200 when only the success port fired; otherwise the status of the error code, even beside partial results. */
export function statusOf(node: AnyNode, output: GenericOutput): number {
  if (output.error) return httpStatusOf(output.error.details?.code);
  return node.successPort in output ? 200 : 500;
}

export async function buildApp(options: AppOptions = {}): Promise<FastifyInstance> {
  const config = options.config ?? defaultConfig();
  const nodes = options.nodes ?? registry;
  const settings = loadServerSettings(config, options.tokens ? { tokens: options.tokens } : {});
  // With the own index (alone or with OpenSea), /healthz and /metrics also report it (loaded on demand, like the source).
  const indexStatus =
    config.nftSource === "index" || config.nftSource === "index+opensea"
      ? async () => (await import("../sources/index/source.js")).indexStatus(config)
      : undefined;
  const metrics = createMetrics(indexStatus);
  const checkBearer = bearerChecker(settings.tokens);
  const openapi = buildOpenApi(Object.values(nodes), {
    auth: settings.tokens.length > 0,
    bodyLimitBytes: settings.bodyLimitBytes,
    version,
  });

  const receiveTimeoutMs = settings.headersTimeoutMs + settings.bodyTimeoutMs;
  const app = Fastify({
    logger: loggerOptions(options.logger),
    bodyLimit: settings.bodyLimitBytes,
    // Slow clients are cut, each kind after its own time (Node checks every second): headers (also the idle time of
    // a kept-alive socket between requests), then the body. The node's own run time is CHAINMAIL_REQUEST_TIMEOUT_MS.
    http: {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: receiveTimeoutMs,
      connectionsCheckingInterval: Math.min(1_000, settings.headersTimeoutMs),
    },
    keepAliveTimeout: settings.headersTimeoutMs,
    requestTimeout: receiveTimeoutMs,
    clientErrorHandler: (err, socket) => clientError(err, socket, settings),
    // A caller's X-Request-Id is kept when it is a plain short token (it goes into logs and a header).
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
    },
    // Requests arriving on kept-alive sockets while closing get our own 503 (onRequest below).
    return503OnClosing: false,
    forceCloseConnections: "idle",
  });
  app.decorate("chainmail", { settings, metrics, openapi });
  app.server.maxConnections = settings.maxConnections;

  // Every body is JSON, whatever the Content-Type says (curl -d sends form encoding by default).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJson(body as string));
    } catch (err) {
      done(new MalformedBody(err), undefined);
    }
  });

  // While closing, answers in flight also close their connection: a kept-alive socket would hold close() open.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
    app.server.closeIdleConnections();
  });
  app.addHook("onRequest", async (request, reply) => {
    reply.header("x-request-id", request.id);
    if (closing) {
      const payload = new ChainmailError("SHUTTING_DOWN", "The service is shutting down.", {
        hint: "Retry on another instance or after it restarts.",
      }).toPayload();
      return sendJson(reply.header("connection", "close"), 503, { error: payload });
    }
  });
  // An answer given before the body arrived (401/403 and unknown nodes are checked first, 413 stops reading) closes
  // the connection: otherwise the socket would stay open while the client trickles a body nobody reads.
  app.addHook("onSend", async (request, reply) => {
    if (closing || !request.raw.complete) reply.header("connection", "close");
  });
  app.addHook("onResponse", async (request, reply) => {
    metrics.observeRequest(
      {
        route: request.routeOptions.url ?? "(unmatched)",
        node: request.routeOptions.config.node ?? "",
        status: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
  });

  app.setErrorHandler((err: Error & { code?: string; statusCode?: number }, request, reply) => {
    if (err instanceof MalformedBody) return sendJson(reply, 400, { error: malformedPayload(err) });
    if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      const payload = new ChainmailError(
        "REQUEST_TOO_LARGE",
        `The request body is larger than ${settings.bodyLimitBytes} bytes.`,
        {
          hint: "Split the batch into smaller requests, or ask the operator to raise CHAINMAIL_BODY_LIMIT_BYTES.",
          details: { limit_bytes: settings.bodyLimitBytes },
        },
      ).toPayload();
      return sendJson(reply, 413, { error: payload });
    }
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      const message = `The request is invalid: ${err.message}.`;
      return sendJson(reply, err.statusCode, {
        error: { error: message, details: { code: "invalid_input", violations: [] } },
      });
    }
    request.log.error({ err }, "request failed");
    return sendJson(reply, 500, {
      error: { error: "Internal error in chainmail. Please report it.", details: { code: "internal" } },
    });
  });

  app.setNotFoundHandler((request, reply) => {
    const payload = new ChainmailError("NOT_FOUND", `No route ${request.method} ${request.url.split("?")[0]}.`, {
      hint: "Routes: POST /nodes/<node-id>, GET /nodes, GET /openapi.json, GET /docs, GET /metrics, GET /healthz.",
    }).toPayload();
    return sendJson(reply, 404, { error: payload });
  });

  // Runs before the body is read: an unauthenticated caller cannot make the service parse a large body.
  const requireToken = async (request: FastifyRequest, reply: FastifyReply) => {
    const refusal = checkBearer(request.headers.authorization);
    if (refusal) return sendJson(reply, httpStatusOf(refusal.details.code), { error: refusal });
  };

  const runOne = async (node: AnyNode, request: FastifyRequest, reply: FastifyReply) => {
    const asked = bigintForm(request.query);
    if ("error" in asked) return sendJson(reply, 400, { error: asked.error });
    const controller = new AbortController();
    let hardStop: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => controller.abort(), settings.requestTimeoutMs);
    const deadline = new Promise<undefined>((resolve) => {
      hardStop = setTimeout(() => resolve(undefined), settings.requestTimeoutMs + ABORT_GRACE_MS);
    });
    try {
      const run = runNode(node, request.body, {
        config,
        logger: request.log,
        signal: controller.signal,
        onUpstreamAttempt: metrics.observeAttempt,
      }) as Promise<GenericOutput>;
      let output = await Promise.race([run, deadline]);
      if (!output || (controller.signal.aborted && output.error?.details.code === "aborted")) {
        const timeout = new ChainmailError(
          "REQUEST_TIMEOUT",
          `${node.id} did not finish within ${settings.requestTimeoutMs} ms.`,
          {
            hint: "Try again later, ask for a smaller page or batch, or ask the operator to raise CHAINMAIL_REQUEST_TIMEOUT_MS.",
            details: { timeout_ms: settings.requestTimeoutMs },
          },
        ).toPayload();
        output = { ...(output ?? {}), error: timeout };
      }
      return sendJson(reply, statusOf(node, output), inForm(output, asked.form));
    } finally {
      clearTimeout(timer);
      clearTimeout(hardStop);
    }
  };

  for (const node of Object.values(nodes)) {
    app.post(`/nodes/${node.id}`, { config: { node: node.id }, onRequest: requireToken }, (request, reply) =>
      runOne(node, request, reply),
    );
  }
  // Answered before the body is read, so the caller learns which nodes exist whatever it sent.
  const unknownNode = async (request: FastifyRequest, reply: FastifyReply) => {
    const { id } = request.params as { id: string };
    const known = Object.keys(nodes);
    const payload = new ChainmailError("UNKNOWN_NODE", `Unknown node "${id}". Nodes: ${known.join(", ")}.`, {
      details: { nodes: known },
    }).toPayload();
    return sendJson(reply, 404, { error: payload });
  };
  app.post("/nodes/:id", { onRequest: [requireToken, unknownNode] }, () => {
    throw new Error("unreachable: unknownNode answers first");
  });

  app.get("/nodes", (_request, reply) => sendJson(reply, 200, Object.values(nodes).map(describeNode)));
  app.get("/openapi.json", (_request, reply) => sendJson(reply, 200, openapi));
  app.get("/healthz", async (_request, reply) => {
    if (!indexStatus) return sendJson(reply, 200, { status: "ok" });
    try {
      const status = await indexStatus();
      return sendJson(reply, 200, {
        status: "ok",
        index: {
          last_block: status.lastBlock,
          head_block: status.headBlock,
          lag_blocks: indexLag(status),
          head_seen_at: status.headSeenAt === null ? null : new Date(status.headSeenAt).toISOString(),
          records: status.records,
        },
      });
    } catch (err) {
      // A replica that cannot read the index should get no traffic.
      return sendJson(reply, 503, { status: "unavailable", index: { error: toErrorPayload(err) } });
    }
  });
  app.get("/metrics", async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );

  await app.register(swagger, { mode: "static", specification: { document: openapi as never } });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { deepLinking: true, displayOperationId: true },
    theme: { title: "chainmail API" },
  });
  return app;
}
