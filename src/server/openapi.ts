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
import { MAX_FEED_LIMIT, MAX_LOOKUP_EMAILS } from "../mail/feed.js";
import { ErrorPayloadSchema, isExactIntegerSchema } from "../schemas/common.js";
import { EventFeedPage, MailjetEventBody, MailjetEventKinds, MessageStatus, Suppression } from "../schemas/mail.js";
import { nftSourceChoices } from "../sources/catalog.js";
import { mailTransportChoices } from "../transports/catalog.js";
import { BIGINT_FORMS, BIGINT_PARAMETER } from "./integers.js";

type Json = Record<string, unknown>;

export interface OpenApiOptions {
  /** Whether the node routes require `Authorization: Bearer <token>`. */
  auth: boolean;
  /** Largest request body, for the 413 description. */
  bodyLimitBytes: number;
  version: string;
}

/** What an exact integer of an answer is on the wire: a JSON integer, or a digit string when asked for. */
const DIGIT_STRING_NOTE =
  "A JSON integer, every digit kept (it can go beyond 2^53). With `?bigint=string` one beyond 2^53 is a string of its decimal digits instead, which any JSON parser keeps exact.";

/**
 * The JSON Schema form of a TypeBox schema for the document: every schema that carries an `$id` becomes a `$ref`
 * to `components.schemas`, collected there; in answers (`answer`), the integers that can go beyond 2^53
 * (ExactInteger, Uint64) also admit the digit string that `?bigint=string` writes.
 */
function documentSchema(schema: unknown, components: Json, answer: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documentSchema(item, components, answer));
  if (schema === null || typeof schema !== "object") return schema;
  const { $id, ...rest } = schema as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(rest)) out[key] = documentSchema(value, components, answer);
  if (answer && isExactIntegerSchema(schema as TSchema)) {
    out.type = ["integer", "string"];
    out.pattern = "^-?[0-9]+$";
    out.description = out.description ? `${out.description}. ${DIGIT_STRING_NOTE}` : DIGIT_STRING_NOTE;
  }
  if (typeof $id !== "string") return out;
  components[$id] ??= out;
  return { $ref: `#/components/schemas/${$id}` };
}

const json = (schema: unknown, description: string) => ({ description, content: { "application/json": { schema } } });

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
  Object.assign(paths, mailPaths(schemas, errorOnly, notHttp, options.auth), servicePaths(notHttp));
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
      // Without CHAINMAIL_TOKENS the node routes are open too: a bearer token is then optional (and not checked).
      security: options.auth ? [{ bearer: [] }] : [{}, { bearer: [] }],
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

const tokenParameter = {
  name: "token",
  in: "path",
  required: true,
  description: "The signed token of the link (sender, recipient, campaign; HMAC-SHA256)",
  schema: { type: "string", maxLength: 2048 },
};

/**
 * `POST /events/mailjet`, `GET /events`, `POST /suppressions/lookup`, `GET /messages/{id}` (mail-routes.ts) and the
 * unsubscribe links (unsubscribe-routes.ts).
 */
