/*
 * Quiet hours in a user's time zone (docs/delivery-rules.md): whether an instant lies inside one of the user's
 * windows, and when the quiet period around it ends. Local times are turned into instants with the IANA zone
 * database that Node ships (Intl), never with offsets written here. Pure: no I/O, no clock.
 */

import { instantOfWall, wallAsUtc } from '../time-zones';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * One window: from `start` on each of `days` (the local day the window starts on) to `end`, the same day when
 * `end` is later than `start`, else the next day (22:00–07:00 ends the morning after).
 */
export interface QuietWindow {
  readonly days: readonly Weekday[];
  readonly start: string;
  readonly end: string;
}

export interface QuietHours {
  readonly windows: readonly QuietWindow[];
}

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

const minutesOf = (time: string): number => {
  const [hours = 0, minutes = 0] = time.split(':').map(Number);
  return hours * 60 + minutes;
};

/** The windows' spans (epoch ms, end exclusive) that start on the local day `dayWall` (midnight, as UTC) . */
const spansStarting = (windows: readonly QuietWindow[], zone: string, dayWall: number) => {
  const weekday = WEEKDAYS[new Date(dayWall).getUTCDay()] as Weekday;
  return windows
    .filter((window) => window.days.includes(weekday))
    .map((window) => {
      const start = minutesOf(window.start);
      let end = minutesOf(window.end);
      if (end <= start) end += 24 * 60;
      return {
        start: instantOfWall(dayWall + start * MINUTE_MS, zone),
        end: instantOfWall(dayWall + end * MINUTE_MS, zone),
      };
    });
};

/** The end of the window span that holds `instant`, if one does (the latest end of those that do). */
const spanEndAt = (quiet: QuietHours, zone: string, instant: number): number | undefined => {
  const wall = wallAsUtc(instant, zone);
  const today = wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
  let end: number | undefined;
  // A window that holds the instant started today or yesterday (none lasts a day or longer).
  for (const day of [today - DAY_MS, today]) {
    for (const span of spansStarting(quiet.windows, zone, day)) {
      if (span.start <= instant && instant < span.end && (end === undefined || span.end > end))
        end = span.end;
    }
  }
  return end;
};

/** Windows that follow each other without a gap are one quiet period; a week of them is as far as it is followed. */
const MAX_JOINED_SPANS = 7 * 4;

/**
 * When the quiet period holding `instant` ends (epoch ms), or undefined when `instant` is not in quiet hours.
 * Windows that meet or overlap (Mon 22:00–07:00 and Tue 07:00–09:00) are one period: it ends at the last one's end.
 */
export const quietUntil = (
  quiet: QuietHours | null | undefined,
  zone: string,
  instant: number,
): number | undefined => {
  if (!quiet || quiet.windows.length === 0) return undefined;
  let end = spanEndAt(quiet, zone, instant);
  if (end === undefined) return undefined;
  for (let joined = 0; joined < MAX_JOINED_SPANS; joined += 1) {
    const next = spanEndAt(quiet, zone, end);
    if (next === undefined) break;
    end = next;
  }
  return end;
};

/** Whether `instant` lies inside the user's quiet hours. */
export const inQuietHours = (quiet: QuietHours | null | undefined, zone: string, instant: number): boolean =>
  quietUntil(quiet, zone, instant) !== undefined;
