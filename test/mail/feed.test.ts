/**
 * The event feed (`GET /events?after=&kinds=&limit=`) and the suppression lookup (`POST /suppressions/lookup`) the
 * workflow packages use: events handed out in the order stored, each once to a follower of the cursor, filtered by
 * kind; concurrent POSTs committed together (group commit) still each answered with their own counts; every bad
 * query field refused with 400 naming it (fast-check over the query). Real sockets, a real SQLite store.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config.js";
import { InvalidInputError } from "../../src/core/errors.js";
import { runNodeWith } from "../../src/core/node.js";
import { MAX_FEED_LIMIT, readFeedQuery } from "../../src/mail/feed.js";
import { pollMailEvents, serviceSuppressions } from "../../src/mail/service.js";
import { emailSend } from "../../src/nodes/index.js";
import { startServer } from "../../src/server/index.js";
import { call } from "../support/server-helpers.js";

const RUNS = Number(process.env.PROPS_RUNS ?? 200);
const SEED = Number(process.env.PROPS_SEED ?? 20261128);

const dir = mkdtempSync(join(tmpdir(), "chainmail-mail-feed-"));
const TOKEN = "feed-token-0123456789";
const BEARER = { authorization: `Bearer ${TOKEN}` };
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const config = loadConfig({ CHAINMAIL_MAIL_DB: join(dir, "mail.sqlite"), EMAIL_TRANSPORT: "outbox" });
  const server = await startServer({ port: 0, config, tokens: [TOKEN] });
  url = server.url;
  close = server.close;
});
afterAll(async () => {
  await close?.();
  rmSync(dir, { recursive: true, force: true });
});

const event = (kind: string, n: number, extra: object = {}) => ({
  event: kind,
  time: 1_700_000_000 + n,
  MessageID: 5_000 + Math.floor(n / 3),
  email: `R${n % 4}@Example.com`,
  Payload: "rule=feed",
  ...extra,
});
const post = (body: object) => call(`${url}/events/mailjet`, "POST", body, BEARER);
const feed = (query: string) => call(`${url}/events${query}`, "GET", undefined, BEARER);

type Page = {
  events: { cursor: string; event: string; MessageID: number; email: string }[];
  cursor: string;
  more: boolean;
};

describe("GET /events", () => {
  it("asks for the token like the other routes", async () => {
    expect((await call(`${url}/events`, "GET")).status).toBe(401);
    expect((await call(`${url}/events`, "GET", undefined, { authorization: "Bearer wrong-token-xx" })).status).toBe(
      403,
    );
  });

  it("hands out every event once, in the order stored, to a reader that follows the cursor", async () => {
    const kinds = ["sent", "open", "click", "bounce", "spam", "unsub", "blocked"];
    const all = Array.from({ length: 40 }, (_, n) =>
      event(kinds[n % kinds.length]!, n, kinds[n % kinds.length] === "bounce" ? { hard_bounce: true } : {}),
    );
    // Concurrent POSTs (grouped in commits), one repeated: each answered with its own counts.
    const answers = await Promise.all([
      post(all.slice(0, 15)),
      post(all.slice(15, 30)),
      post(all.slice(30)),
      post(all[0]!),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.reduce((sum, a) => sum + a.body.stored, 0)).toBe(40);
    expect(answers.reduce((sum, a) => sum + a.body.repeated, 0)).toBe(1);

    const seen: Page["events"] = [];
    let cursor = "0";
    for (let pages = 0; pages < 20; pages++) {
      const page = (await feed(`?after=${cursor}&limit=7`)).body as Page;
      seen.push(...page.events);
      cursor = page.cursor;
      if (!page.more) break;
    }
    expect(seen).toHaveLength(40);
    expect(new Set(seen.map((e) => `${e.MessageID} ${e.event} ${e.email}`)).size).toBe(40);
    const cursors = seen.map((e) => Number(e.cursor));
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(seen[0]).toMatchObject({ email: expect.stringMatching(/^r\d@example\.com$/), Payload: "rule=feed" });
    expect(seen.find((e) => e.event === "bounce")).toMatchObject({ hard_bounce: true, State: expect.any(String) });
    // Nothing new: the same cursor back, no events.
    expect((await feed(`?after=${cursor}`)).body).toEqual({ events: [], cursor, more: false });

    // New events after the cursor are the only ones the next poll sees; a repeat adds nothing.
    await post([event("open", 100), all[1]!]);
    const next = (await feed(`?after=${cursor}`)).body as Page;
    expect(next.events.map((e) => [e.event, e.MessageID])).toEqual([["open", 5_033]]);
  });

  it("keeps only the kinds asked for", async () => {
    const page = (await feed("?kinds=bounce,spam&limit=1000")).body as Page;
    expect(page.events.length).toBeGreaterThan(0);
    expect(new Set(page.events.map((e) => e.event))).toEqual(new Set(["bounce", "spam"]));
  });

  it("refuses a bad query with 400 naming the field (fast-check over the query)", async () => {
    const field = fc.constantFrom("after", "kinds", "limit", "page", "constructor", "__proto__");
    const value = fc.oneof(
      fc.string({ maxLength: 24 }),
      fc.nat().map(String),
      fc.constantFrom("bounce,spam", "open", "", "-1", "0", "1001", "9007199254740992", "1e3", "sent,,open"),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(field, value), { maxLength: 4 }), async (pairs) => {
        const query = pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
        const answer = await feed(query ? `?${query}` : "");
        let expected: ReturnType<typeof readFeedQuery> | InvalidInputError;
        // As the service's query parser gives it: own keys (`__proto__` too), a repeated key as an array.
        const given: Record<string, string | string[]> = {};
        for (const [k, v] of pairs) {
          const had = Object.hasOwn(given, k) ? given[k] : undefined;
          const value = had === undefined ? v : ([] as string[]).concat(had, v);
          Object.defineProperty(given, k, { value, enumerable: true, writable: true, configurable: true });
        }
        try {
          expected = readFeedQuery(given);
        } catch (error) {
          expected = error as InvalidInputError;
        }
        if (expected instanceof InvalidInputError) {
          expect(answer.status).toBe(400);
          const fields = answer.body.error.details.violations.map((v: { field: string }) => v.field);
          expect(fields.length).toBeGreaterThan(0);
          for (const f of fields) expect(pairs.map(([k]) => k)).toContain(f);
        } else {
          expect(answer.status).toBe(200);
          expect(answer.body.events.length).toBeLessThanOrEqual(expected.limit);
          for (const e of answer.body.events as Page["events"]) {
            expect(Number(e.cursor)).toBeGreaterThan(expected.after);
            if (expected.kinds) expect(expected.kinds).toContain(e.event);
          }
        }
      }),
      { numRuns: Math.min(RUNS, 150), seed: SEED },
    );
  });

  it("reads the query by its rules: bounds, known kinds, each field once", () => {
    expect(readFeedQuery({})).toEqual({ after: 0, limit: 100 });
    expect(readFeedQuery({ after: "12", kinds: "spam,bounce,spam", limit: String(MAX_FEED_LIMIT) })).toEqual({
      after: 12,
      kinds: ["spam", "bounce"],
      limit: MAX_FEED_LIMIT,
    });
    const fieldsOf = (query: object) => {
      try {
        readFeedQuery(query);
        return [];
      } catch (error) {
        return (error as InvalidInputError).violations.map((v) => v.field);
      }
    };
    expect(fieldsOf({ after: "9007199254740992" })).toEqual(["after"]);
    expect(fieldsOf({ limit: "0" })).toEqual(["limit"]);
    expect(fieldsOf({ kinds: "bounce,hard_bounce" })).toEqual(["kinds"]);
    expect(fieldsOf({ after: ["1", "2"] })).toEqual(["after"]);
    expect(fieldsOf({ since: "1" })).toEqual(["since"]);
  });
});

describe("POST /suppressions/lookup", () => {
  it("answers which recipients a sender may not mail, with the reason and since when", async () => {
    await post([
      event("spam", 900, { MessageID: 9_001, email: "Gone@Example.com" }),
      event("open", 901, { MessageID: 9_002, email: "kept@example.com" }),
    ]);
    const found = await call(
      `${url}/suppressions/lookup`,
      "POST",
      { sender: "news@chainmail.test", emails: ["gone@example.com", "kept@example.com"] },
      BEARER,
    );
    expect(found.status).toBe(200);
    expect(found.body.suppressed).toEqual([
      expect.objectContaining({ email: "gone@example.com", reason: "spam", sender: "*", since: expect.any(String) }),
    ]);
    const bad = await call(
      `${url}/suppressions/lookup`,
      "POST",
      { sender: "nobody", emails: ["x", 3], extra: 1 },
      BEARER,
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.violations.map((v: { field: string }) => v.field)).toEqual([
      "body.extra",
      "body.sender",
      "body.emails[0]",
      "body.emails[1]",
    ]);
    expect((await call(`${url}/suppressions/lookup`, "POST", { sender: "a@b.co", emails: [] })).status).toBe(401);
  });
});

describe("the workflow packages' client of the service (mail/service.ts)", () => {
  const hostConfig = (token = TOKEN) =>
    loadConfig({ CHAINMAIL_SERVICE_URL: url, CHAINMAIL_SERVICE_TOKEN: token, CHAINMAIL_MAX_RETRIES: "0" });

  it("polls the feed after its cursor, of the kinds chosen, and keeps up from where it was", async () => {
    const first = await pollMailEvents(hostConfig(), undefined, { kinds: ["spam"] });
    expect(first.events.length).toBeGreaterThan(0);
    expect(new Set(first.events.map((e) => e.event))).toEqual(new Set(["spam"]));
    expect(first.cursor.after).toBe(first.events.at(-1)!.cursor);
    expect((await pollMailEvents(hostConfig(), first.cursor, { kinds: ["spam"] })).events).toEqual([]);
    await post([event("spam", 950, { MessageID: 9_100, email: "late@example.com" })]);
    const next = await pollMailEvents(hostConfig(), first.cursor, { kinds: ["spam"] });
    expect(next.events.map((e) => e.email)).toEqual(["late@example.com"]);
  });

  it("email-send with the service's list: suppressed recipients answered per message, the rest sent", async () => {
    const config = loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: join(dir, "outbox") });
    const output = await runNodeWith(
      emailSend,
      {
        request: {
          Messages: [["gone@example.com"], ["kept@example.com", "GONE@example.com"]].map((to) => ({
            From: { Email: "news@chainmail.test" },
            To: to.map((Email) => ({ Email })),
            Subject: "hello",
            TextPart: "hello",
          })),
        },
      },
      { config, suppressions: serviceSuppressions(hostConfig()) },
    );
    const [alone, shared] = output["messages sent"]!.Messages;
    expect(alone).toMatchObject({
      Status: "error",
      Errors: [{ ErrorCode: "suppressed", Reason: "spam", Since: expect.any(String), ErrorRelatedTo: ["To[0].Email"] }],
    });
    expect(alone!.To).toBeUndefined();
    expect(shared!.To!.map((r) => r.Email)).toEqual(["kept@example.com"]);
    expect(shared!.Errors).toEqual([
      expect.objectContaining({ ErrorCode: "suppressed", ErrorRelatedTo: ["To[1].Email"] }),
    ]);
  });

  it("a refused token sends nothing and names the setting, never the token", async () => {
    const config = loadConfig({ EMAIL_TRANSPORT: "outbox", OUTBOX_DIR: join(dir, "outbox-refused") });
    const output = await runNodeWith(
      emailSend,
      {
        request: {
          Messages: [
            { From: { Email: "news@chainmail.test" }, To: [{ Email: "x@example.com" }], Subject: "s", TextPart: "t" },
          ],
        },
      },
      { config, suppressions: serviceSuppressions(hostConfig("not-the-token-123456")) },
    );
    expect(output["messages sent"]).toBeUndefined();
    expect(output.error?.details).toMatchObject({ code: "upstream_auth", field: "CHAINMAIL_SERVICE_TOKEN" });
    expect(JSON.stringify(output)).not.toContain("not-the-token-123456");
    await expect(pollMailEvents(hostConfig("not-the-token-123456"), undefined)).rejects.toMatchObject({
      code: "upstream_auth",
    });
  });
});
