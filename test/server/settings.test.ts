/**
 * src/server/settings.ts on its own: the service's settings read from the config's env record; bearer tokens
 * checked (long enough, sendable in a header); a service holding the operator's credentials refuses to start
 * without tokens, naming the settings, never their values; the event callback's Basic credentials, both or neither.
 * The checks of every setting's form at start are test/server/settings-start.test.ts's.
 */
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { loadServerSettings } from "../../src/server/settings.js";
import { testConfig } from "../support/helpers.js";

const TOKEN = "a-long-enough-token-0123";

function refusal(env: Record<string, string>, overrides?: { tokens?: string[] }): ChainmailError {
  try {
    loadServerSettings(testConfig(env), overrides);
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    expect((err as ChainmailError).code).toBe("invalid_input");
    return err as ChainmailError;
  }
  throw new Error("expected loadServerSettings to refuse");
}

describe("loadServerSettings", () => {
  it("reads every limit from the config's env record", () => {
    const settings = loadServerSettings(
      testConfig({
        CHAINMAIL_BODY_LIMIT_BYTES: "2048",
        CHAINMAIL_REQUEST_TIMEOUT_MS: "7000",
        CHAINMAIL_HEADERS_TIMEOUT_MS: "3000",
        CHAINMAIL_BODY_TIMEOUT_MS: "4000",
        CHAINMAIL_MAX_CONNECTIONS: "12",
        CHAINMAIL_MAX_IN_FLIGHT: "5",
        CHAINMAIL_MAX_QUEUED: "6",
        CHAINMAIL_QUEUE_TIMEOUT_MS: "700",
        CHAINMAIL_MAX_EVENT_LOOP_DELAY_MS: "0",
        CHAINMAIL_CACHE_TTL_MS: "1500",
        CHAINMAIL_CACHE_MAX_ENTRIES: "9",
        CHAINMAIL_CACHE_MAX_BYTES: "65536",
      }),
    );
    expect(settings).toEqual({
      tokens: [],
      operatorCredentials: [],
      events: undefined,
      bodyLimitBytes: 2048,
      requestTimeoutMs: 7000,
      headersTimeoutMs: 3000,
      bodyTimeoutMs: 4000,
      maxConnections: 12,
      admission: { maxInFlight: 5, maxQueued: 6, queueTimeoutMs: 700, maxEventLoopDelayMs: 0 },
      cache: { ttlMs: 1500, maxEntries: 9, maxBytes: 65536 },
    });
  });

  it("takes comma-separated tokens, trimmed, empty ones dropped; given tokens stand in for the setting", () => {
    const settings = loadServerSettings(testConfig({ CHAINMAIL_TOKENS: ` ${TOKEN} ,, ${TOKEN}-2 ,` }));
    expect(settings.tokens).toEqual([TOKEN, `${TOKEN}-2`]);
    const given = loadServerSettings(testConfig({ CHAINMAIL_TOKENS: TOKEN }), { tokens: [`${TOKEN}-given`] });
    expect(given.tokens).toEqual([`${TOKEN}-given`]);
  });

  it("refuses a token shorter than 16 characters, or one no header can carry, naming which and not showing it", () => {
    const short = refusal({ CHAINMAIL_TOKENS: `${TOKEN},short-tok3n` });
    expect(short.shortMessage).toBe("Setting CHAINMAIL_TOKENS is invalid: token 2 is shorter than 16 characters.");
    expect(short.details).toEqual({ setting: "CHAINMAIL_TOKENS" });
    for (const bad of ["with a space inside!", "tab\tinside-the-token", "beyond-ascii-tokén-1234"]) {
      const err = refusal({}, { tokens: [bad] });
      expect(err.shortMessage).toMatch(
        /^Setting CHAINMAIL_TOKENS is invalid: token 1 holds a space, a control character/,
      );
      expect(JSON.stringify(err.toPayload())).not.toContain(bad);
    }
    expect(JSON.stringify(short.toPayload())).not.toContain("short-tok3n");
  });

  it("with the operator's credentials set, refuses to start without a token, naming them but not their values", () => {
    const env = {
      MAILJET_API_KEY: "operator-key-123",
      MAILJET_SECRET_KEY: "operator-secret-456",
      NFTPORT_API_KEY: "nftport-789",
    };
    const err = refusal(env);
    expect(err.shortMessage).toMatch(
      /^chainmail serve refuses to start: .*MAILJET_API_KEY, MAILJET_SECRET_KEY are set, so anyone reaching the service/,
    );
    expect(err.details.credentials).toEqual(
      expect.arrayContaining(["NFTPORT_API_KEY", "MAILJET_API_KEY", "MAILJET_SECRET_KEY"]),
    );
    expect(err.hint).toContain("CHAINMAIL_TOKENS");
    for (const value of Object.values(env)) expect(JSON.stringify(err.toPayload())).not.toContain(value);
    expect(refusal({ NFTPORT_API_KEY: "nftport-789" }).shortMessage).toContain("NFTPORT_API_KEY is set,");

    const settings = loadServerSettings(testConfig({ ...env, CHAINMAIL_TOKENS: TOKEN }));
    expect(settings.operatorCredentials.sort()).toEqual(["MAILJET_API_KEY", "MAILJET_SECRET_KEY", "NFTPORT_API_KEY"]);
    expect(settings.tokens).toEqual([TOKEN]);
  });

  it("an SMTP_URL with a login is an operator credential; one without is not", () => {
    expect(refusal({ SMTP_URL: "smtp://user:pass-word-1@mail.example.test:587" }).details.credentials).toEqual([
      "SMTP_URL",
    ]);
    expect(loadServerSettings(testConfig({ SMTP_URL: "smtp://mail.example.test:587" })).operatorCredentials).toEqual(
      [],
    );
  });

  it("the event callback's Basic credentials: both or neither, and no colon in the user", () => {
    const both = loadServerSettings(
      testConfig({ CHAINMAIL_EVENTS_USER: "mailjet", CHAINMAIL_EVENTS_PASSWORD: "events-password" }),
    );
    expect(both.events).toEqual({ user: "mailjet", password: "events-password" });
    const noPassword = refusal({ CHAINMAIL_EVENTS_USER: "mailjet" });
    expect(noPassword.shortMessage).toBe(
      "Setting CHAINMAIL_EVENTS_PASSWORD is invalid: CHAINMAIL_EVENTS_PASSWORD is not set; set both or neither.",
    );
    expect(noPassword.details).toEqual({ setting: "CHAINMAIL_EVENTS_PASSWORD" });
    expect(refusal({ CHAINMAIL_EVENTS_PASSWORD: "events-password" }).details).toEqual({
      setting: "CHAINMAIL_EVENTS_USER",
    });
  });

  it("a colon in the event callback's user is refused naming that setting, in the message as in details", () => {
    const colon = refusal({ CHAINMAIL_EVENTS_USER: "mail:jet", CHAINMAIL_EVENTS_PASSWORD: "events-password" });
    expect(colon.details).toEqual({ setting: "CHAINMAIL_EVENTS_USER" });
    expect(colon.shortMessage).toMatch(
      /^Setting CHAINMAIL_EVENTS_USER is invalid: CHAINMAIL_EVENTS_USER holds a colon/,
    );
    expect(JSON.stringify(colon.toPayload())).not.toContain("events-password");
  });
});
