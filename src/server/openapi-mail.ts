/** The mail routes of the OpenAPI document: delivery events in, the event feed, suppressions, message states. */
import { MAX_FEED_LIMIT, MAX_LOOKUP_EMAILS } from "../mail/feed.js";
import { EventFeedPage, MailjetEventBody, MailjetEventKinds, MessageStatus, Suppression } from "../schemas/mail.js";
import { bearerSecurity, type DocumentParts, documentSchema, type Json, json } from "./openapi-parts.js";

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
export function mailPaths(parts: DocumentParts): Json {
  const refusals: Json = {
    401: json(parts.errorOnly, "No credentials where they are required"),
    403: json(parts.errorOnly, "Credentials this service does not accept"),
    503: json(parts.errorOnly, "CHAINMAIL_MAIL_DB is not set (`not_configured`), or the service is shutting down"),
  };
  return {
    "/events/mailjet": mailjetEventsPath(parts, refusals),
    "/unsubscribe/{token}": unsubscribePath(parts),
    "/events": eventFeedPath(parts, refusals),
    "/suppressions/lookup": suppressionLookupPath(parts, refusals),
    "/messages/{id}": messagePath(parts, refusals),
  };
}

/** Mailjet's event callback (mail-routes.ts). */
function mailjetEventsPath({ schemas, errorOnly, notHttp, auth }: DocumentParts, refusals: Json): Json {
  return {
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
  };
}

/** The one-click unsubscribe link's page and POST (unsubscribe-routes.ts). */
function unsubscribePath({ errorOnly, notHttp }: DocumentParts): Json {
  return {
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
  };
}

/** The feed of stored events the workflow packages poll (mail-routes.ts). */
function eventFeedPath({ schemas, errorOnly, notHttp, auth }: DocumentParts, refusals: Json): Json {
  return {
    get: {
      operationId: "eventFeed",
      summary: "The stored delivery events in the order they were stored, after a cursor (each once to a follower)",
      description:
        "What the workflow packages' delivery-event triggers poll: ask with `after` = the `cursor` of the last " +
        "page (none: from the first event), and again at once while `more` is true. Events past the 100 kept " +
        "per message still move its state but are not in the feed.",
      tags: ["mail"],
      security: bearerSecurity(auth),
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
  };
}

/** What `POST /suppressions/lookup` asks. */
const LOOKUP_REQUEST = {
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
};

/** The suppression lookup of the workflow packages' email-send (mail-routes.ts). */
function suppressionLookupPath({ schemas, errorOnly, notHttp, auth }: DocumentParts, refusals: Json): Json {
  return {
    post: {
      operationId: "suppressionLookup",
      summary: "Which of some recipients are on a sender's suppression list (its own, or every sender's)",
      description:
        "What the workflow packages' email-send asks before a batch (they keep no store of their own): the " +
        "recipients found are answered per message with the error `suppressed` and not sent to.",
      tags: ["mail"],
      security: bearerSecurity(auth),
      requestBody: {
        required: true,
        ...json(LOOKUP_REQUEST, "The sender and the recipients"),
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
  };
}

/** A message's state (mail-routes.ts). */
function messagePath({ schemas, errorOnly, notHttp, auth }: DocumentParts, refusals: Json): Json {
  return {
    get: {
      operationId: "messageStatus",
      summary: "A message's state and events, by MessageID, MessageUUID or CustomID",
      tags: ["mail"],
      security: bearerSecurity(auth),
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
  };
}
