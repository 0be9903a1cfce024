/**
 * src/transports/outcome.ts on its own: the error entries every transport writes (Mailjet's shape, its safe-retry
 * StatusCodes), how per-message results sort into sent / not_sent / unknown, and the batch `error` and outcome built
 * from them. The transports' tests see the same through real upstreams.
 */
import { describe, expect, it } from "vitest";
import { ChainmailError, MessageErrorCode } from "../../src/core/errors.js";
import type { MessageResult } from "../../src/schemas/email.js";
import {
  batchError,
  cancelledError,
  deliveryUnknownResult,
  errorEntry,
  failedOutcome,
  messageStatuses,
  notSentResult,
  problemEntry,
} from "../../src/transports/outcome.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const success: MessageResult = {
  Status: "success",
  To: [{ Email: "a@example.test", MessageUUID: "u", MessageID: 1, MessageHref: "" }],
};
const refused: MessageResult = { Status: "error", Errors: [errorEntry("mj-0013", "bad address", ["To[0].Email"])] };
/** SMTP: one recipient refused, the others got it. */
const partlyRefused: MessageResult = {
  Status: "error",
  Errors: [errorEntry("smtp-550", "refused", ["Cc[0].Email"])],
  Cc: [{ Email: "b@example.test", MessageUUID: "u2", MessageID: 2, MessageHref: "" }],
};

describe("errorEntry and problemEntry", () => {
  it("writes Mailjet's entry shape: a fresh identifier, StatusCode 400 unless told, extra fields kept", () => {
    const one = errorEntry("mj-0013", "bad", ["To[0].Email"], { Reason: "x" });
    const two = errorEntry("mj-0013", "bad", ["To[0].Email"]);
    expect(one).toMatchObject({
      ErrorCode: "mj-0013",
      StatusCode: 400,
      ErrorMessage: "bad",
      ErrorRelatedTo: ["To[0].Email"],
      Reason: "x",
    });
    expect(one.ErrorIdentifier).toMatch(UUID);
    expect(two.ErrorIdentifier).not.toBe(one.ErrorIdentifier);
    expect(errorEntry("x", "y", [], {}, 503).StatusCode).toBe(503);
  });

  it("words a broken message rule with its field, or as the message when it has no path", () => {
    const problem = (path: string) => ({
      code: "send-0003",
      path,
      relatedTo: ["TextPart"],
      rule: "r",
      say: (field: string) => `${field} is missing`,
    });
    expect(problemEntry(problem("TextPart"))).toMatchObject({
      ErrorCode: "send-0003",
      StatusCode: 400,
      ErrorMessage: "TextPart is missing. The message was not sent.",
      ErrorRelatedTo: ["TextPart"],
    });
    expect(problemEntry(problem("")).ErrorMessage).toBe("The message is missing. The message was not sent.");
  });
});

describe("notSentResult and deliveryUnknownResult", () => {
  it("not sent: chainmail-not-sent with StatusCode 503 (Mailjet's rule resends it), saying it is safe", () => {
    const result = notSentResult("the session closed");
    expect(result.Status).toBe("error");
    expect(result.Errors).toHaveLength(1);
    expect(result.Errors![0]).toMatchObject({
      ErrorCode: MessageErrorCode.NOT_SENT,
      StatusCode: 503,
      ErrorMessage: "Not sent: the session closed. It is safe to send it again.",
      ErrorRelatedTo: [],
    });
  });

  it("delivery unknown: chainmail-delivery-unknown with StatusCode 409 (below 500: never resent by that rule)", () => {
    const result = deliveryUnknownResult("the server went away");
    expect(result.Errors![0]).toMatchObject({
      ErrorCode: MessageErrorCode.DELIVERY_UNKNOWN,
      StatusCode: 409,
      ErrorMessage:
        "Delivery unknown: the server went away. It may have been delivered; check before sending it again.",
    });
    expect(result.Errors![0]!.StatusCode).toBeLessThan(500);
  });

  it("messages of one failed call can share one ErrorIdentifier; otherwise each gets its own", () => {
    expect(notSentResult("x", "shared-id").Errors![0]!.ErrorIdentifier).toBe("shared-id");
    expect(deliveryUnknownResult("x", "shared-id").Errors![0]!.ErrorIdentifier).toBe("shared-id");
    expect(notSentResult("x").Errors![0]!.ErrorIdentifier).not.toBe(notSentResult("x").Errors![0]!.ErrorIdentifier);
  });
});

