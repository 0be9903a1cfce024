/**
 * src/server/auth.ts on its own: which Authorization headers the bearer and event-callback checkers let through,
 * and how they refuse. test/server/app.test.ts and the mail route tests cover them over real sockets.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { bearerChecker, eventsChecker } from "../../src/server/auth.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 300);
const SEED = Number(process.env.PROPS_SEED ?? 41);

const TOKENS = ["token-one-0123456789", "token-two-abcdefghij"];
const basicOf = (text: string) => `Basic ${Buffer.from(text, "utf8").toString("base64")}`;

function expectRefusal(result: ChainmailError | undefined, code: "unauthorized" | "forbidden", message: string) {
  expect(result).toBeInstanceOf(ChainmailError);
  expect(result!.code).toBe(code);
  expect(result!.shortMessage).toBe(message);
  expect(result!.retryable).toBe(false);
}

const NEEDS_BEARER = "This service requires `Authorization: Bearer <token>`.";
const BAD_BEARER = "The bearer token is not valid for this service.";
const BAD_BASIC = "The Basic credentials are not valid for the event callback.";
const NEEDS_EVENTS = "The event callback requires Basic credentials or a bearer token.";

describe("bearerChecker", () => {
  it("lets everything through when no token is configured", () => {
    const check = bearerChecker([]);
    for (const header of [undefined, "", "Bearer whatever", "Basic Zm9vOmJhcg=="])
      expect(check(header)).toBeUndefined();
  });

  it("accepts each configured token, whatever the scheme's case and the spaces around", () => {
    const check = bearerChecker(TOKENS);
    for (const token of TOKENS) {
      for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER\t${token}`, `Bearer   ${token} \t`]) {
        expect(check(header)).toBeUndefined();
      }
    }
  });

  it.each([
    [undefined],
    [""],
    ["Bearer"],
    ["Bearer "],
    [`Basic ${TOKENS[0]}`],
    [TOKENS[0]],
    [`Bearer ${TOKENS[0]} extra`],
    [` Bearer ${TOKENS[0]}`],
    [`Bearer${TOKENS[0]}`],
    [`Bearer\n${TOKENS[0]}`],
  ])("refuses %j as unauthorized (401), asking for a bearer token", (header) => {
    const result = bearerChecker(TOKENS)(header);
    expectRefusal(result, "unauthorized", NEEDS_BEARER);
    expect(result!.hint).toMatch(/CHAINMAIL_TOKENS/);
  });

  it("refuses a wrong token as forbidden (403): a prefix, an extension, another case", () => {
    const check = bearerChecker(TOKENS);
    const [token] = TOKENS as [string];
    for (const wrong of [token.slice(0, -1), `${token}x`, token.toUpperCase(), "x"]) {
      expectRefusal(check(`Bearer ${wrong}`), "forbidden", BAD_BEARER);
    }
  });

  it("a token is accepted exactly when it is one of those configured (property)", () => {
    const token = fc.stringMatching(/^[\x21-\x7e]{1,40}$/);
    fc.assert(
      fc.property(fc.array(token, { minLength: 1, maxLength: 4 }), token, (configured, given) => {
        const result = bearerChecker(configured)(`Bearer ${given}`);
        if (configured.includes(given)) expect(result).toBeUndefined();
        else expect(result?.code).toBe("forbidden");
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});

describe("eventsChecker", () => {
  const basic = { user: "mailjet", password: "hook-pass-123" };

  it("without Basic credentials configured, is the bearer checker", () => {
    expect(eventsChecker(undefined, [])(undefined)).toBeUndefined();
    const check = eventsChecker(undefined, TOKENS);
    expect(check(`Bearer ${TOKENS[1]}`)).toBeUndefined();
    expectRefusal(check(undefined), "unauthorized", NEEDS_BEARER);
    expectRefusal(check("Bearer nope"), "forbidden", BAD_BEARER);
    expectRefusal(check(basicOf("mailjet:hook-pass-123")), "unauthorized", NEEDS_BEARER);
  });

  it("accepts the configured Basic credentials, whatever the scheme's case", () => {
    const check = eventsChecker(basic, []);
    expect(check(basicOf("mailjet:hook-pass-123"))).toBeUndefined();
    expect(check(`basic ${Buffer.from("mailjet:hook-pass-123").toString("base64")}  `)).toBeUndefined();
  });

  it("refuses other Basic credentials as forbidden", () => {
    const check = eventsChecker(basic, TOKENS);
    for (const pair of ["mailjet:hook-pass-12", "mailjet:hook-pass-1234", "Mailjet:hook-pass-123", "mailjet", ":"]) {
      const result = check(basicOf(pair));
      expectRefusal(result, "forbidden", BAD_BASIC);
      expect(result!.hint).toMatch(/CHAINMAIL_EVENTS_USER/);
    }
  });

  it("takes a bearer token instead when tokens are configured", () => {
    const check = eventsChecker(basic, TOKENS);
    expect(check(`Bearer ${TOKENS[0]}`)).toBeUndefined();
    expectRefusal(check("Bearer wrong-token"), "forbidden", BAD_BEARER);
    // Without tokens, a bearer header is not a way in at all.
    expectRefusal(eventsChecker(basic, [])(`Bearer ${TOKENS[0]}`), "unauthorized", NEEDS_EVENTS);
  });

  it.each([
    ["no header", undefined],
    ["an empty header", ""],
    ["Basic without credentials", "Basic"],
    ["Basic with non-base64 text", "Basic !!!!"],
    ["Basic credentials over 1024 characters", `Basic ${"A".repeat(1025)}`],
    ["another scheme", "Digest abc"],
    ["Bearer without a token", "Bearer"],
  ])("refuses %s as unauthorized, asking for Basic or bearer", (_, header) => {
    expectRefusal(eventsChecker(basic, TOKENS)(header), "unauthorized", NEEDS_EVENTS);
  });

  it("Basic credentials are accepted exactly when they are the configured pair (property)", () => {
    const part = fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes(":"));
    fc.assert(
      fc.property(part, part, part, part, (user, password, givenUser, givenPassword) => {
        const result = eventsChecker({ user, password }, [])(basicOf(`${givenUser}:${givenPassword}`));
        if (user === givenUser && password === givenPassword) expect(result).toBeUndefined();
        else expect(result?.code).toBe("forbidden");
        expect(eventsChecker({ user, password }, [])(basicOf(`${user}:${password}`))).toBeUndefined();
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });
});
