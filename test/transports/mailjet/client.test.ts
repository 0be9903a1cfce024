/**
 * src/transports/mailjet/client.ts on its own: one Send API call against the local Mailjet server (what it sends,
 * what it retries: only what cannot have been delivered), and what each kind of answer means for the messages in
 * the call (`interpretSend`, `callOutcome`): sent, surely not sent, or delivery unknown. The batch around it is
 * transport.test.ts's; the node's, test/nodes/email-send.test.ts.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../../src/core/errors.js";
import { stringifyJson } from "../../../src/core/json.js";
import type { RunContext } from "../../../src/core/node.js";
import {
  accepted,
  type CallOutcome,
  callOutcome,
  interpretSend,
  postSend,
} from "../../../src/transports/mailjet/client.js";
import { testConfig } from "../../support/helpers.js";
import { useMailjet } from "../../support/mailjet-helpers.js";
import {
  API_KEY,
  FIRST_MESSAGE_ID,
  type MailjetServer,
  SECRET_KEY,
  SUSPENDED_KEY,
  TOO_LARGE,
  TOO_MANY_REQUESTS,
} from "../../upstreams/mailjet.js";

const params = { "user id": API_KEY, password: SECRET_KEY };
const TOKEN = Buffer.from(`${API_KEY}:${SECRET_KEY}`).toString("base64");

let mj: MailjetServer;
useMailjet((server) => {
  mj = server;
});

let seq = 0;
const message = () => ({
  From: { Email: "news@chainmail.test" },
  To: [{ Email: `client-${++seq}@example.org` }],
  Subject: "Hi",
  TextPart: "Hello",
});
const ctxFor = (baseUrl: string, env: Record<string, string> = {}): RunContext => ({
  config: testConfig({ MAILJET_BASE_URL: baseUrl, MAILJET_MAX_RETRIES: "2", ...env }),
});
/** One call's HTTP result and what it means. */
async function call(messages: unknown[], p = params, ctx = ctxFor(mj.url)) {
  const result = await postSend(stringifyJson({ Messages: messages }), p, ctx);
  return { result, outcome: callOutcome(result, messages.length) };
}
const failed = (outcome: CallOutcome) => {
  if (outcome.status === "sent") throw new Error(`expected a failed call, got ${stringifyJson(outcome)}`);
  return outcome;
};
const response = (status: number, body: unknown) => ({
  status,
  headers: {},
  body: typeof body === "string" ? body : stringifyJson(body),
});

