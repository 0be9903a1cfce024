/**
 * The mail lifecycle over HTTP: Mailjet's event callbacks in (`POST /events/mailjet`, one event or an array,
 * answered 200 only once stored, so Mailjet's retry covers a crash) and a message's state out
 * (`GET /messages/<MessageID|MessageUUID|CustomID>`), the stored events in order for whoever follows them
 * (`GET /events?after=<cursor>`: the workflow packages' delivery-event triggers) and the suppression list asked
 * about a batch's recipients (`POST /suppressions/lookup`: the packages' email-send, which keep no store). All work
 * on CHAINMAIL_MAIL_DB's store.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../core/config.js";
import { ChainmailError, InvalidInputError } from "../core/errors.js";
import { readMailjetEvents } from "../mail/events.js";
import { readFeedQuery, readSuppressionLookup } from "../mail/feed.js";
import { mailStoreOf } from "../mail/open.js";
import type { MailStore } from "../mail/store.js";
import { bearerChecker, eventsChecker } from "./auth.js";
import { sendError, sendJson } from "./replies.js";
import type { ServerSettings } from "./settings.js";

/** Longest id `GET /messages/<id>` takes: a CustomID is at most 255 characters at Mailjet. */
const MAX_ID_LENGTH = 255;

export async function storeOf(config: Config): Promise<MailStore> {
  const store = mailStoreOf(config.env);
  if (!store) {
    throw new ChainmailError("NOT_CONFIGURED", "This service keeps no mail lifecycle: CHAINMAIL_MAIL_DB is not set.", {
      hint: "Set CHAINMAIL_MAIL_DB to an SQLite file or a postgres:// URL (the watch's store, to share its suppressions).",
      details: { setting: "CHAINMAIL_MAIL_DB" },
    });
  }
  return store;
}

export function registerMailRoutes(app: FastifyInstance, config: Config, settings: ServerSettings): void {
  const guard =
    (check: (authorization: string | undefined) => ChainmailError | undefined) =>
    (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const refusal = check(request.headers.authorization);
      if (!refusal) return done();
      if (refusal.code === "unauthorized") reply.header("www-authenticate", 'Basic realm="chainmail events"');
      sendError(reply, refusal);
    };

  app.post(
    "/events/mailjet",
    { onRequest: guard(eventsChecker(settings.events, settings.tokens)) },
    async (request, reply) => {
      const { events, ignored } = readMailjetEvents(request.body);
      const store = await storeOf(config);
      const { stored, repeated } = await store.applyEvents(events);
      return sendJson(reply, 200, { stored, repeated, ignored });
    },
  );

  app.get("/events", { onRequest: guard(bearerChecker(settings.tokens)) }, async (request, reply) => {
    const { after, kinds, limit } = readFeedQuery(request.query);
    const page = await (await storeOf(config)).eventsAfter(after, { kinds, limit });
    return sendJson(reply, 200, page);
  });

  app.post("/suppressions/lookup", { onRequest: guard(bearerChecker(settings.tokens)) }, async (request, reply) => {
    const { sender, emails } = readSuppressionLookup(request.body);
    const found = await (await storeOf(config)).suppressed(sender, emails);
    return sendJson(reply, 200, { suppressed: [...found.values()] });
  });

  app.get("/messages/:id", { onRequest: guard(bearerChecker(settings.tokens)) }, (request, reply) =>
    messageStatus(config, request, reply),
  );
}

/** `GET /messages/<id>`: the messages under a MessageID, MessageUUID or CustomID. */
async function messageStatus(config: Config, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  if (id.length > MAX_ID_LENGTH || /[\p{Cc}]/u.test(id)) {
    throw new InvalidInputError([
      {
        field: "id",
        rule: `a MessageID, MessageUUID or CustomID of at most ${MAX_ID_LENGTH} characters, without control characters`,
        message: `id is invalid: must be a MessageID, MessageUUID or CustomID of at most ${MAX_ID_LENGTH} characters, without control characters`,
      },
    ]);
  }
  const messages = await (await storeOf(config)).messages(id);
  if (messages.length === 0) {
    return sendError(
      reply,
      new ChainmailError("NOT_FOUND", `No message with MessageID, MessageUUID or CustomID ${JSON.stringify(id)}.`, {
        hint: "Only messages sent through chainmail, or named by a Mailjet event, are known.",
      }),
    );
  }
  return sendJson(reply, 200, { messages });
}
