/**
 * src/transports/mailjet/rules.ts on its own: the input rules only the Mailjet transport has (no ":" in the API key,
 * at most 50 distinct recipients per message with Globals' Cc and Bcc counted for each).
 */
import { describe, expect, it } from "vitest";
import { mailjetViolations } from "../../../src/transports/mailjet/rules.js";

const params = { "user id": "apikey", password: "secret" };
const to = (n: number, prefix = "r") => Array.from({ length: n }, (_, i) => ({ Email: `${prefix}${i}@example.test` }));
const message = (recipients: Record<string, unknown> = { To: to(1) }) => ({
  From: { Email: "s@chainmail.test" },
  TextPart: "x",
  ...recipients,
});

describe("mailjetViolations", () => {
  it("finds nothing in a valid request, nor in input it cannot read (other rules refuse that)", () => {
    expect(mailjetViolations(params, { Messages: [message(), message({ To: to(50) })] })).toEqual([]);
    expect(mailjetViolations(undefined, undefined)).toEqual([]);
    expect(mailjetViolations(params, { Messages: "no" })).toEqual([]);
    expect(mailjetViolations("not an object", [])).toEqual([]);
  });

  it("refuses an API key with a colon (the Basic user name), never echoing it", () => {
    const key = "part:of-a-secret";
    const out = mailjetViolations({ "user id": key, password: "p" }, { Messages: [message()] });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ field: 'params["user id"]', rule: "no colon (HTTP Basic user)" });
    expect(out[0]).not.toHaveProperty("value");
    expect(JSON.stringify(out)).not.toContain(key);
  });

  it("refuses a message above 50 distinct recipients across To, Cc and Bcc, naming it and its count", () => {
    const big = message({ To: to(20), Cc: to(20, "c"), Bcc: to(11, "b") });
    const out = mailjetViolations(params, { Messages: [message(), big] });
    expect(out).toEqual([
      {
        field: "request.Messages[1]",
        value: 51,
        rule: "at most 50 recipients (To + Cc + Bcc)",
        message:
          "request.Messages[1] has 51 recipients: Mailjet takes at most 50 per message (To + Cc + Bcc); split it into several messages",
      },
    ]);
  });

  it("counts an address once whatever its case, and counts Globals' Cc and Bcc for every message", () => {
    const twice = message({ To: to(30), Cc: to(30).map((a) => ({ Email: a.Email.toUpperCase() })) });
    expect(mailjetViolations(params, { Messages: [twice] })).toEqual([]);
    const request = { Globals: { Bcc: to(2, "g") }, Messages: [message({ To: to(48) }), message({ To: to(49) })] };
    expect(mailjetViolations(params, request).map((v) => v.field)).toEqual(["request.Messages[1]"]);
  });

  it("reports both the key and every message too large at once", () => {
    const out = mailjetViolations(
      { "user id": "a:b" },
      { Messages: [message({ To: to(51) }), message({ To: to(60) })] },
    );
    expect(out.map((v) => [v.field, v.value])).toEqual([
      ['params["user id"]', undefined],
      ["request.Messages[0]", 51],
      ["request.Messages[1]", 60],
    ]);
  });
});
