/**
 * The OpenAPI 3.1 document, generated from the node port schemas (the same ones `runNode` validates with), so the
 * document, `/docs` and the service cannot drift apart. Named schemas (TypeBox `$id`) become shared components.
 */
import { type AnyNode, describeNode } from "../core/node.js";
import { ErrorPayloadSchema, toJsonSchema } from "../schemas/common.js";

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Whether the node routes require `Authorization: Bearer <token>`. */
  auth: boolean;
  /** Largest request body, for the 413 description. */
  bodyLimitBytes: number;
  version: string;
}

/** Replaces every schema that carries an `$id` with a `$ref` to `components.schemas`, collecting them there. */
function hoist(schema: unknown, components: Json): unknown {
  if (Array.isArray(schema)) return schema.map((item) => hoist(item, components));
  if (schema === null || typeof schema !== "object") return schema;
  const { $id, ...rest } = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) out[key] = hoist(value, components);
  if (typeof $id !== "string") return out;
  components[$id] ??= out;
  return { $ref: `#/components/schemas/${$id}` };
}

const json = (schema: unknown, description: string) => ({ description, content: { "application/json": { schema } } });

export function buildOpenApi(nodes: readonly AnyNode[], options: OpenApiOptions): Json {
  const schemas: Json = {};
  const errorOnly = {
    type: "object",
    properties: { error: hoist(toJsonSchema(ErrorPayloadSchema), schemas) },
    required: ["error"],
    description: "The service's own refusal, in the shape of a node's error port",
  };
  const paths: Json = {};
  for (const node of nodes) {
    const described = describeNode(node);
    const input = {
      type: "object",
      title: `${node.id} input`,
      description: "One object keyed by input port",
      properties: hoist(described.inputs, schemas),
      additionalProperties: false,
    };
    const output = {
      type: "object",
      title: `${node.id} output`,
      description: "The node's output object, keyed by the output ports that fired",
      properties: hoist(described.outputs, schemas),
      additionalProperties: false,
    };
    const responses: Json = {
      200: json(output, `\`${node.successPort}\` fired`),
      400: json(output, "Invalid input, or a request body that is not JSON: `error` names every field and rule"),
      408: json(errorOnly, "The request's headers or body did not arrive in time (`receive_timeout`)"),
      413: json(errorOnly, `The request body is larger than ${options.bodyLimitBytes} bytes`),
      500: json(output, "A bug in chainmail"),
      502: json(output, "The upstream failed or answered an error (`error.details` has its status and code)"),
      504: json(output, "The upstream, or the whole request, timed out"),
    };
    if (options.auth) {
      responses[401] = json(errorOnly, "No `Authorization: Bearer <token>` header");
      responses[403] = json(errorOnly, "A bearer token that this service does not accept");
    }
    paths[`/nodes/${node.id}`] = {
      post: {
        operationId: node.id,
        summary: node.title,
        description: `${node.description}\n\nVersion group \`${node.version}\`. Success port: \`${node.successPort}\`.`,
        tags: ["nodes"],
        ...(options.auth ? { security: [{ bearer: [] }] } : {}),
        requestBody: { required: true, ...json(input, "The input object") },
        responses,
      },
    };
  }
  paths["/nodes"] = {
    get: {
      operationId: "listNodes",
      summary: "Every node with its input and output port schemas (JSON Schema)",
      tags: ["service"],
      responses: { 200: json({ type: "array", items: { type: "object" } }, "Node descriptors") },
    },
  };
  paths["/openapi.json"] = {
    get: {
      operationId: "openapi",
      summary: "This document",
      tags: ["service"],
      responses: { 200: json({ type: "object" }, "OpenAPI 3.1 document") },
    },
  };
  paths["/healthz"] = {
    get: {
      operationId: "healthz",
      summary:
        "Liveness; with NFT_SOURCE=index (or index+opensea) also the index's last block and lag behind the chain head",
      tags: ["service"],
      responses: {
        200: json(
          {
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
              },
            },
          },
          "The service is up",
        ),
        503: json(
          { type: "object" },
          "The service is shutting down (an error), or cannot read the index (`status: unavailable`)",
        ),
      },
    },
  };
  paths["/metrics"] = {
    get: {
      operationId: "metrics",
      summary:
        "Prometheus metrics: requests, latency, upstream attempts and retries per node; with NFT_SOURCE=index (or index+opensea) the index's last block, head, lag and rows",
      tags: ["service"],
      responses: {
        200: { description: "Prometheus text format", content: { "text/plain": { schema: { type: "string" } } } },
      },
    },
  };
  return {
    openapi: "3.1.0",
    info: {
      title: "chainmail",
      version: options.version,
      description:
        "Ethereum NFT transactions and batch email as typed nodes. `POST /nodes/<node-id>` with the input object; " +
        "the answer is the node's output object. Integers beyond 2^53 are exact JSON integers.",
      license: { name: "MIT", identifier: "MIT" },
    },
    tags: [
      { name: "nodes", description: "Run a node" },
      { name: "service", description: "About the service" },
    ],
    paths,
    components: {
      schemas,
      ...(options.auth ? { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } } : {}),
    },
  };
}
