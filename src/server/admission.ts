/**
 * Load shedding for the node routes, as `@fastify/under-pressure` does it but per request: at most `maxInFlight`
 * node requests run at once, at most `maxQueued` more wait their turn in arrival order, each for at most
 * `queueTimeoutMs`; a request beyond the queue, or one that waited its whole time, is answered at once with `503
 * overloaded` and `Retry-After` instead of waiting behind everyone (a request that waits 29 s helps nobody). It runs
 * once the body is in (a `preHandler`): a client trickling its body holds no place (CHAINMAIL_BODY_TIMEOUT_MS cuts
 * it), and a shed request has cost only its parse. `/healthz` and `/metrics` are not behind it: they stay answered
 * under any load.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ChainmailError } from "../core/errors.js";
import { sendError } from "./replies.js";
import type { AdmissionLimits } from "./settings.js";

type Reason = "queue_full" | "waited" | "event_loop_delay";

interface Waiting {
  reply: FastifyReply;
  admit: () => void;
  timer: NodeJS.Timeout | undefined;
  /** Answered 503 after waiting its whole time: skipped when its turn comes. */
  shed: boolean;
}

export interface Admission {
  /** A route hook: admits the request now, queues it, or answers 503. */
  hook(request: FastifyRequest, reply: FastifyReply, done: () => void): void;
  /**
   * An `onRequest` hook, before the body is read: 503 while the event loop is behind by more than
   * `maxEventLoopDelayMs`. The CPU-bound part of a request (an own-index page on SQLite) runs start to end in one go,
   * so under too much load requests do not wait in the line above but unread in their sockets, for as long as the
   * loop takes to come round: that delay is what this bounds.
   */
  loopHook(request: FastifyRequest, reply: FastifyReply, done: () => void): void;
  /** Stops the event-loop timer (the app's onClose). */
  stop(): void;
  /** Requests running and waiting now (for metrics and tests). */
  state(): { inFlight: number; queued: number };
}

export function createAdmission(limits: AdmissionLimits): Admission {
  let inFlight = 0;
  // A FIFO as an array with a moving head: shift() on a long array copies it on every call.
  let queue: Waiting[] = [];
  let head = 0;
  let queued = 0;
  const retryAfterSeconds = String(Math.max(1, Math.ceil(limits.queueTimeoutMs / 1000)));

  // The loop's delay: how late the last tick of a timer came, or, while a tick is overdue, how overdue it is now.
  const tickMs = Math.max(5, Math.min(50, Math.floor(limits.maxEventLoopDelayMs / 2)));
  let lastTick = performance.now();
  let lastDelay = 0;
  const ticker =
    limits.maxEventLoopDelayMs > 0
      ? setInterval(() => {
          const now = performance.now();
          lastDelay = Math.max(0, now - lastTick - tickMs);
          lastTick = now;
        }, tickMs).unref()
      : undefined;
  const loopDelay = () => Math.max(lastDelay, performance.now() - lastTick - tickMs);

  const shed = (reply: FastifyReply, reason: Reason) => {
    const refusal = new ChainmailError(
      "OVERLOADED",
      reason === "queue_full"
        ? `The service is at capacity: ${limits.maxInFlight} requests running and ${limits.maxQueued} waiting.`
        : reason === "waited"
          ? `The service is at capacity: the request waited ${limits.queueTimeoutMs} ms for one of ${limits.maxInFlight} places.`
          : `The service is at capacity: its event loop is more than ${limits.maxEventLoopDelayMs} ms behind.`,
      {
        hint: "Retry after the time in the Retry-After header, or ask the operator to add instances or raise CHAINMAIL_MAX_IN_FLIGHT.",
        details: { reason },
      },
    );
    sendError(reply.header("retry-after", retryAfterSeconds), refusal);
  };

  const release = () => {
    inFlight--;
    while (head < queue.length) {
      const next = queue[head++]!;
      if (next.shed) continue;
      queued--;
      clearTimeout(next.timer);
      // A client that went away while it waited takes no place.
      if (next.reply.raw.destroyed) continue;
      start(next.reply, next.admit);
      break;
    }
    compact();
  };

  // Entries already taken or shed are dropped now and then, so the array stays within a few times the queue.
  const compact = () => {
    if (queued === 0) {
      queue = [];
      head = 0;
    } else if (queue.length > 1024 && queue.length > 4 * queued) {
      queue = queue.slice(head).filter((entry) => !entry.shed);
      head = 0;
    }
  };

  const start = (reply: FastifyReply, admit: () => void) => {
    inFlight++;
    // `close` fires once whether the answer was sent or the client went away: the place is always given back.
    reply.raw.once("close", release);
    admit();
  };

  return {
    hook(_request, reply, done) {
      if (inFlight < limits.maxInFlight && queued === 0) return start(reply, done);
      if (queued >= limits.maxQueued) return shed(reply, "queue_full");
      const entry: Waiting = { reply, admit: done, timer: undefined, shed: false };
      entry.timer = setTimeout(() => {
        entry.shed = true;
        queued--;
        compact();
        shed(reply, "waited");
      }, limits.queueTimeoutMs);
      queue.push(entry);
      queued++;
    },
    loopHook(_request, reply, done) {
      if (ticker && loopDelay() > limits.maxEventLoopDelayMs) return shed(reply, "event_loop_delay");
      done();
    },
    stop: () => clearInterval(ticker),
    state: () => ({ inFlight, queued }),
  };
}
