/**
 * src/transports/mailjet/results.ts on its own: a split batch's calls merged back into one outcome, one result per
 * input message in input order, and when a call failed, the batch `error` naming the first call that failed by
 * itself, with `details.messages` and `details.chunks`.
 */
import { describe, expect, it } from "vitest";
import { ChainmailError, MessageErrorCode } from "../../../src/core/errors.js";
import type { MessageResult } from "../../../src/schemas/email.js";
import type { Chunk } from "../../../src/transports/mailjet/chunks.js";
import type { CallOutcome } from "../../../src/transports/mailjet/client.js";
import { mergeOutcomes, notAttempted } from "../../../src/transports/mailjet/results.js";
import { errorEntry } from "../../../src/transports/outcome.js";

const chunks: Chunk[] = [
  { index: 0, first: 0, last: 1 },
  { index: 1, first: 2, last: 2 },
  { index: 2, first: 3, last: 4 },
];
const ok = (n: number): MessageResult => ({
  Status: "success",
  To: [{ Email: `r${n}@example.test`, MessageUUID: `uuid-${n}`, MessageID: 1000 + n, MessageHref: "" }],
});
const response = (status: number, body = "") => ({ status, headers: {}, body });
const sent = (first: number, last: number, status = 200): CallOutcome => ({
  status: "sent",
  results: Array.from({ length: last - first + 1 }, (_, i) => ok(first + i)),
  response: response(status, `call ${first}`),
});
const codes = (result: MessageResult | undefined) => result?.Errors?.map((e) => e.ErrorCode);

describe("notAttempted", () => {
  it("after a failing chunk: not_attempted, naming both chunks; without one: aborted (cancelled)", () => {
    const after = notAttempted(chunks[2]!, chunks[0]!);
    expect(after.status).toBe("not_sent");
    expect(after.status !== "sent" && after.error.code).toBe("not_attempted");
    expect(after.status !== "sent" && after.error.shortMessage).toBe(
      "Chunk 2 was not attempted: chunk 0 failed in a way every call would.",
    );
    const cancelled = notAttempted(chunks[1]!, undefined);
    expect(cancelled.status !== "sent" && cancelled.error.code).toBe("aborted");
    expect(cancelled).not.toHaveProperty("response");
  });
});

describe("mergeOutcomes", () => {
  it("every call sent: the results in input order and the last call's response, no error", () => {
    const out = mergeOutcomes(5, chunks, [sent(0, 1), sent(2, 2), sent(3, 4)]);
    expect(out.error).toBeUndefined();
    expect(out["messages sent"]!.Messages).toEqual([0, 1, 2, 3, 4].map(ok));
    expect(out.response!.body).toBe("call 3");
  });

  it("a failed call: its messages share one entry identifier; the error names it, details say what became of each", () => {
    const failure = new ChainmailError("UPSTREAM_SERVER_ERROR", "Mailjet failed (HTTP 500).", {
      details: { upstream: "Mailjet", upstream_code: "mj-9999" },
    });
    const outcomes: CallOutcome[] = [
      sent(0, 1),
      { status: "unknown", error: failure, response: response(500, "boom") },
      notAttempted(chunks[2]!, chunks[1]!),
    ];
    const out = mergeOutcomes(5, chunks, outcomes);
    const results = out["messages sent"]!.Messages;
    expect(results.slice(0, 2)).toEqual([ok(0), ok(1)]);
    expect(codes(results[2])).toEqual([MessageErrorCode.DELIVERY_UNKNOWN]);
    expect(results[2]!.Errors![0]!.ErrorMessage).toContain("Mailjet failed (HTTP 500)");
    expect(codes(results[3])).toEqual([MessageErrorCode.NOT_SENT]);
    expect(results[3]!.Errors![0]!.ErrorIdentifier).toBe(results[4]!.Errors![0]!.ErrorIdentifier);
    expect(results[2]!.Errors![0]!.ErrorIdentifier).not.toBe(results[3]!.Errors![0]!.ErrorIdentifier);
    // The response of the call that failed by itself.
    expect(out.response!.body).toBe("boom");
    expect(out.error!.details).toMatchObject({
      code: "partial_failure",
      sent_messages: 2,
      failure: { upstream: "Mailjet", upstream_code: "mj-9999" },
      messages: { sent: [0, 1], not_sent: [3, 4], unknown: [2] },
      chunks: [
        { index: 0, messages: [0, 1], status: "sent", http_status: 200 },
        {
          index: 1,
          messages: [2, 2],
          status: "unknown",
          http_status: 500,
          error_code: "upstream_server_error",
          upstream_code: "mj-9999",
        },
        { index: 2, messages: [3, 4], status: "not_sent", error_code: "not_attempted" },
      ],
    });
    expect(out.error!.error).toMatch(
      /^Part of the batch failed: 2 of 5 messages reached Mailjet; chunk 1 \(messages 2-2\)/,
    );
  });

  it("explains the first call that failed by itself, not a not-attempted one before it in the list", () => {
    const auth = new ChainmailError("UPSTREAM_AUTH", "Mailjet refused the credentials.");
    const outcomes: CallOutcome[] = [
      notAttempted(chunks[0]!, chunks[1]!),
      { status: "not_sent", error: auth, response: response(401, "no") },
      notAttempted(chunks[2]!, chunks[1]!),
    ];
    const out = mergeOutcomes(5, chunks, outcomes);
    // Nothing was sent: the failure's own code, and every message merely not sent leaves `messages sent` out.
    expect(out.error!.details.code).toBe("upstream_auth");
    expect(out.error!.details.messages).toEqual({ sent: [], not_sent: [0, 1, 2, 3, 4], unknown: [] });
    expect(out).not.toHaveProperty("messages sent");
    expect(out.response).toEqual(response(401, "no"));
  });

  it("a failure without a response of its own takes the last answered call's response", () => {
    const timeout = new ChainmailError("UPSTREAM_TIMEOUT", "Mailjet did not answer in time.");
    const out = mergeOutcomes(5, chunks, [sent(0, 1), sent(2, 2), { status: "unknown", error: timeout }]);
    expect(out.response!.body).toBe("call 2");
    expect(out.error!.details.messages).toEqual({ sent: [0, 1, 2], not_sent: [], unknown: [3, 4] });
    const report = (out.error!.details.chunks as { http_status?: number }[])[2]!;
    expect(report).not.toHaveProperty("http_status");
  });

  it("a 400 that carries per-message results counts as sent, its refused messages keep their own entries", () => {
    const partly: CallOutcome = {
      status: "sent",
      results: [ok(0), { Status: "error", Errors: [errorEntry("mj-0013", "bad address", ["To[0].Email"])] }],
      response: response(400),
    };
    const out = mergeOutcomes(2, [{ index: 0, first: 0, last: 1 }], [partly]);
    expect(out.error).toBeUndefined();
    expect(codes(out["messages sent"]!.Messages[1])).toEqual(["mj-0013"]);
  });
});
