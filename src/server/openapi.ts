/**
 * The OpenAPI 3.1 document, generated from the node port schemas (the same ones `runNode` validates with), so the
 * document, `/docs` and the service cannot drift apart. Named schemas (TypeBox `$id`) become shared components.
 *
 * It passes Redocly's recommended rules whether or not the service requires tokens: the `bearer` scheme is always
 * declared and every operation says whether it needs it. Integers that can go beyond 2^53 are described as what
 * the service writes for them: a JSON integer, or with `?bigint=string` a string of decimal digits.
 */
import type { TSchema } from "@sinclair/typebox";
import type { AnyNode } from "../core/node.js";
import { ErrorPayloadSchema } from "../schemas/common.js";
import { nftSourceChoices } from "../sources/catalog.js";
import { mailTransportChoices } from "../transports/catalog.js";
import { BIGINT_FORMS, BIGINT_PARAMETER } from "./integers.js";
import { mailPaths } from "./openapi-mail.js";
import { bearerSecurity, documentSchema, type Json, json } from "./openapi-parts.js";

export interface OpenApiOptions {
  /** Whether the node routes require `Authorization: Bearer <token>`. */
  auth: boolean;
  /** Largest request body, for the 413 description. */
  bodyLimitBytes: number;
  version: string;
}

/** The query parameter that asks for integers beyond 2^53 as digit strings. */
const bigintParameter = {
  name: BIGINT_PARAMETER,
  in: "query",
  required: false,
  description:
    "How the answer writes integers beyond 2^53 (ERC-1155 quantities, token ids given as integers, Mailjet MessageIDs): `number` as bare JSON integers, every digit kept; `string` as strings of decimal digits, for a client whose JSON parser rounds such numbers (a generated client, a browser). Safe integers are numbers either way.",
  schema: { type: "string", enum: [...BIGINT_FORMS], default: "number" },
};

/**
 * The input ports a caller must give: those whose schema has required fields, but for the ports the operator's
 * configuration can fill (credentials).
 */
function requiredPorts(node: AnyNode): string[] {
  const optional = new Set<string>(node.filledByOperator ?? []);
  return Object.entries(node.inputs as Record<string, TSchema>)
    .filter(([port, schema]) => !optional.has(port) && Array.isArray(schema.required) && schema.required.length > 0)
    .map(([port]) => port);
}

export function buildOpenApi(nodes: readonly AnyNode[], options: OpenApiOptions): Json {
  const schemas: Json = {};
  const errorOnly = {
    type: "object",
    properties: { error: documentSchema(ErrorPayloadSchema, schemas, true) },
    required: ["error"],
    description: "The service's own refusal, in the shape of a node's error port",
  };
  // Any route: the bytes were not HTTP (400, 431 for oversized headers) or did not arrive in time (408).
  const notHttp = json(errorOnly, "The request is not valid HTTP/1.1 (400, 431), or did not arrive in time (408)");
  const paths: Json = {};
  for (const node of nodes) paths[`/nodes/${node.id}`] = nodePath(node, schemas, errorOnly, options);
  Object.assign(paths, mailPaths({ schemas, errorOnly, notHttp, auth: options.auth }), servicePaths(notHttp));
  return {
    openapi: "3.1.0",
    info: {
      title: "chainmail",
      version: options.version,
      description:
        "Ethereum NFT transactions and batch email as typed nodes. `POST /nodes/<node-id>` with the input object; " +
        "the answer is the node's output object. Integers beyond 2^53 are exact JSON integers; a client whose JSON " +
        "parser rounds them asks for `?bigint=string` and gets them as strings of decimal digits. " +
        (options.auth
          ? "The node routes need `Authorization: Bearer <token>` (`bearer`); the others are open."
          : "This instance runs without tokens: every route is open (`bearer` applies once CHAINMAIL_TOKENS is set).") +
        choicesDescription(),
      license: { name: "MIT", identifier: "MIT" },
    },
    // The origin this document was fetched from: the service serves it at its own root.
    servers: [{ url: "/", description: "This service" }],
    tags: [
      { name: "nodes", description: "Run a node" },
      { name: "mail", description: "Delivery events, message states and unsubscribes" },
      { name: "service", description: "About the service" },
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer" },
        basic: { type: "http", scheme: "basic", description: "CHAINMAIL_EVENTS_USER / CHAINMAIL_EVENTS_PASSWORD" },
      },
    },
  };
}

