/**
 * Load shedding for the node routes, as `@fastify/under-pressure` does it but per request: at most `maxInFlight`
 * node requests run at once, at most `maxQueued` more wait their turn in arrival order, each for at most
 * `queueTimeoutMs`; a request beyond the queue, or one that waited its whole time, is answered at once with `503
 * overloaded` and `Retry-After` instead of waiting behind everyone (a request that waits 29 s helps nobody). It runs
 * once the body is in (a `preHandler`): a client trickling its body holds no place (CHAINMAIL_BODY_TIMEOUT_MS cuts
 * it), and a shed request has cost only its parse. `/healthz` and `/metrics` are not behind it: they stay answered
 * under any load.
 *
 * The line also starts at most STARTS_PER_TURN requests per turn of the event loop: Node (libuv since 1.45) accepts
 * one new connection per turn, and a turn that runs every request its sockets brought in (an own-index page on
 * SQLite runs start to end in one go) lasts as long as all of them; under 500 busy connections that let a new
 * connection wait in the kernel for the whole run (15 s measured). Short turns keep accepting.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { ChainmailError } from "../core/errors.js";
import { sendError } from "./replies.js";
import type { AdmissionLimits } from "./settings.js";

type Reason = "queue_full" | "waited" | "event_loop_delay";

/**
 * Requests started per turn of the event loop. A turn then costs a few pages (about 0.5 ms each on SQLite), so new
 * connections are accepted hundreds of times a second however busy the service is; the requests held back wait in
 * the line, where its limits apply.
 */
export const STARTS_PER_TURN = 4;

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
  const line = new WaitLine();
  const loop = limits.maxEventLoopDelayMs > 0 ? loopDelayMeter(limits.maxEventLoopDelayMs) : undefined;
  const retryAfterSeconds = String(Math.max(1, Math.ceil(limits.queueTimeoutMs / 1000)));
  const shed = (reply: FastifyReply, reason: Reason) =>
    sendError(reply.header("retry-after", retryAfterSeconds), overloaded(limits, reason));

  const turn = turnCounter(() => startWaiting());
  const start = (reply: FastifyReply, admit: () => void) => {
    inFlight++;
    turn.count();
    // `close` fires once whether the answer was sent or the client went away: the place is always given back.
    reply.raw.once("close", release);
    admit();
  };
  const startWaiting = () => {
    while (inFlight < limits.maxInFlight && !turn.full()) {
      const next = line.next();
      if (!next) return;
      start(next.reply, next.admit);
    }
  };
  const release = () => {
    inFlight--;
    startWaiting();
  };

  return {
    hook(_request, reply, done) {
      if (inFlight < limits.maxInFlight && line.queued === 0 && !turn.full()) return start(reply, done);
      if (line.queued >= limits.maxQueued) return shed(reply, "queue_full");
      line.add(reply, done, limits.queueTimeoutMs, () => shed(reply, "waited"));
    },
    loopHook(_request, reply, done) {
      if (loop && loop.delay() > limits.maxEventLoopDelayMs) return shed(reply, "event_loop_delay");
      done();
    },
    stop: () => loop?.stop(),
    state: () => ({ inFlight, queued: line.queued }),
  };
}

/**
 * The requests started in this turn of the event loop. The turn's end (its check phase, after the sockets were read)
 * sets the count back to zero and calls `onNewTurn`, which starts those waiting.
 */
function turnCounter(onNewTurn: () => void): { count(): void; full(): boolean } {
  let started = 0;
  let endScheduled = false;
  const endTurn = () => {
    endScheduled = false;
    started = 0;
    onNewTurn();
  };
  return {
    count() {
      started++;
      if (endScheduled) return;
      endScheduled = true;
      setImmediate(endTurn);
    },
    full: () => started >= STARTS_PER_TURN,
  };
}

function overloaded(limits: AdmissionLimits, reason: Reason): ChainmailError {
  const why =
    reason === "queue_full"
      ? `${limits.maxInFlight} requests running and ${limits.maxQueued} waiting.`
      : reason === "waited"
        ? `the request waited ${limits.queueTimeoutMs} ms for one of ${limits.maxInFlight} places.`
        : `its event loop is more than ${limits.maxEventLoopDelayMs} ms behind.`;
  return new ChainmailError("OVERLOADED", `The service is at capacity: ${why}`, {
    hint: "Retry after the time in the Retry-After header, or ask the operator to add instances or raise CHAINMAIL_MAX_IN_FLIGHT.",
    details: { reason },
  });
}

/** Requests waiting for a place, in arrival order, each for a bounded time. */
class WaitLine {
  // A FIFO as an array with a moving head: shift() on a long array copies it on every call.
  private entries: Waiting[] = [];
  private head = 0;
  queued = 0;

  /** Queues a request; `onTimeout` answers it if its turn has not come within `timeoutMs`. */
  add(reply: FastifyReply, admit: () => void, timeoutMs: number, onTimeout: () => void): void {
    const entry: Waiting = { reply, admit, timer: undefined, shed: false };
    entry.timer = setTimeout(() => {
      entry.shed = true;
      this.queued--;
      this.compact();
      onTimeout();
    }, timeoutMs);
    this.entries.push(entry);
    this.queued++;
  }

  /** The next request whose turn it is, taken out of the line. */
  next(): Waiting | undefined {
    let found: Waiting | undefined;
    while (this.head < this.entries.length) {
      const entry = this.entries[this.head++]!;
      if (entry.shed) continue;
      this.queued--;
      clearTimeout(entry.timer);
      // A client that went away while it waited takes no place.
      if (entry.reply.raw.destroyed) continue;
      found = entry;
      break;
    }
    this.compact();
    return found;
  }

  // Entries already taken or shed are dropped now and then, so the array stays within a few times the line.
  private compact(): void {
    if (this.queued === 0) {
      this.entries = [];
      this.head = 0;
    } else if (this.entries.length > 1024 && this.entries.length > 4 * this.queued) {
      this.entries = this.entries.slice(this.head).filter((entry) => !entry.shed);
      this.head = 0;
    }
  }
}

/**
 * The event loop's delay: how late the last tick of a timer came, or, while a tick is overdue, how overdue it is
 * now.
 */
function loopDelayMeter(maxDelayMs: number): { delay(): number; stop(): void } {
  const tickMs = Math.max(5, Math.min(50, Math.floor(maxDelayMs / 2)));
  let lastTick = performance.now();
  let lastDelay = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    lastDelay = Math.max(0, now - lastTick - tickMs);
    lastTick = now;
  }, tickMs).unref();
  return {
    delay: () => Math.max(lastDelay, performance.now() - lastTick - tickMs),
    stop: () => clearInterval(ticker),
  };
}
