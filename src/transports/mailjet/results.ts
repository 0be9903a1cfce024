/**
 * Merging the calls of a split batch back into one outcome: one result per input message, in input order, and
 * when some call failed, an `error` whose `details.chunks` says which messages were sent, surely not sent, or
 * may have been sent, so a caller can resend exactly the `not_sent` ones.
 */
import { randomUUID } from "node:crypto";
import { ChainmailError, type ErrorPayload, MessageErrorCode } from "../../core/errors.js";
import type { MessageResult } from "../../schemas/email.js";
import type { SendOutcome } from "../types.js";
import type { Chunk } from "./chunks.js";
import type { CallOutcome, FailedCall } from "./client.js";

/** What `details.chunks` lists for every call of a batch. */
export interface ChunkReport {
  index: number;
  /** First and last input index of the chunk's messages (inclusive). */
  messages: [number, number];
  status: "sent" | "not_sent" | "unknown";
  http_status?: number;
  error_code?: string;
  upstream_code?: string;
}

/** A call that was never attempted: nothing of it was sent. */
export function notAttempted(chunk: Chunk, cause: Chunk | undefined): CallOutcome {
  const why = cause ? `chunk ${cause.index} failed in a way every call would` : "the send was cancelled";
  return {
    status: "not_sent",
    error: new ChainmailError("NOT_ATTEMPTED", `Chunk ${chunk.index} was not attempted: ${why}.`),
  };
}

export function mergeOutcomes(
  messageCount: number,
  chunks: readonly Chunk[],
  outcomes: readonly CallOutcome[],
): SendOutcome {
  const results: MessageResult[] = new Array(messageCount);
  const reports: ChunkReport[] = [];
  let sentMessages = 0;
  for (const chunk of chunks) {
    const outcome = outcomes[chunk.index]!;
    const size = chunk.last - chunk.first + 1;
    if (outcome.status === "sent") {
      for (let i = 0; i < size; i++) results[chunk.first + i] = outcome.results[i]!;
      sentMessages += size;
    } else {
      const identifier = randomUUID();
      for (let i = 0; i < size; i++) results[chunk.first + i] = failedEntry(outcome, identifier);
    }
    reports.push(report(chunk, outcome));
  }

  const failed = chunks.filter((c) => outcomes[c.index]!.status !== "sent");
  const answered = chunks.filter((c) => outcomes[c.index]!.response !== undefined);
  if (failed.length === 0) {
    return { "messages sent": { Messages: results }, response: outcomes[answered.at(-1)!.index]!.response! };
  }
  // The failure to explain: the first chunk that failed by itself (a not-attempted chunk only follows one).
  const primary = failed.find((c) => (outcomes[c.index] as FailedCall).error.code !== "not_attempted") ?? failed[0]!;
  const primaryOutcome = outcomes[primary.index] as FailedCall;
  const response =
    primaryOutcome.response ?? (answered.length ? outcomes[answered.at(-1)!.index]!.response : undefined);
  const anythingMaybeSent = sentMessages > 0 || failed.some((c) => outcomes[c.index]!.status === "unknown");

  let error: ErrorPayload;
  if (sentMessages === 0) {
    // No call got through: the whole request failed, with the first call's own error code.
    const payload = primaryOutcome.error.toPayload();
    error = { ...payload, details: { ...payload.details, chunks: reports } };
  } else {
    const range = `messages ${primary.first}-${primary.last}`;
    error = new ChainmailError(
      "PARTIAL_FAILURE",
      `Part of the batch failed: ${sentMessages} of ${messageCount} messages reached Mailjet; chunk ${primary.index} (${range}) failed: ${primaryOutcome.error.shortMessage}`,
      {
        hint: 'details.chunks lists every call: resend only the messages of chunks with status "not_sent"; those with status "unknown" may have been delivered.',
        details: {
          chunks: reports,
          sent_messages: sentMessages,
          failure: primaryOutcome.error.toPayload().details,
        },
      },
    ).toPayload();
  }
  return {
    ...(anythingMaybeSent ? { "messages sent": { Messages: results } } : {}),
    ...(response ? { response } : {}),
    error,
  };
}

function report(chunk: Chunk, outcome: CallOutcome): ChunkReport {
  const base: ChunkReport = { index: chunk.index, messages: [chunk.first, chunk.last], status: outcome.status };
  if (outcome.response) base.http_status = outcome.response.status;
  if (outcome.status !== "sent") {
    base.error_code = outcome.error.code;
    const upstreamCode = outcome.error.details.upstream_code;
    if (typeof upstreamCode === "string") base.upstream_code = upstreamCode;
  }
  return base;
}

/** The entry every message of a failed call gets: one chainmail error; the call's messages share its identifier. */
function failedEntry(outcome: FailedCall, identifier: string): MessageResult {
  const notSent = outcome.status === "not_sent";
  return {
    Status: "error",
    Errors: [
      {
        ErrorIdentifier: identifier,
        ErrorCode: notSent ? MessageErrorCode.NOT_SENT : MessageErrorCode.DELIVERY_UNKNOWN,
        StatusCode: outcome.response?.status ?? 0,
        ErrorMessage: notSent
          ? `Not sent: ${outcome.error.shortMessage} Safe to resend.`
          : `Delivery unknown: ${outcome.error.shortMessage} It may have been delivered; check before resending.`,
        ErrorRelatedTo: [],
      },
    ],
  };
}
