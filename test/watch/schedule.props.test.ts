/**
 * Digest schedules (`digest: { at, every, on, timezone }`): the file's validation names each bad field, and the next
 * slot is in the future, at the local wall time asked, on the day asked, across daylight saving changes (Europe/Paris,
 * America/New_York), computed with Intl alone.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ChainmailError } from "../../src/core/errors.js";
import { parseWatchConfig } from "../../src/watch/config.js";
import { scheduledIdOf } from "../../src/watch/run.js";
import { nextSlot, type Schedule, WEEKDAYS, wallClock } from "../../src/watch/schedule.js";

const mail = { to: [{ Email: "desk@example.com" }] };
const file = (digest: unknown) => ({
  source: "index",
  from: { Email: "w@example.com" },
  rules: [{ id: "d", contract_address: `0x${"1".repeat(40)}`, mode: "digest", digest, mail }],
});

function fieldsOf(value: unknown): string[] {
  try {
    parseWatchConfig(value);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ChainmailError);
    return ((err as ChainmailError).toPayload().details.violations as { field: string }[]).map((v) => v.field);
  }
}

const ZONES = ["Europe/Paris", "America/New_York", "UTC", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"];
const TIME = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const hhmm = (h: number, m: number) => `${String(h).padStart(2, "0")}:${String(m).padStart(2, "0")}`;
const wallOf = (time: number, zone: string) => {
  const wall = wallClock(time, zone);
  return { time: hhmm(wall.getUTCHours(), wall.getUTCMinutes()), weekday: WEEKDAYS[wall.getUTCDay()]! };
};
const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3));

/** A moment in 2020–2035, often within two days of a daylight saving change in Paris or New York. */
const moment = fc.oneof(
  fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 11, 31) }),
  fc
    .record({
      year: fc.integer({ min: 2020, max: 2035 }),
      change: fc.constantFrom<[number, number, number]>(
        [2, 31, 1], // Paris: the last Sunday of March, 01:00 UTC
        [9, 31, 1], // Paris: the last Sunday of October
        [2, 14, 7], // New York: the second Sunday of March, 07:00 UTC
        [10, 7, 6], // New York: the first Sunday of November, 06:00 UTC
      ),
      skew: fc.integer({ min: -2 * DAY, max: 2 * DAY }),
    })
    .map(({ year, change: [month, lastDay, hour], skew }) => {
      // The Sunday on or before `lastDay` of the month (March's and October's last, the second, the first).
      const end = new Date(Date.UTC(year, month, lastDay, hour));
      return end.getTime() - end.getUTCDay() * DAY + skew;
    }),
);

const schedule: fc.Arbitrary<Schedule> = fc
  .record({
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    every: fc.constantFrom("day" as const, "week" as const),
    on: fc.option(fc.constantFrom(...WEEKDAYS), { nil: undefined }),
    timezone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
  })
  .map(({ hour, minute, every, on, timezone }) => ({
    at: hhmm(hour, minute),
    every,
    ...(every === "week" && on ? { on } : {}),
    ...(timezone ? { timezone } : {}),
  }));

