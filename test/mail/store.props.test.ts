/**
 * The mail lifecycle store: a message's state and the suppression list never depend on the order events arrive
 * in, nor on repeats (fast-check over orderings, batchings and duplicates), in a real SQLite file (PostgreSQL under
 * `npm run test:services`, test/services/mail-store.pg.test.ts).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MailEvent, readMailjetEvents } from "../../src/mail/events.js";
import { FACT_RANK, type Fact, foldFacts, MAIL_STATES, transition } from "../../src/mail/lifecycle.js";
import { type MailStore, openMailStore } from "../../src/mail/store.js";
import { type IndexBackend, openBackend, testEngine } from "../support/index-backend.js";

const RUNS = Number(process.env.PROPS_RUNS ?? (testEngine() === "postgres" ? 10 : 40));
const SEED = Number(process.env.PROPS_SEED ?? 20261128);

let backend: IndexBackend;
beforeAll(async () => {
  backend = await openBackend("mail_store");
});
afterAll(async () => backend?.close());

let stores = 0;
const freshStore = async (softBounceLimit = 2): Promise<MailStore> =>
  openMailStore(await backend.target(`mail_${++stores}`), { softBounceLimit });

const FACTS = Object.keys(FACT_RANK) as Fact[];

describe("the transition function", () => {
  it("ends in the same state whatever the order of the facts", () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.constantFrom(...FACTS), { minLength: 1, maxLength: 12 })
          .chain((facts) =>
            fc.tuple(
              fc.constant(facts),
              fc.shuffledSubarray(facts, { minLength: facts.length, maxLength: facts.length }),
            ),
          ),
        ([facts, shuffled]) => {
          expect(foldFacts(shuffled)).toEqual(foldFacts(facts));
          expect(MAIL_STATES).toContain(foldFacts(facts)!.state);
        },
      ),
      { numRuns: 300, seed: SEED },
    );
  });

  it("never moves down: an open after a hard bounce keeps the bounce", () => {
    const bounced = transition(transition(undefined, "sent"), "hard_bounce");
    expect(transition(bounced, "opened")).toEqual({ state: "bounced", bounce: "hard", rank: FACT_RANK.hard_bounce });
    expect(transition(transition(undefined, "opened"), "delivered").state).toBe("opened");
  });
});

/** Mailjet-shaped events for a few messages to a few recipients. */
const KINDS = ["sent", "open", "click", "bounce-soft", "bounce-hard", "blocked", "spam", "unsub"] as const;
const MESSAGES = [
  { id: "1", email: "a@example.com" },
  { id: "2", email: "a@example.com" },
  { id: "3", email: "b@example.com" },
  { id: "18446744073709551615", email: "c@example.com" },
];
const eventArb = fc.record({
  message: fc.constantFrom(...MESSAGES),
  kind: fc.constantFrom(...KINDS),
  time: fc.integer({ min: 1_700_000_000, max: 1_700_000_100 }),
});

function mailjetEvent(e: { message: (typeof MESSAGES)[number]; kind: (typeof KINDS)[number]; time: number }) {
  const [event, bounce] = e.kind.split("-");
  return {
    event,
    time: e.time,
    MessageID: BigInt(e.message.id),
    email: e.message.email,
    CustomID: `c-${e.message.id}`,
    Payload: `payload-${e.message.id}`,
    ...(event === "bounce" ? { hard_bounce: bounce === "hard", blocked: false, error: "user unknown" } : {}),
    ...(event === "click" ? { url: "https://example.com/x" } : {}),
  };
}

async function snapshot(store: MailStore) {
  const states = [];
  for (const m of MESSAGES) {
    const [view] = await store.messages(m.id);
    states.push(view ? { state: view.State, bounce: view.Bounce, events: view.Events.length } : undefined);
  }
  return { states, suppressions: await store.suppressions() };
}

