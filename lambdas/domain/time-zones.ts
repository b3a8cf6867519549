// Local times in IANA zones, on the zone database Node ships (Intl): no offset is ever written by hand. Shared by
// quiet hours and digests. Pure: no I/O, no clock.

/** A local time of day, `HH:MM` on a 24-hour clock. */
export const TIME_OF_DAY = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;

const DAY_MS = 24 * 3_600_000;

/** Formatters are costly to build: one per zone per container. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const formatterOf = (zone: string): Intl.DateTimeFormat => {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
};

/** Whether `zone` is an IANA time zone name Node knows (`Europe/Berlin`, `UTC`); offsets such as `+01:00` are not. */
export const isTimeZone = (zone: string): boolean => {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone) || zone.length > 64) return false;
  try {
    formatterOf(zone);
    return true;
  } catch {
    return false;
  }
};

/** The wall-clock reading of `instant` in `zone`, as if that reading were UTC (epoch ms). */
export const wallAsUtc = (instant: number, zone: string): number => {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(zone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const { year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return Date.UTC(year, month - 1, day, hour, minute, second);
};

/** The zone's offset from UTC at `instant`, in ms (whole seconds: the formatter shows no fraction). */
const offsetAt = (instant: number, zone: string): number =>
  wallAsUtc(instant, zone) - Math.floor(instant / 1000) * 1000;

/**
 * The instant of a wall-clock time (given as if it were UTC) in `zone`. A time that occurs twice (clocks go back)
 * is the earlier; a time that does not occur (clocks go forward) is read with the offset before the change, so
 * 02:30 on a night that jumps from 02:00 to 03:00 is 03:30 (RFC 5545, and Temporal's `compatible`).
 */
export const instantOfWall = (wall: number, zone: string): number => {
  // Zones change their offset at most once within a day on either side of any date they are used for.
  const before = offsetAt(wall - DAY_MS, zone);
  const after = offsetAt(wall + DAY_MS, zone);
  const candidates = [wall - before, wall - after].filter((instant) => wallAsUtc(instant, zone) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  return wall - before;
};
