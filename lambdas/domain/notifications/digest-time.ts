// Time-of-day logic of digests, on the IANA zone database Node ships (Intl): no offset is written by hand.

/** `HH:MM`, 24-hour: the time of day a digest closes at. */
export const TIME_OF_DAY = /^([01]\d|2[0-3]):[0-5]\d$/;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone (building one costs more than formatting with it). */
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
};

/** Whether Intl knows the zone (an IANA name such as `Europe/Berlin`, or `UTC`). */
export const isTimeZone = (timeZone: string): boolean => {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
};

/** The wall-clock time of `instant` in the zone, as if it were UTC (minute precision), in ms. */
const wallClock = (instant: number, timeZone: string): number => {
  const parts = Object.fromEntries(
    formatterFor(timeZone)
      .formatToParts(new Date(instant))
      .map((part) => [part.type, Number(part.value)]),
  );
  return Date.UTC(parts.year ?? 0, (parts.month ?? 1) - 1, parts.day, parts.hour, parts.minute);
};

/**
 * The instant a wall-clock time (as if UTC, ms) happens in the zone. A time that happens twice (the hour
 * repeated when clocks go back) is its first occurrence; a time that does not happen (the hour skipped when
 * clocks go forward) is moved forward by the gap (02:30 on a spring-forward night is 03:30).
 */
export const instantOf = (wall: number, timeZone: string): number => {
  // A zone changes its offset at most once within a day: the offsets 12 h on either side cover both.
  const offsetAt = (instant: number) => wallClock(instant, timeZone) - Math.floor(instant / 60_000) * 60_000;
  const before = offsetAt(wall - DAY_MS / 2);
  const after = offsetAt(wall + DAY_MS / 2);
  const candidates = [wall - before, wall - after].filter((instant) => wallClock(instant, timeZone) === wall);
  if (candidates.length === 0) return wall - before; // skipped: the offset before the change lands after the gap
  return Math.min(...candidates);
};

/**
 * The first instant after `afterMs` at which the zone's clocks show `time` (`HH:MM`): today's, or else the
 * next day's. "Daily at 09:00" in the recipient's zone.
 */
export const nextTimeOfDay = (afterMs: number, time: string, timeZone: string): number => {
  const [hours, minutes] = time.split(':').map(Number);
  const today = new Date(wallClock(afterMs, timeZone));
  for (let day = 0; day <= 2; day += 1) {
    const wall = Date.UTC(
      today.getUTCFullYear(),
      today.getUTCMonth(),
      today.getUTCDate() + day,
      hours,
      minutes,
    );
    const instant = instantOf(wall, timeZone);
    if (instant > afterMs) return instant;
  }
  throw new Error(`no ${time} in ${timeZone} after ${new Date(afterMs).toISOString()}`);
};
