/**
 * The service's line (src/server/admission.ts) on its own: how many requests it starts per turn of the event loop,
 * and in what order the held ones start. Over real sockets, test/server/load.test.ts.
 */
import { EventEmitter } from "node:events";
import type { FastifyReply, FastifyRequest } from "fastify";
import { describe, expect, it } from "vitest";
import { createAdmission, STARTS_PER_TURN } from "../../src/server/admission.js";

/** A reply as the line uses it: its socket's `close` gives the place back. */
function fakeReply(): FastifyReply & { finish(): void } {
  const raw = Object.assign(new EventEmitter(), { destroyed: false });
  return { raw, header: () => undefined, finish: () => raw.emit("close") } as unknown as FastifyReply & {
    finish(): void;
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const limits = { maxInFlight: 128, maxQueued: 512, queueTimeoutMs: 60_000, maxEventLoopDelayMs: 0 };

describe("the line", () => {
  it("starts at most STARTS_PER_TURN requests in one turn of the event loop, the rest in later turns, in order", async () => {
    const admission = createAdmission(limits);
    const started: number[] = [];
    const count = 3 * STARTS_PER_TURN + 1;
    for (let i = 0; i < count; i++) {
      admission.hook({} as FastifyRequest, fakeReply(), () => started.push(i));
    }
    expect(started).toHaveLength(STARTS_PER_TURN);
    expect(admission.state()).toEqual({ inFlight: STARTS_PER_TURN, queued: count - STARTS_PER_TURN });
    const perTurn = [started.length];
    while (started.length < count) {
      const before = started.length;
      await nextTurn();
      perTurn.push(started.length - before);
    }
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(STARTS_PER_TURN);
    expect(started).toEqual([...Array(count).keys()]);
    admission.stop();
  });

  it("starts a held request when a place frees, within the turn's count", async () => {
    const admission = createAdmission({ ...limits, maxInFlight: 1 });
    const replies = [fakeReply(), fakeReply(), fakeReply()];
    const started: number[] = [];
    for (const [i, reply] of replies.entries()) admission.hook({} as FastifyRequest, reply, () => started.push(i));
    expect(started).toEqual([0]);
    replies[0]!.finish();
    expect(started).toEqual([0, 1]);
    replies[1]!.finish();
    expect(started).toEqual([0, 1, 2]);
    replies[2]!.finish();
    expect(admission.state()).toEqual({ inFlight: 0, queued: 0 });
    // A new turn, an empty line: the next request starts at once.
    await nextTurn();
    admission.hook({} as FastifyRequest, fakeReply(), () => started.push(3));
    expect(started).toEqual([0, 1, 2, 3]);
    admission.stop();
  });
});
