/**
 * Merging the calls of a split batch back into one outcome: one result per input message, in input order, and
 * when some call failed, an `error` whose `details.messages` (like every transport's) says which messages were
 * sent, surely not sent, or may have been sent, so a caller can resend exactly the `not_sent` ones;
 * `details.chunks` adds what happened to each call.
 */
import { randomUUID } from "node:crypto";
import { ChainmailError } from "../../core/errors.js";
import type { MessageResult } from "../../schemas/email.js";
import { batchError, deliveryUnknownResult, failedOutcome, messageStatuses, notSentResult } from "../outcome.js";
import type { SendOutcome } from "../types.js";
import type { Chunk } from "./chunks.js";
import type { CallOutcome, FailedCall } from "./client.js";

type SentCall = Exclude<CallOutcome, FailedCall>;

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

/** A call that was never attempted: nothing of it was sent. Cancelled ones say `aborted`, like every transport. */
export function notAttempted(chunk: Chunk, cause: Chunk | undefined): CallOutcome {
  const error = cause
    ? new ChainmailError(
        "NOT_ATTEMPTED",
        `Chunk ${chunk.index} was not attempted: chunk ${cause.index} failed in a way every call would.`,
      )
    : new ChainmailError("ABORTED", `Chunk ${chunk.index} was not attempted: the send was cancelled.`);
  return { status: "not_sent", error };
}

export function mergeOutcomes(
  messageCount: number,
  chunks: readonly Chunk[],
  outcomes: readonly CallOutcome[],
): SendOutcome {
  const results: MessageResult[] = new Array(messageCount);
  for (const chunk of chunks) {
    const outcome = outcomes[chunk.index]!;
    const size = chunk.last - chunk.first + 1;
    // The messages of a failed call share one ErrorIdentifier.
    const failed = outcome.status === "sent" ? undefined : failedResult(outcome, randomUUID());
    for (let i = 0; i < size; i++) results[chunk.first + i] = failed ?? (outcome as SentCall).results[i]!;
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

  const messages = messageStatuses(results);
  const range = `messages ${primary.first}-${primary.last}`;
  const error = batchError(
    primaryOutcome.error,
    messages,
    {
      error: `Part of the batch failed: ${messages.sent.length} of ${messageCount} messages reached Mailjet; chunk ${primary.index} (${range}) failed: ${primaryOutcome.error.shortMessage}`,
      hint: "details.messages lists the input indexes: resend exactly not_sent; those in unknown may have been delivered (details.chunks has every call).",
    },
    { chunks: chunks.map((chunk) => report(chunk, outcomes[chunk.index]!)) },
  );
  return failedOutcome(results, error, response);
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

/** The result every message of a failed call gets: not sent, or delivery unknown. */
function failedResult(outcome: FailedCall, identifier: string): MessageResult {
  return outcome.status === "not_sent"
    ? notSentResult(outcome.error.shortMessage.replace(/\.$/, ""), identifier)
    : deliveryUnknownResult(outcome.error.shortMessage.replace(/\.$/, ""), identifier);
}
