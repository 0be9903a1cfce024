/**
 * The Mailjet mail transport (EMAIL_TRANSPORT=mailjet, the default): splits a batch into calls of at most 50
 * recipients, runs them with bounded concurrency (MAILJET_CONCURRENCY), and merges the results in input order.
 *
 * Never twice: a call is retried only when it cannot have been delivered (see client.ts). After a call fails in a
 * way every call would (credentials, rate limit exhausted, upstream down or timing out), no further call starts;
 * calls already in flight finish. A call refused for its own content (413, a request-level 400) does not stop
 * the others. A 2xx answer is read while the same worker's next call is on its way (its status already says the
 * messages went through); should its text then prove unreadable, which stops the batch, that one call is already
 * out, like the calls in flight.
 */
import type { Config } from "../../core/config.js";
import { stringifyJson } from "../../core/json.js";
import type { RunContext } from "../../core/node.js";
import type { EmailParams, EmailRequest } from "../../schemas/email.js";
import type { MailTransport, SendOutcome } from "../types.js";
import { type Chunk, splitIntoChunks } from "./chunks.js";
import { accepted, type CallOutcome, callOutcome, postSend } from "./client.js";
import { lookupByCustomId } from "./history.js";
import { mergeOutcomes, notAttempted } from "./results.js";

type SentCall = Extract<CallOutcome, { status: "sent" }>;

const STOPS_THE_BATCH = new Set([
  "invalid_input",
  "upstream_auth",
  "upstream_rate_limited",
  "upstream_server_error",
  "upstream_timeout",
  "upstream_unreachable",
  "upstream_bad_response",
  "upstream_not_found",
  "aborted",
]);

export function mailjetTransport(_config: Config): MailTransport {
  return { name: "mailjet", send: sendBatch, lookup: lookupByCustomId };
}

async function sendBatch(request: EmailRequest, params: EmailParams, ctx: RunContext): Promise<SendOutcome> {
  const { Messages: messages, ...root } = request;
  const chunks = splitIntoChunks(messages, (root as { Globals?: unknown }).Globals);
  const calls = new ChunkCalls(chunks, ctx);
  const worker = async () => {
    // A 2xx answer is read once this worker's next call is on the wire: reading it (MessageIDs beyond 2^53 read
    // exactly) is then off the path between two calls. Any other answer is read before the next call starts,
    // since it may stop the batch.
    let unread: (() => void) | undefined;
    for (let chunk = calls.claim(); chunk; chunk = calls.claim()) {
      // Fields chainmail does not know (Globals, AdvanceErrorHandling, …) go to every call unchanged.
      const body = stringifyJson({ Messages: messages.slice(chunk.first, chunk.last + 1), ...root });
      const sending = postSend(body, params, ctx);
      if (unread) {
        const read = unread;
        unread = undefined;
        // A wait of 0 lets pending I/O run first: the request has been handed to the socket by then.
        await ctx.config.pool.wait(0);
        read();
      }
      const result = await sending;
      const sent = chunk;
      const read = () => calls.settle(sent, callOutcome(result, sent.last - sent.first + 1));
      if (accepted(result)) unread = read;
      else read();
    }
    unread?.();
  };
  const workers = Math.max(1, Math.min(ctx.config.mailjet.concurrency, chunks.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return mergeOutcomes(messages.length, chunks, calls.outcomes);
}

/** The calls of one batch: which chunk goes next, what each call came to, and whether the batch has stopped. */
class ChunkCalls {
  readonly outcomes: CallOutcome[];
  private stoppedBy: Chunk | undefined;
  private next = 0;
  // Of the calls that went through, only the last one's answer can reach the response port (mergeOutcomes): the
  // others keep their status for details.chunks and let go of their text as soon as a later call answers
  // (10,000 messages: 200 answers, about 2.5 MiB).
  private latest: { outcome: SentCall; index: number } | undefined;

  constructor(
    private readonly chunks: Chunk[],
    private readonly ctx: RunContext,
  ) {
    this.outcomes = new Array(chunks.length);
  }

  /** The next chunk to send; chunks after a batch-stopping failure (or an abort) are marked not attempted. */
  claim(): Chunk | undefined {
    while (this.next < this.chunks.length) {
      const chunk = this.chunks[this.next++]!;
      if (!this.stoppedBy && !this.ctx.signal?.aborted) return chunk;
      this.outcomes[chunk.index] = notAttempted(chunk, this.stoppedBy);
    }
    return undefined;
  }

  settle(chunk: Chunk, outcome: CallOutcome): void {
    this.outcomes[chunk.index] = outcome;
    this.keepIfLatest(outcome, chunk.index);
    if (outcome.status === "sent") return;
    this.ctx.logger?.warn(
      { transport: "mailjet", chunk: chunk.index, status: outcome.status, code: outcome.error.code },
      "mailjet call failed",
    );
    if (STOPS_THE_BATCH.has(outcome.error.code)) this.stoppedBy ??= chunk;
  }

  private keepIfLatest(outcome: CallOutcome, index: number): void {
    if (outcome.status !== "sent") return;
    let older: SentCall | undefined = outcome;
    if (!this.latest || index > this.latest.index) {
      older = this.latest?.outcome;
      this.latest = { outcome, index };
    }
    if (older) older.response = { status: older.response.status, headers: {}, body: "" };
  }
}