function mailPaths(schemas: Json, errorOnly: Json, notHttp: Json, auth: boolean): Json {
  const refusals: Json = {
    401: json(errorOnly, "No credentials where they are required"),
    403: json(errorOnly, "Credentials this service does not accept"),
    503: json(errorOnly, "CHAINMAIL_MAIL_DB is not set (`not_configured`), or the service is shutting down"),
  };
  return {
    "/events/mailjet": {
      post: {
        operationId: "mailjetEvents",
        summary: "Mailjet's event callback: one event or an array; 200 only once stored",
        description:
          "Set as Mailjet's event callback URL (`/v3/REST/eventcallbackurl`), with Basic credentials in it " +
          "(`https://CHAINMAIL_EVENTS_USER:CHAINMAIL_EVENTS_PASSWORD@host/events/mailjet`) or send a bearer token. " +
          "Idempotent (a repeat or replay changes nothing) and order-free. Kinds other than sent, open, click, " +
          "bounce, blocked, spam and unsub are acknowledged and ignored.",
        tags: ["mail"],
        security: [{ basic: [] }, { bearer: [] }, ...(auth ? [] : [{}])],
        requestBody: {
          required: true,
          ...json(documentSchema(MailjetEventBody, schemas, false), "Mailjet's event(s)"),
        },
        responses: {
          200: json(
            {
              type: "object",
              properties: {
                stored: { type: "integer", description: "Events stored now" },
                repeated: { type: "integer", description: "Events stored before (repeats, replays)" },
                ignored: { type: "integer", description: "Events of kinds chainmail does not know" },
              },
              required: ["stored", "repeated", "ignored"],
            },
            "Stored",
          ),
          400: json(errorOnly, "A malformed event: `error.details.violations` names each field (nothing stored)"),
          413: json(errorOnly, "The body is larger than CHAINMAIL_BODY_LIMIT_BYTES"),
          500: json(errorOnly, "The store failed (`storage_error`): Mailjet retries"),
          ...refusals,
          "4XX": notHttp,
        },
      },
    },
    "/unsubscribe/{token}": {
      get: {
        operationId: "unsubscribePage",
        summary: "The page of a one-click unsubscribe link: says who and from whom, with a button (changes nothing)",
        tags: ["mail"],
        security: [],
        parameters: [tokenParameter],
        responses: {
          200: { description: "The confirmation page", content: { "text/html": { schema: { type: "string" } } } },
          404: {
            description: "A token this service did not sign (nothing changed)",
            content: { "text/html": { schema: { type: "string" } } },
          },
          503: json(errorOnly, "CHAINMAIL_UNSUBSCRIBE_SECRET is not set (`not_configured`)"),
          "4XX": notHttp,
        },
      },
      post: {
        operationId: "unsubscribe",
        summary: "RFC 8058 one-click unsubscribe: the recipient goes on the sender's suppression list at once",
        description:
          "The body (`List-Unsubscribe=One-Click`) is not needed: the signed token names the sender and the recipient. No login, no cookie.",
        tags: ["mail"],
        security: [],
        parameters: [tokenParameter],
        requestBody: {
          required: false,
          content: {
            "application/x-www-form-urlencoded": { schema: { type: "string", example: "List-Unsubscribe=One-Click" } },
          },
        },
        responses: {
          200: { description: "Unsubscribed", content: { "text/html": { schema: { type: "string" } } } },
          404: {
            description: "A token this service did not sign (nothing changed)",
            content: { "text/html": { schema: { type: "string" } } },
          },
          503: json(errorOnly, "CHAINMAIL_UNSUBSCRIBE_SECRET or CHAINMAIL_MAIL_DB is not set (`not_configured`)"),
          "4XX": notHttp,
        },
      },
    },
    "/events": {
      get: {
        operationId: "eventFeed",
        summary: "The stored delivery events in the order they were stored, after a cursor (each once to a follower)",
        description:
          "What the workflow packages' delivery-event triggers poll: ask with `after` = the `cursor` of the last " +
          "page (none: from the first event), and again at once while `more` is true. Events past the 100 kept " +
          "per message still move its state but are not in the feed.",
        tags: ["mail"],
        security: auth ? [{ bearer: [] }] : [{}, { bearer: [] }],
        parameters: [
          {
            name: "after",
            in: "query",
            required: false,
            description: "The `cursor` of the last event seen (0 or none: from the first)",
            schema: { type: "string", pattern: "^[0-9]{1,16}$" },
          },
          {
            name: "kinds",
            in: "query",
            required: false,
            description: "Only these Mailjet kinds, comma-separated (none: every kind)",
            schema: { type: "string", maxLength: 256 },
            example: "bounce,spam",
          },
          {
            name: "limit",
            in: "query",
            required: false,
            description: `At most this many events (default 100)`,
            schema: { type: "integer", minimum: 1, maximum: MAX_FEED_LIMIT },
          },
        ],
        responses: {
          200: json(documentSchema(EventFeedPage, schemas, true), "A page of events, oldest first"),
          400: json(
            errorOnly,
            `A bad \`after\`, \`limit\` or \`kinds\` (one of ${MailjetEventKinds.join(", ")}), a field given twice or an unknown one: \`error.details.violations\` names it`,
          ),
          ...refusals,
          "4XX": notHttp,
        },
      },
    },
    "/suppressions/lookup": {
      post: {
        operationId: "suppressionLookup",
        summary: "Which of some recipients are on a sender's suppression list (its own, or every sender's)",
        description:
          "What the workflow packages' email-send asks before a batch (they keep no store of their own): the " +
          "recipients found are answered per message with the error `suppressed` and not sent to.",
        tags: ["mail"],
        security: auth ? [{ bearer: [] }] : [{}, { bearer: [] }],
        requestBody: {
          required: true,
          ...json(
            {
              type: "object",
              properties: {
                sender: { type: "string", description: "The From address (or * for every sender's list alone)" },
                emails: {
                  type: "array",
                  maxItems: MAX_LOOKUP_EMAILS,
                  items: { type: "string", maxLength: 254 },
                  description: "The recipients to look up",
                },
              },
              required: ["sender", "emails"],
              additionalProperties: false,
            },
            "The sender and the recipients",
          ),
        },
        responses: {
          200: json(
            {
              type: "object",
              properties: {
                suppressed: {
                  type: "array",
                  items: documentSchema(Suppression, schemas, true),
                  description: "The recipients found (lower case), each with its strongest reason",
                },
              },
              required: ["suppressed"],
            },
            "The suppressed ones among them",
          ),
          400: json(errorOnly, "A bad sender or address, or too many: `error.details.violations` names each"),
          ...refusals,
          "4XX": notHttp,
        },
      },
    },
    "/messages/{id}": {
      get: {
        operationId: "messageStatus",
        summary: "A message's state and events, by MessageID, MessageUUID or CustomID",
        tags: ["mail"],
        security: auth ? [{ bearer: [] }] : [{}, { bearer: [] }],
        parameters: [
          {
            name: "id",
            in: "path",
            required: true,
            description: "A MessageID, a MessageUUID or a CustomID (every recipient's message under it)",
            schema: { type: "string", maxLength: 255 },
          },
        ],
        responses: {
          200: json(
            {
              type: "object",
              properties: {
                messages: { type: "array", items: documentSchema(MessageStatus, schemas, true) },
              },
              required: ["messages"],
            },
            "The messages under that id (one per recipient)",
          ),
          400: json(errorOnly, "An id that is too long or holds control characters"),
          404: json(errorOnly, "No message under that id"),
          ...refusals,
          "4XX": notHttp,
        },
      },
    },
  };
}