describe("digest schedules", () => {
  it("validation names each bad field, every problem at once", () => {
    expect(fieldsOf(file({ at: "08:00", timezone: "Europe/Paris" }))).toEqual([]);
    expect(fieldsOf(file({ at: "08:00", every: "week", on: "friday", timezone: "America/New_York" }))).toEqual([]);
    expect(fieldsOf(file({ at: "23:59", records: 50, minutes: 60 }))).toEqual([]);
    expect(fieldsOf(file({ at: "25:00" }))).toEqual(["rules[0].digest.at"]);
    expect(fieldsOf(file({ at: "8:00" }))).toEqual(["rules[0].digest.at"]);
    expect(fieldsOf(file({ at: "08:00", timezone: "Mars/Olympus_Mons" }))).toEqual(["rules[0].digest.timezone"]);
    expect(fieldsOf(file({ at: "08:00", on: "monday" }))).toEqual(["rules[0].digest.on"]);
    expect(fieldsOf(file({ at: "08:00", every: "day", on: "monday" }))).toEqual(["rules[0].digest.on"]);
    expect(fieldsOf(file({ at: "08:00", every: "month" }))).toEqual(["rules[0].digest.every"]);
    expect(fieldsOf(file({ at: "08:00", every: "week", on: "mon" }))).toEqual(["rules[0].digest.on"]);
    expect(fieldsOf(file({ records: 5, every: "week", timezone: "UTC" }))).toEqual([
      "rules[0].digest.every",
      "rules[0].digest.timezone",
    ]);
    expect(fieldsOf(file({}))).toEqual(["rules[0].digest"]);
    expect(fieldsOf(file({ at: "08:00", on: "monday", timezone: "Nowhere/Town" }))).toEqual([
      "rules[0].digest.on",
      "rules[0].digest.timezone",
    ]);
    // Today's forms stay valid.
    expect(fieldsOf(file({ minutes: 1440, records: 20 }))).toEqual([]);
  });

  it("any at, every, on and timezone: accepted exactly when valid", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          schedule.map((s) => s.at),
          fc.string({ maxLength: 8 }),
        ),
        fc.option(fc.oneof(fc.constantFrom("day", "week"), fc.string({ maxLength: 6 })), { nil: undefined }),
        fc.option(fc.oneof(fc.constantFrom(...WEEKDAYS), fc.string({ maxLength: 9 })), { nil: undefined }),
        fc.option(fc.oneof(fc.constantFrom(...ZONES), fc.string({ minLength: 1, maxLength: 20 })), { nil: undefined }),
        (at, every, on, timezone) => {
          const digest = {
            at,
            ...(every !== undefined ? { every } : {}),
            ...(on !== undefined ? { on } : {}),
            ...(timezone !== undefined ? { timezone } : {}),
          };
          const expected = [
            ...(TIME.test(at) ? [] : ["rules[0].digest.at"]),
            ...(every === undefined || every === "day" || every === "week" ? [] : ["rules[0].digest.every"]),
            ...(on === undefined || (WEEKDAYS as readonly string[]).includes(on) ? [] : ["rules[0].digest.on"]),
          ];
          const found = fieldsOf(file(digest));
          if (expected.length) {
            // The schema's refusals come first; the cross-field checks run on a file the schema accepts.
            expect(found).toEqual(expected);
            return;
          }
          const knownZone = timezone === undefined || ZONES.includes(timezone) || isZone(timezone);
          expect(found).toEqual([
            ...(on !== undefined && every !== "week" ? ["rules[0].digest.on"] : []),
            ...(knownZone ? [] : ["rules[0].digest.timezone"]),
          ]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("the next slot is in the future, at the wall time and on the day asked, and the first such", () => {
    fc.assert(
      fc.property(schedule, moment, (s, after) => {
        const zone = s.timezone ?? "UTC";
        const slot = nextSlot(s, after);
        expect(slot).toBeGreaterThan(after);
        expect(slot - after).toBeLessThanOrEqual((s.every === "week" ? 7 : 1) * DAY + HOUR);
        const wall = wallOf(slot, zone);
        if (wall.time !== s.at) {
          // Only where the wall clock skips that time (clocks go forward): then as far past it as the jump.
          const jump = wallClock(slot + 3 * HOUR, zone).getTime() - (slot + 3 * HOUR);
          const before = wallClock(slot - 3 * HOUR, zone).getTime() - (slot - 3 * HOUR);
          expect(jump).toBeGreaterThan(before);
          expect(minutesOf(wall.time) - minutesOf(s.at)).toBe((jump - before) / 60_000);
        }
        if (s.every === "week") expect(wall.weekday).toBe(s.on ?? "monday");
        // The first: asked from just before it, the same slot; the one after is most of a day (a week) on.
        expect(nextSlot(s, slot - 1)).toBe(slot);
        expect(nextSlot(s, slot) - slot).toBeGreaterThanOrEqual((s.every === "week" ? 7 * DAY : DAY) - 2 * HOUR);
        // Each slot has its own email id.
        expect(scheduledIdOf("d", slot)).not.toBe(scheduledIdOf("d", nextSlot(s, slot)));
      }),
      { numRuns: 2000 },
    );
  });

  it("follows daylight saving: 08:00 in Paris and New York, and a time New York shows twice or skips", () => {
    const daily = (at: string, timezone: string): Schedule => ({ at, every: "day", timezone });
    const paris = daily("08:00", "Europe/Paris");
    expect(new Date(nextSlot(paris, Date.UTC(2026, 2, 28, 12))).toISOString()).toBe("2026-03-29T06:00:00.000Z");
    expect(new Date(nextSlot(paris, Date.UTC(2026, 2, 27, 12))).toISOString()).toBe("2026-03-28T07:00:00.000Z");
    expect(new Date(nextSlot(paris, Date.UTC(2026, 9, 24, 12))).toISOString()).toBe("2026-10-25T07:00:00.000Z");
    const ny = daily("08:00", "America/New_York");
    expect(new Date(nextSlot(ny, Date.UTC(2026, 2, 7, 18))).toISOString()).toBe("2026-03-08T12:00:00.000Z");
    expect(new Date(nextSlot(ny, Date.UTC(2026, 10, 1, 0))).toISOString()).toBe("2026-11-01T13:00:00.000Z");
    // 01:30 happens twice on 1 November: the first only, so never two digests that night.
    const twice = daily("01:30", "America/New_York");
    expect(new Date(nextSlot(twice, Date.UTC(2026, 10, 1, 0))).toISOString()).toBe("2026-11-01T05:30:00.000Z");
    expect(new Date(nextSlot(twice, Date.UTC(2026, 10, 1, 5, 31))).toISOString()).toBe("2026-11-02T06:30:00.000Z");
    // 02:30 never happens on 8 March: at 03:30, as the clocks read then.
    const skipped = daily("02:30", "America/New_York");
    expect(new Date(nextSlot(skipped, Date.UTC(2026, 2, 8, 0))).toISOString()).toBe("2026-03-08T07:30:00.000Z");
    // Weekly, Monday by default, in the zone's week.
    const weekly: Schedule = { at: "08:00", every: "week", timezone: "Europe/Paris" };
    expect(new Date(nextSlot(weekly, Date.UTC(2026, 10, 28, 12))).toISOString()).toBe("2026-11-30T07:00:00.000Z");
    expect(scheduledIdOf("daily", Date.UTC(2026, 10, 30, 7))).toBe("cw.daily.s20261130T0700Z");
  });
});

function isZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