describe("postSend and callOutcome against the local Mailjet server", () => {
  it("POSTs JSON to /v3.1/send with HTTP Basic (key:secret); a 200 gives every result, MessageIDs exact", async () => {
    const before = mj.requests.length;
    const messages = [message(), message()];
    const { result, outcome } = await call(messages);
    expect(accepted(result)).toBe(true);
    const request = mj.requests[before]!;
    expect(request.authorization).toBe(`Basic ${TOKEN}`);
    expect(request.contentType).toBe("application/json");
    expect(request.body).toEqual({ Messages: messages });
    expect(outcome.status).toBe("sent");
    const results = outcome.status === "sent" ? outcome.results : [];
    expect(results.map((r) => r.Status)).toEqual(["success", "success"]);
    const ids = results.map((r) => r.To![0]!.MessageID);
    expect(ids.every((id) => typeof id === "bigint" && id >= FIRST_MESSAGE_ID)).toBe(true);
    // 50 consecutive ids beyond 2^53 must not round together.
    expect(new Set(ids).size).toBe(2);
  });

  it("retries a 429 (nothing was delivered) and sends once", async () => {
    const before = mj.requests.length;
    mj.fault(TOO_MANY_REQUESTS);
    const { result, outcome } = await call([message()]);
    expect(outcome.status).toBe("sent");
    expect(result.attempts).toBe(2);
    expect(mj.requests.length - before).toBe(2);
  });

  it("never retries a 5xx: the messages may have gone out (delivery unknown)", async () => {
    const before = mj.requests.length;
    mj.fault({ deliver: true, status: 500, body: stringifyJson({ ErrorIdentifier: "ref-1", StatusCode: 500 }) });
    const { outcome } = await call([message()]);
    expect(mj.requests.length - before).toBe(1);
    const fail = failed(outcome);
    expect(fail.status).toBe("unknown");
    expect(fail.error.code).toBe("upstream_server_error");
    expect(fail.error.hint).toContain("support reference ref-1");
  });

  it("never retries a connection dropped after the request went out (delivery unknown)", async () => {
    const before = mj.requests.length;
    mj.fault({ deliver: true, destroy: true });
    const { result, outcome } = await call([message()]);
    expect(mj.requests.length - before).toBe(1);
    expect(accepted(result)).toBe(false);
    expect(failed(outcome).status).toBe("unknown");
  });

  it("a connection that never opened: surely not sent", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { outcome } = await call(
      [message()],
      params,
      ctxFor(`http://127.0.0.1:${port}`, { MAILJET_MAX_RETRIES: "0" }),
    );
    const fail = failed(outcome);
    expect(fail.status).toBe("not_sent");
    expect(fail.error.code).toBe("upstream_unreachable");
    expect(fail.error.details.request_sent).toBe(false);
  });

  it("wrong credentials: not sent, upstream_auth; a suspended key says so; no secret in what comes back", async () => {
    for (const [p, hint] of [
      [{ "user id": API_KEY, password: "wrong-secret-123456" }, /MAILJET_API_KEY/],
      [{ "user id": SUSPENDED_KEY, password: SECRET_KEY }, /suspended/],
    ] as const) {
      const { result, outcome } = await call([message()], p);
      const fail = failed(outcome);
      expect(fail.status).toBe("not_sent");
      expect(fail.error.code).toBe("upstream_auth");
      expect(fail.error.hint).toMatch(hint);
      const seen = stringifyJson({ result, error: fail.error.toPayload() });
      for (const secret of [p["user id"], p.password, Buffer.from(`${p["user id"]}:${p.password}`).toString("base64")])
        expect(seen).not.toContain(secret);
    }
  });

  it("a 400 with one result per message is a processed call: the refused messages keep Mailjet's entries", async () => {
    const bad = { ...message(), To: [{ Email: "not-an-address" }] };
    const { result, outcome } = await call([message(), bad]);
    expect(result.response?.status).toBe(400);
    expect(accepted(result)).toBe(false);
    expect(outcome.status).toBe("sent");
    const results = outcome.status === "sent" ? outcome.results : [];
    expect(results.map((r) => r.Status)).toEqual(["success", "error"]);
    expect(results[1]!.Errors![0]!.ErrorCode).toBe("mj-0013");
  });
});

describe("callOutcome of an HTTP error", () => {
  it("invalid_input (refused before sending) is not sent; a timeout is delivery unknown", () => {
    const invalid = new ChainmailError("INVALID_INPUT", "bad header");
    expect(callOutcome({ error: invalid, attempts: 0 }, 1).status).toBe("not_sent");
    const timeout = new ChainmailError("UPSTREAM_TIMEOUT", "slow");
    expect(callOutcome({ error: timeout, attempts: 1 }, 1).status).toBe("unknown");
    const reset = new ChainmailError("UPSTREAM_UNREACHABLE", "reset", { details: { request_sent: true } });
    expect(callOutcome({ error: reset, attempts: 1 }, 1).status).toBe("unknown");
  });
});

