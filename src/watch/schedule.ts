/**
 * A digest's schedule (`digest: { at: "08:00", every: "day" | "week", on: "monday", timezone: "Europe/Paris" }`):
 * the moments, as ms since the epoch, at which the wall clock of the time zone shows `at` on the days asked. Local
 * time is read with Intl.DateTimeFormat (the runtime's time zone data), so daylight saving changes are followed with
 * no dependency. A leaf: it imports nothing of the project.
 */

export const WEEKDAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Schedule {
  /** "HH:MM", 24-hour. */
  at: string;
  every: "day" | "week";
  /** every week: the day; default monday. */
  on?: Weekday | undefined;
  /** An IANA time zone; default UTC. */
  timezone?: string | undefined;
}

const DAY_MS = 86_400_000;

/** One formatter per zone: building one is the costly part. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** Whether the runtime knows this time zone (an IANA name such as Europe/Paris, or UTC). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** What the zone's wall clock shows at `time` (whole seconds), as the UTC fields of a Date. */
export function wallClock(time: number, timeZone: string): Date {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(time))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  const { year, month, day, hour, minute, second } = parts as Record<string, number>;
  return new Date(Date.UTC(year!, month! - 1, day!, hour!, minute!, second!));
}

/** The zone's offset from UTC at `time`, in ms (positive east of Greenwich). */
function offsetAt(time: number, timeZone: string): number {
  const whole = Math.floor(time / 1000) * 1000;
  return wallClock(whole, timeZone).getTime() - whole;
}

/**
 * The moment the zone's wall clock shows `wall` (a time given by its UTC fields). Shown twice (the hour clocks are
 * put back): the first. Never shown (the hour skipped when clocks go forward): as far past it as the jump, the way
 * clocks read then (02:30 on the night Paris skips 02:00–03:00 is 03:30).
 */
export function instantOf(wall: number, timeZone: string): number {
  // A zone changes its offset at most once in two days: the offsets a day either side are the ones in play.
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  const shown = [wall - before, wall - after].filter((t) => wallClock(t, timeZone).getTime() === wall);
  return shown.length ? Math.min(...shown) : wall - before;
}

/** The first moment of the schedule strictly after `after` (ms since the epoch). */
export function nextSlot(schedule: Schedule, after: number): number {
  const timeZone = schedule.timezone ?? "UTC";
  const [hours, minutes] = schedule.at.split(":").map(Number) as [number, number];
  const weekday = schedule.every === "week" ? WEEKDAYS.indexOf(schedule.on ?? "monday") : undefined;
  const today = wallClock(after, timeZone);
  // The day `after` falls on in the zone, then the days after it: a week's slot is at most 7 days on.
  for (let days = 0; days <= 8; days++) {
    const date = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + days));
    if (weekday !== undefined && date.getUTCDay() !== weekday) continue;
    const slot = instantOf(date.getTime() + hours * 3_600_000 + minutes * 60_000, timeZone);
    if (slot > after) return slot;
  }
  throw new Error(`no slot of ${JSON.stringify(schedule)} within 8 days`);
}
