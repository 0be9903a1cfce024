/**
 * One-click unsubscribe links (RFC 8058): `POST /unsubscribe/<token>` (what a mailbox provider sends, body
 * `List-Unsubscribe=One-Click`) puts the recipient on the sender's suppression list at once; `GET` shows a page with
 * a button that does the same (a link scanner that follows GETs unsubscribes nobody). No login, no cookie: the
 * token is the credential, and a forged or altered one changes nothing.
 */
import type { FastifyInstance, FastifyReply } from "fastify";
import type { Config } from "../core/config.js";
import { setting } from "../core/env.js";
import { ChainmailError } from "../core/errors.js";
import { MAX_TOKEN_LENGTH, type UnsubscribeClaim, verifyUnsubscribe } from "../mail/unsubscribe.js";
import { storeOf } from "./mail-routes.js";

/** A one-click POST body is `List-Unsubscribe=One-Click`; nothing longer needs reading. */
const MAX_FORM_BYTES = 1024;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (reply: FastifyReply, status: number, title: string, body: string) =>
  reply
    .code(status)
    .type("text/html; charset=utf-8")
    .header("cache-control", "no-store")
    .header("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${title}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto">${body}</body></html>`,
    );

function claimOf(config: Config, token: string): UnsubscribeClaim | undefined {
  const secret = setting(config.env, "CHAINMAIL_UNSUBSCRIBE_SECRET");
  if (!secret) {
    throw new ChainmailError(
      "NOT_CONFIGURED",
      "This service signs no unsubscribe links: CHAINMAIL_UNSUBSCRIBE_SECRET is not set.",
      {
        details: { setting: "CHAINMAIL_UNSUBSCRIBE_SECRET" },
      },
    );
  }
  return token.length > MAX_TOKEN_LENGTH ? undefined : verifyUnsubscribe(token, secret);
}

const invalidLink = (reply: FastifyReply) =>
  page(reply, 404, "Link not valid", "<h1>This unsubscribe link is not valid</h1><p>Nothing was changed.</p>");

export function registerUnsubscribeRoutes(app: FastifyInstance, config: Config): void {
  app.register(async (scope) => {
    // A form body, not JSON: read as text (and not used: the token says everything).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "string", bodyLimit: MAX_FORM_BYTES }, (_request, body, done) =>
      done(null, body),
    );
    scope.get("/unsubscribe/:token", async (request, reply) => {
      const claim = claimOf(config, (request.params as { token: string }).token);
      if (!claim) return invalidLink(reply);
      const who = escapeHtml(claim.email);
      const from = escapeHtml(claim.sender);
      return page(
        reply,
        200,
        "Unsubscribe",
        `<h1>Unsubscribe ${who}?</h1><p>You will get no more mail from ${from}.</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
      );
    });
    scope.post("/unsubscribe/:token", async (request, reply) => {
      const claim = claimOf(config, (request.params as { token: string }).token);
      if (!claim) return invalidLink(reply);
      const store = await storeOf(config);
      await store.suppress({
        sender: claim.sender,
        email: claim.email,
        reason: "unsubscribed",
        cause: `unsubscribe-link:${claim.campaign}`.slice(0, 300),
      });
      return page(
        reply,
        200,
        "Unsubscribed",
        `<h1>Unsubscribed</h1><p>${escapeHtml(claim.email)} gets no more mail from ${escapeHtml(claim.sender)}.</p>`,
      );
    });
  });
}