describe("interpretSend", () => {
  const results = (n: number) => ({ Messages: Array.from({ length: n }, () => ({ Status: "success" })) });

  it("a 2xx without one result per message: delivery unknown (upstream_bad_response)", () => {
    for (const body of ["", "not json", "[]", results(1), results(3), { Messages: [] }]) {
      const fail = failed(interpretSend(response(200, body), 2, 1));
      expect(fail.status).toBe("unknown");
      expect(fail.error.code).toBe("upstream_bad_response");
      expect(fail.error.shortMessage).toBe("Mailjet answered HTTP 200 without one result per message (expected 2).");
    }
  });

  it("a 400 or 403 with some results but not one per message: delivery unknown", () => {
    for (const status of [400, 403]) {
      const fail = failed(interpretSend(response(status, results(1)), 2, 1));
      expect([fail.status, fail.error.code]).toEqual(["unknown", "upstream_bad_response"]);
    }
    expect(interpretSend(response(403, results(2)), 2, 1).status).toBe("sent");
  });

  it("413: not sent, upstream_too_large, whatever the body", () => {
    const fail = failed(interpretSend(response(413, TOO_LARGE.body), 1, 1));
    expect([fail.status, fail.error.code]).toEqual(["not_sent", "upstream_too_large"]);
    expect(fail.error.shortMessage).toBe("Mailjet refused the request as too large (HTTP 413).");
  });

  it("429 after the retries: not sent, upstream_rate_limited, saying how many attempts", () => {
    const fail = failed(interpretSend(response(429, TOO_MANY_REQUESTS.body), 1, 3));
    expect([fail.status, fail.error.code]).toEqual(["not_sent", "upstream_rate_limited"]);
    expect(fail.error.shortMessage).toContain("gave up after 3 attempt(s)");
    expect(fail.error.details.attempts).toBe(3);
  });

  it("a request-level 400: not sent, upstream_rejected, Mailjet's code, message and fields in details and hint", () => {
    const body = {
      ErrorIdentifier: "id-7",
      ErrorCode: "mj-0003",
      StatusCode: 400,
      ErrorMessage: "Missing mandatory property.",
      ErrorRelatedTo: ["Messages"],
    };
    const fail = failed(interpretSend(response(400, body), 1, 1));
    expect(fail.status).toBe("not_sent");
    expect(fail.error.code).toBe("upstream_rejected");
    expect(fail.error.shortMessage).toBe(
      "Mailjet rejected the request (HTTP 400 mj-0003: Missing mandatory property.).",
    );
    expect(fail.error.hint).toBe(
      "Nothing of this call was sent. Fix Messages as Mailjet says, then send these messages again.",
    );
    expect(fail.error.details).toEqual({
      upstream: "Mailjet",
      status: 400,
      upstream_code: "mj-0003",
      upstream_identifier: "id-7",
      upstream_message: "Missing mandatory property.",
      upstream_related_to: ["Messages"],
      attempts: 1,
    });
    expect(fail.response?.status).toBe(400);
  });

  it("an error in Globals is read from Globals.Errors and says so", () => {
    const entry = { ErrorIdentifier: "g", ErrorCode: "mj-0004", StatusCode: 400, ErrorMessage: "To is not allowed." };
    const fail = failed(interpretSend(response(400, { Globals: { Status: "error", Errors: [entry] } }), 1, 1));
    expect(fail.error.code).toBe("upstream_rejected");
    expect(fail.error.details).toMatchObject({ upstream_code: "mj-0004", in: "Globals", upstream_errors: [entry] });
  });

  it("a 404 points at MAILJET_BASE_URL; a 4xx without a message asks to check the request", () => {
    const notFound = failed(interpretSend(response(404, "<html>nope</html>"), 1, 1));
    expect([notFound.status, notFound.error.code]).toEqual(["not_sent", "upstream_not_found"]);
    expect(notFound.error.hint).toContain("MAILJET_BASE_URL");
    const bare = failed(interpretSend(response(422, ""), 1, 1));
    expect(bare.error.shortMessage).toBe("Mailjet rejected the request (HTTP 422).");
    expect(bare.error.hint).toContain("Check the request against the Send API v3.1");
  });

  it("a 5xx is delivery unknown; a 3xx is delivery unknown (upstream_bad_response)", () => {
    expect(failed(interpretSend(response(503, ""), 1, 1)).error.code).toBe("upstream_server_error");
    const redirect = failed(interpretSend(response(302, ""), 1, 1));
    expect([redirect.status, redirect.error.code]).toEqual(["unknown", "upstream_bad_response"]);
  });
});
