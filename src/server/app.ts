/**
 * The HTTP service as a Fastify app: the nodes at `POST /nodes/<node-id>` (node-routes.ts), plus `/nodes`,
 * `/openapi.json`, `/docs`, `/metrics` and `/healthz`. Bodies are read with `parseJson` and written with
 * `stringifyJson` so integers beyond 2^53 stay exact; Fastify's own validation and serialisation are not used.
 * Errors are answered by replies.ts, each with the status of its code.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import Fastify, { type FastifyInstance } from "fastify";
import { type Config, defaultConfig } from "../core/config.js";
import { ChainmailError, toErrorPayload } from "../core/errors.js";
import { parseJson } from "../core/json.js";
import { type AnyNode, describeNode } from "../core/node.js";
import { closeMailStores } from "../mail/open.js";
import { nodes as registry } from "../nodes/index.js";
import type { IndexStatus } from "../sources/own-index/index.js";
import { AccessLog, type LoggerOption, loggerOptions } from "./logging.js";
import { registerMailRoutes } from "./mail-routes.js";
import { createMetrics, indexLag, type ServiceMetrics } from "./metrics.js";
import { registerNodeRoutes } from "./node-routes.js";
import { buildOpenApi } from "./openapi.js";
import { clientError, errorHandler, malformedBody, notFound, sendError, sendJson } from "./replies.js";
import { loadServerSettings, type ServerSettings } from "./settings.js";
import { registerUnsubscribeRoutes } from "./unsubscribe-routes.js";
import { clusterMetrics, isServeWorker } from "./workers.js";

export type { LoggerOption } from "./logging.js";
export { statusOf } from "./node-routes.js";

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

const version: string = (() => {
  try {
    return JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")).version;
  } catch {
    return "0.0.0";
  }
})();

export async function buildApp(options: AppOptions = {}): Promise<FastifyInstance> {
  const config = options.config ?? defaultConfig();
  const nodes = options.nodes ?? registry;
  const settings = loadServerSettings(config, options.tokens ? { tokens: options.tokens } : {});
  // With the own index (alone or with OpenSea), /healthz and /metrics also report it (loaded on demand, like the source).
  const indexStatus =
    config.nftSource === "index" || config.nftSource === "index+opensea"
      ? async () => (await import("../sources/own-index/index.js")).indexStatus(config)
      : undefined;
  const metrics = createMetrics(indexStatus);
  const openapi = buildOpenApi(Object.values(nodes), {
    auth: settings.tokens.length > 0,
    bodyLimitBytes: settings.bodyLimitBytes,
    version,
  });

  const app = createFastify(settings, options.logger);
  app.decorate("chainmail", { settings, metrics, openapi });
  app.server.maxConnections = settings.maxConnections;
  addHooks(app, metrics);
  app.setErrorHandler(errorHandler(settings));
  app.setNotFoundHandler(notFound);

  registerNodeRoutes(app, { config, settings, metrics, nodes });
  registerMailRoutes(app, config, settings);
  registerUnsubscribeRoutes(app, config);
  app.addHook("onClose", closeMailStores);
  app.get("/nodes", (_request, reply) => sendJson(reply, 200, Object.values(nodes).map(describeNode)));
  app.get("/openapi.json", (_request, reply) => sendJson(reply, 200, openapi));
  app.get("/healthz", async (_request, reply) => {
    const { status, body } = await health(indexStatus);
    return sendJson(reply, status, body);
  });
  // One of `chainmail serve`'s workers reports them all (workers.ts).
  const metricsText = isServeWorker() ? clusterMetrics(metrics.registry) : () => metrics.registry.metrics();
  app.get("/metrics", async (_request, reply) => reply.type(metrics.registry.contentType).send(await metricsText()));

  await app.register(swagger, { mode: "static", specification: { document: openapi as never } });
  await app.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { deepLinking: true, displayOperationId: true },
    theme: { title: "chainmail API" },
  });
  return app;
}

/** A Fastify instance with the service's limits, timeouts, request ids and JSON-only body parsing. */
function createFastify(settings: ServerSettings, logger: LoggerOption | undefined): FastifyInstance {
  const receiveTimeoutMs = settings.headersTimeoutMs + settings.bodyTimeoutMs;
  const app = Fastify({
    logger: loggerOptions(logger),
    ...(logger ? { logController: new AccessLog() } : {}),
    bodyLimit: settings.bodyLimitBytes,
    // Unsubscribe tokens (up to 2048 characters) and CustomIDs travel in the path; the routes bound them themselves.
    routerOptions: { maxParamLength: 4096 },
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
  // Every body is JSON, whatever the Content-Type says (curl -d sends form encoding by default).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, parseJson(body as string));
    } catch (err) {
      done(malformedBody(err), undefined);
    }
  });
  return app;
}

/** Request ids, metrics, and closing: refusing new requests and closing connections while shutting down. */
function addHooks(app: FastifyInstance, metrics: ServiceMetrics): void {
  // While closing, answers in flight also close their connection: a kept-alive socket would hold close() open.
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
    app.server.closeIdleConnections();
  });
  // Callback-style hooks: an async one costs a promise and its resolution on every request.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    if (!closing) return done();
    const refusal = new ChainmailError("SHUTTING_DOWN", "The service is shutting down.", {
      hint: "Retry on another instance or after it restarts.",
    });
    sendError(reply.header("connection", "close"), refusal);
  });
  // An answer given before the body arrived (401/403 and unknown nodes are checked first, 413 stops reading) closes
  // the connection: otherwise the socket would stay open while the client trickles a body nobody reads.
  app.addHook("onSend", (request, reply, payload, done) => {
    if (closing || !request.raw.complete) reply.header("connection", "close");
    done(null, payload);
  });
  app.addHook("onResponse", (request, reply, done) => {
    metrics.observeRequest(
      {
        route: request.routeOptions.url ?? "(unmatched)",
        node: request.routeOptions.config.node ?? "",
        status: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    done();
  });
}

/** `/healthz`: ok, with the own index's progress when the service reads one; 503 when it cannot read it. */
async function health(
  indexStatus: (() => Promise<IndexStatus>) | undefined,
): Promise<{ status: number; body: unknown }> {
  if (!indexStatus) return { status: 200, body: { status: "ok" } };
  try {
    const status = await indexStatus();
    return {
      status: 200,
      body: {
        status: "ok",
        index: {
          last_block: status.lastBlock,
          head_block: status.headBlock,
          lag_blocks: indexLag(status),
          head_seen_at: status.headSeenAt === null ? null : new Date(status.headSeenAt).toISOString(),
          records: status.records,
        },
      },
    };
  } catch (err) {
    // A replica that cannot read the index should get no traffic.
    return { status: 503, body: { status: "unavailable", index: { error: toErrorPayload(err) } } };
  }
}