/** `POST /nodes/<id>`: the node's ports as the request and answer bodies, and every status it can answer. */
function nodePath(node: AnyNode, schemas: Json, errorOnly: Json, options: OpenApiOptions): Json {
  const required = requiredPorts(node);
  const ports = (which: "inputs" | "outputs") =>
    Object.fromEntries(
      Object.entries(node[which] as Record<string, TSchema>).map(([port, schema]) => [
        port,
        documentSchema(schema, schemas, which === "outputs"),
      ]),
    );
  const input = {
    type: "object",
    title: `${node.id} input`,
    description: "One object keyed by input port",
    properties: ports("inputs"),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
  const output = {
    type: "object",
    title: `${node.id} output`,
    description: "The node's output object, keyed by the output ports that fired",
    properties: ports("outputs"),
    additionalProperties: false,
  };
  return {
    post: {
      operationId: node.id,
      summary: node.title,
      description: `${node.description}\n\nVersion group \`${node.version}\`. Success port: \`${node.successPort}\`.`,
      tags: ["nodes"],
      security: bearerSecurity(options.auth),
      parameters: [bigintParameter],
      requestBody: { required: true, ...json(input, "The input object") },
      responses: nodeResponses(node, output, errorOnly, options),
    },
  };
}

function nodeResponses(node: AnyNode, output: Json, errorOnly: Json, options: OpenApiOptions): Json {
  const responses: Json = {
    200: json(output, `\`${node.successPort}\` fired`),
    400: json(
      output,
      "Invalid input, a request body that is not JSON, or an unknown `bigint` form: `error` names every field and rule",
    ),
    408: json(errorOnly, "The request's headers or body did not arrive in time (`receive_timeout`)"),
    413: json(errorOnly, `The request body is larger than ${options.bodyLimitBytes} bytes`),
    500: json(output, "A bug in chainmail"),
    502: json(output, "The upstream failed or answered an error (`error.details` has its status and code)"),
    503: json(
      errorOnly,
      "The service is at capacity (`overloaded`, with `Retry-After`) or shutting down (`shutting_down`)",
    ),
    504: json(output, "The upstream, or the whole request, timed out"),
  };
  if (options.auth) {
    responses[401] = json(errorOnly, "No `Authorization: Bearer <token>` header");
    responses[403] = json(errorOnly, "A bearer token that this service does not accept");
  }
  return responses;
}

/** What `/healthz` answers. */
const HEALTHZ_BODY = {
  type: "object",
  properties: {
    status: { const: "ok" },
    index: {
      type: "object",
      description: "Only with NFT_SOURCE=index or index+opensea",
      properties: {
        last_block: { type: ["integer", "null"], description: "The last block fully indexed" },
        head_block: { type: ["integer", "null"], description: "The chain head the indexer last saw" },
        lag_blocks: { type: ["integer", "null"], description: "head_block - last_block" },
        head_seen_at: { type: ["string", "null"], description: "When the indexer last saw the head (UTC)" },
        records: { type: "integer" },
      },
      required: ["last_block", "head_block", "lag_blocks", "head_seen_at", "records"],
    },
  },
  required: ["status"],
};

/** The service's own routes: always open. */
function servicePaths(notHttp: Json): Json {
  const get = (operationId: string, summary: string, responses: Json) => ({
    get: { operationId, summary, tags: ["service"], security: [], responses: { ...responses, "4XX": notHttp } },
  });
  return {
    "/nodes": get("listNodes", "Every node with its input and output port schemas (JSON Schema)", {
      200: json({ type: "array", items: { type: "object" } }, "Node descriptors"),
    }),
    "/openapi.json": get("openapi", "This document", { 200: json({ type: "object" }, "OpenAPI 3.1 document") }),
    "/healthz": get(
      "healthz",
      "Liveness; with NFT_SOURCE=index (or index+opensea) also the index's last block and lag behind the chain head",
      {
        200: json(HEALTHZ_BODY, "The service is up"),
        503: json(
          { type: "object" },
          "The service is shutting down (an error), or cannot read the index (`status: unavailable`)",
        ),
      },
    ),
    "/metrics": get(
      "metrics",
      "Prometheus metrics: requests, latency, upstream attempts and retries per node; with NFT_SOURCE=index (or index+opensea) the index's last block, head, lag and rows",
      { 200: { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } } },
    ),
  };
}

/** The operator's choices, from the lists of sources and transports: what the retrievers and email-send talk to. */
function choicesDescription(): string {
  const item = (variable: string) => (choice: { id: string; description: string }) =>
    `\n- \`${variable}=${choice.id}\`: ${choice.description}`;
  return (
    "\n\nThe retrievers read from the source the operator chose:" +
    nftSourceChoices().map(item("NFT_SOURCE")).join("") +
    "\n\n`email-send` delivers through the transport the operator chose:" +
    mailTransportChoices().map(item("EMAIL_TRANSPORT")).join("")
  );
}
