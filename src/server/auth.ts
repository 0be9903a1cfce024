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