describe("messageStatuses", () => {
  it("sorts by input index: delivery unknown first, then sent (success or recipients listed), else not sent", () => {
    const results = [
      success,
      notSentResult("x"),
      deliveryUnknownResult("y"),
      refused,
      partlyRefused,
      // Delivery unknown wins even over listed recipients.
      { ...success, Status: "error", Errors: deliveryUnknownResult("z").Errors } as MessageResult,
      {
        Status: "error",
        Errors: [],
        Bcc: [{ Email: "c@example.test", MessageUUID: "", MessageID: 3, MessageHref: "" }],
      },
      { Status: "error", Errors: [], To: [] },
    ] satisfies MessageResult[];
    expect(messageStatuses(results)).toEqual({ sent: [0, 4, 6], not_sent: [1, 3, 7], unknown: [2, 5] });
  });

  it("answers three empty lists for no results", () => {
    expect(messageStatuses([])).toEqual({ sent: [], not_sent: [], unknown: [] });
  });
});

describe("batchError", () => {
  const failure = new ChainmailError("UPSTREAM_TIMEOUT", "Mailjet timed out.", { details: { upstream: "Mailjet" } });
  const partial = { error: "Part of the batch failed.", hint: "Resend not_sent." };

  it("nothing sent: the failure's own code, its details, the extra details and details.messages", () => {
    const messages = { sent: [], not_sent: [0], unknown: [1] };
    const payload = batchError(failure, messages, partial, { chunks: [1] });
    expect(payload.error).toBe("Mailjet timed out.");
    expect(payload.details).toEqual({ code: "upstream_timeout", upstream: "Mailjet", chunks: [1], messages });
  });

  it("something sent: partial_failure carrying the failure's details and the count sent", () => {
    const messages = { sent: [0, 2], not_sent: [1], unknown: [] };
    const payload = batchError(failure, messages, partial, { outbox: "/tmp/o" });
    expect(payload.error).toBe("Part of the batch failed. Resend not_sent.");
    expect(payload.details).toEqual({
      code: "partial_failure",
      failure: { code: "upstream_timeout", upstream: "Mailjet" },
      sent_messages: 2,
      outbox: "/tmp/o",
      messages,
    });
  });
});

describe("cancelledError", () => {
  it("is `aborted`, counting what went out of how many, with details.messages", () => {
    const messages = { sent: [0], not_sent: [1, 2], unknown: [] };
    const payload = cancelledError(messages, 3);
    expect(payload.details).toEqual({ code: "aborted", messages });
    expect(payload.error).toBe("Cancelled after sending 1 of 3 messages; the rest were not sent.");
  });
});

describe("failedOutcome", () => {
  const error = new ChainmailError("UPSTREAM_AUTH", "refused").toPayload();
  const response = { status: 401, headers: {}, body: "{}" };

  it("leaves `messages sent` out when every message is merely not sent", () => {
    const outcome = failedOutcome([notSentResult("a"), notSentResult("b")], error, response);
    expect(outcome).toEqual({ response, error });
    expect(outcome).not.toHaveProperty("messages sent");
  });

  it("keeps `messages sent` as soon as one message has a result of its own", () => {
    for (const own of [success, refused, deliveryUnknownResult("c")]) {
      const results = [notSentResult("a"), own];
      expect(failedOutcome(results, error)).toEqual({ "messages sent": { Messages: results }, error });
    }
  });

  it("a not-sent entry mixed with another code in one result counts as a result of its own", () => {
    const mixed: MessageResult = { Status: "error", Errors: [...notSentResult("a").Errors!, ...refused.Errors!] };
    expect(failedOutcome([mixed], error)).toHaveProperty("messages sent");
  });
});
