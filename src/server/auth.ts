/** The service's own access control: `Authorization: Bearer <token>` against CHAINMAIL_TOKENS. */
import { hash, timingSafeEqual } from "node:crypto";
import { ChainmailError } from "../core/errors.js";

const digest = (text: string) => hash("sha256", text, "buffer");

/**
 * Returns a checker for the configured tokens: undefined when the request may pass, else the refusal
 * (401 `unauthorized` without a bearer token, 403 `forbidden` with a wrong one). Comparing fixed-length digests
 * with `timingSafeEqual`, and always against every token, leaks neither a token's length nor its prefix.
 */
export function bearerChecker(
  tokens: readonly string[],
): (authorization: string | undefined) => ChainmailError | undefined {
  const expected = tokens.map(digest);
  return (authorization) => {
    if (expected.length === 0) return undefined;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? "");
    if (!match) {
      return new ChainmailError("UNAUTHORIZED", "This service requires `Authorization: Bearer <token>`.", {
        hint: "Ask the operator for a token (one of CHAINMAIL_TOKENS).",
      });
    }
    const given = digest(match[1]!);
    let ok = false;
    for (const token of expected) ok = timingSafeEqual(given, token) || ok;
    if (ok) return undefined;
    return new ChainmailError("FORBIDDEN", "The bearer token is not valid for this service.", {
      hint: "Check the token with the operator.",
    });
  };
}

/**
 * The checker of Mailjet's event callbacks: Basic credentials (CHAINMAIL_EVENTS_USER / CHAINMAIL_EVENTS_PASSWORD,
 * which Mailjet sends from the callback URL's `https://user:pass@host/…`) or one of the bearer tokens. With neither
 * configured the route is open, as the node routes are without tokens.
 */
export function eventsChecker(
  basic: { user: string; password: string } | undefined,
  tokens: readonly string[],
): (authorization: string | undefined) => ChainmailError | undefined {
  const checkBearer = bearerChecker(tokens);
  if (!basic) return checkBearer;
  const expected = digest(`${basic.user}:${basic.password}`);
  return (authorization) => {
    const match = /^Basic[ \t]+([A-Za-z0-9+/=]{1,1024})[ \t]*$/i.exec(authorization ?? "");
    if (match) {
      const given = digest(Buffer.from(match[1]!, "base64").toString("utf8"));
      if (timingSafeEqual(given, expected)) return undefined;
      return new ChainmailError("FORBIDDEN", "The Basic credentials are not valid for the event callback.", {
        hint: "Put CHAINMAIL_EVENTS_USER and CHAINMAIL_EVENTS_PASSWORD in the callback URL: https://user:password@host/events/mailjet.",
      });
    }
    if (tokens.length > 0 && /^Bearer[ \t]/i.test(authorization ?? "")) return checkBearer(authorization);
    return new ChainmailError("UNAUTHORIZED", "The event callback requires Basic credentials or a bearer token.", {
      hint: "Put CHAINMAIL_EVENTS_USER and CHAINMAIL_EVENTS_PASSWORD in the callback URL: https://user:password@host/events/mailjet.",
    });
  };
}