describe("the store", () => {
  it("keeps the same states and suppression list for any order, batching and repetition of the events", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 14 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        fc.boolean(),
        async (raw, picks, withSends) => {
          const events: MailEvent[] = readMailjetEvents(raw.map(mailjetEvent)).events;
          // Another order, with repeats, cut into batches at random.
          const reordered = [...events].reverse();
          for (const p of picks) reordered.splice(p % (reordered.length + 1), 0, events[p % events.length]!);
          const a = await freshStore();
          const b = await freshStore();
          const c = await freshStore();
          try {
            if (withSends) {
              const sends = MESSAGES.map((m) => ({
                messageId: m.id,
                email: m.email,
                sender: "News@Example.com",
                transport: "mailjet",
                fact: "sent" as const,
              }));
              await a.recordSends(sends);
              await b.recordSends(sends);
              await c.recordSends(sends);
            }
            await a.applyEvents(events);
            for (let i = 0; i < reordered.length; i += 3) await b.applyEvents(reordered.slice(i, i + 3));
            expect(await snapshot(b)).toEqual(await snapshot(a));
            // The same batches at once: committed together (group commit), each answered with its own counts.
            const batches = Array.from({ length: Math.ceil(reordered.length / 3) }, (_, i) =>
              reordered.slice(i * 3, i * 3 + 3),
            );
            const answers = await Promise.all(batches.map((batch) => c.applyEvents(batch)));
            expect(await snapshot(c)).toEqual(await snapshot(a));
            const stored = answers.reduce((sum, r) => sum + r.stored, 0);
            expect(stored + answers.reduce((sum, r) => sum + r.repeated, 0)).toBe(reordered.length);
            // The feed hands out each stored event once.
            const feed = await c.eventsAfter(0, { limit: 1_000 });
            expect(feed.events).toHaveLength(stored);
            expect(new Set(feed.events.map((e) => e.cursor)).size).toBe(stored);
          } finally {
            await a.close();
            await b.close();
            await c.close();
          }
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it("ends in the same place whether the send record comes before or after the events", async () => {
    const events = readMailjetEvents([
      mailjetEvent({ message: MESSAGES[0]!, kind: "open", time: 1_700_000_010 }),
      mailjetEvent({ message: MESSAGES[0]!, kind: "spam", time: 1_700_000_020 }),
    ]).events;
    const send = { messageId: "1", email: "a@example.com", sender: "news@example.com", transport: "smtp" };
    const before = await freshStore();
    const after = await freshStore();
    await before.recordSends([{ ...send, fact: "sent" }]);
    await before.applyEvents(events);
    await after.applyEvents(events);
    expect((await after.suppressions())[0]?.sender).toBe("*");
    await after.recordSends([{ ...send, fact: "sent" }]);
    expect(await snapshot(after)).toEqual(await snapshot(before));
    expect(await before.suppressions()).toEqual([
      expect.objectContaining({ sender: "news@example.com", email: "a@example.com", reason: "spam", message_id: "1" }),
    ]);
    await before.close();
    await after.close();
  });

  it("a replayed event changes nothing, not even a suppression removed by hand", async () => {
    const store = await freshStore();
    const [unsub] = readMailjetEvents(
      mailjetEvent({ message: MESSAGES[2]!, kind: "unsub", time: 1_700_000_001 }),
    ).events;
    expect(await store.applyEvents([unsub!])).toEqual({ stored: 1, repeated: 0 });
    expect(await store.unsuppress("*", "b@example.com")).toBe(1);
    expect(await store.applyEvents([unsub!, unsub!])).toEqual({ stored: 0, repeated: 2 });
    expect(await store.suppressions()).toEqual([]);
    const [view] = await store.messages("c-3");
    expect(view).toMatchObject({ State: "unsubscribed", EventPayload: "payload-3", CustomID: "c-3" });
    expect(view?.Events).toEqual([{ event: "unsub", time: "2023-11-14T22:13:21.000Z", Payload: "payload-3" }]);
    await store.close();
  });

  it("suppresses after the configured number of soft bounces, and the event names its cause", async () => {
    const store = await freshStore(2);
    const soft = (time: number) => mailjetEvent({ message: MESSAGES[0]!, kind: "bounce-soft", time });
    await store.applyEvents(readMailjetEvents(soft(1_700_000_001)).events);
    expect(await store.suppressions()).toEqual([]);
    await store.applyEvents(readMailjetEvents(soft(1_700_000_002)).events);
    const [entry] = await store.suppressions();
    expect(entry).toMatchObject({ email: "a@example.com", reason: "soft_bounce", message_id: "1" });
    expect(entry?.event).toMatch(/^[\w-]{32}$/);
    await store.close();
  });

  it("keeps at most 100 events per message and says the list is cut", async () => {
    const store = await freshStore();
    const opens = Array.from({ length: 105 }, (_, i) =>
      mailjetEvent({ message: MESSAGES[3]!, kind: "open", time: 1_700_000_000 + i }),
    );
    await store.applyEvents(readMailjetEvents(opens).events);
    const [view] = await store.messages("18446744073709551615");
    expect(view?.Events).toHaveLength(100);
    expect(view?.EventsTruncated).toBe(true);
    expect(view?.State).toBe("opened");
    await store.close();
  });
});
