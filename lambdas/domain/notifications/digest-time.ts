// When a digest closes at a time of day in the recipient's zone (time-zones.ts does the zone arithmetic).
import { instantOfWall, wallAsUtc } from '../time-zones';

/**
 * The first instant after `afterMs` at which the zone's clocks show `time` (`HH:MM`): today's, or else the
 * next day's. "Daily at 09:00" in the recipient's zone.
 */
export const nextTimeOfDay = (afterMs: number, time: string, timeZone: string): number => {
  const [hours, minutes] = time.split(':').map(Number);
  const today = new Date(wallAsUtc(afterMs, timeZone));
  for (let day = 0; day <= 2; day += 1) {
    const wall = Date.UTC(
      today.getUTCFullYear(),
      today.getUTCMonth(),
      today.getUTCDate() + day,
      hours,
      minutes,
    );
    const instant = instantOfWall(wall, timeZone);
    if (instant > afterMs) return instant;
  }
  throw new Error(`no ${time} in ${timeZone} after ${new Date(afterMs).toISOString()}`);
};
