import { describe, expect, it } from 'vitest';
import {
  inQuietHours,
  type QuietHours,
  quietUntil,
  type Weekday,
} from '../../../lambdas/domain/preferences/quiet-hours';
import { instantOfWall, isTimeZone } from '../../../lambdas/domain/time-zones';

const at = (iso: string) => Date.parse(iso);
const iso = (instant: number | undefined) =>
  instant === undefined ? undefined : new Date(instant).toISOString();
const EVERY_DAY: Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const WEEKDAYS: Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri'];
const nightly: QuietHours = { windows: [{ days: EVERY_DAY, start: '22:00', end: '07:00' }] };
const until = (quiet: QuietHours, zone: string, instant: string) => iso(quietUntil(quiet, zone, at(instant)));

describe('quiet hours: local times to instants (the zone database Node ships)', () => {
  it('a time that does not occur (clocks go forward) reads with the offset before the change', () => {
    // Europe/Berlin 2026-03-29: 02:00 CET becomes 03:00 CEST, so 02:30 is 03:30 CEST.
    expect(iso(instantOfWall(at('2026-03-29T02:30:00Z'), 'Europe/Berlin'))).toBe('2026-03-29T01:30:00.000Z');
    // Australia/Lord_Howe 2026-10-04: 02:00 (+10:30) becomes 02:30 (+11), a shift of half an hour.
    expect(iso(instantOfWall(at('2026-10-04T02:10:00Z'), 'Australia/Lord_Howe'))).toBe(
      '2026-10-03T15:40:00.000Z',
    );
  });

  it('a time that occurs twice (clocks go back) is the earlier', () => {
    // Europe/Berlin 2026-10-25: 02:30 CEST (00:30Z) and 02:30 CET (01:30Z).
    expect(iso(instantOfWall(at('2026-10-25T02:30:00Z'), 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    // Australia/Lord_Howe 2026-04-05: 01:45 at +11 and again at +10:30.
    expect(iso(instantOfWall(at('2026-04-05T01:45:00Z'), 'Australia/Lord_Howe'))).toBe(
      '2026-04-04T14:45:00.000Z',
    );
  });

  it('an ordinary time is read with its offset', () => {
    expect(iso(instantOfWall(at('2026-07-01T12:00:00Z'), 'America/New_York'))).toBe(
      '2026-07-01T16:00:00.000Z',
    );
    expect(iso(instantOfWall(at('2026-01-15T12:00:00Z'), 'America/New_York'))).toBe(
      '2026-01-15T17:00:00.000Z',
    );
  });
});

describe('quiet hours: is an instant inside, and when does the window end', () => {
  it('a window across midnight ends the next morning; outside it nothing is quiet', () => {
    // Berlin in summer: 22:00 CEST = 20:00Z; 07:00 CEST = 05:00Z.
    expect(until(nightly, 'Europe/Berlin', '2026-07-01T19:59:59Z')).toBeUndefined();
    expect(until(nightly, 'Europe/Berlin', '2026-07-01T20:00:00Z')).toBe('2026-07-02T05:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-07-01T23:30:00Z')).toBe('2026-07-02T05:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-07-02T04:59:59Z')).toBe('2026-07-02T05:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-07-02T05:00:00Z')).toBeUndefined();
    expect(inQuietHours(nightly, 'Europe/Berlin', at('2026-07-02T12:00:00Z'))).toBe(false);
  });

  it('Europe/Berlin, the night the clocks go forward: the window is an hour shorter', () => {
    // Sat 28 March 22:00 CET (21:00Z) to Sun 29 March 07:00 CEST (05:00Z).
    expect(until(nightly, 'Europe/Berlin', '2026-03-28T20:59:00Z')).toBeUndefined();
    expect(until(nightly, 'Europe/Berlin', '2026-03-28T21:00:00Z')).toBe('2026-03-29T05:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-03-29T01:30:00Z')).toBe('2026-03-29T05:00:00.000Z');
  });

  it('Europe/Berlin, the night the clocks go back: the window is an hour longer', () => {
    // Sat 24 October 22:00 CEST (20:00Z) to Sun 25 October 07:00 CET (06:00Z).
    expect(until(nightly, 'Europe/Berlin', '2026-10-24T20:00:00Z')).toBe('2026-10-25T06:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-10-25T05:30:00Z')).toBe('2026-10-25T06:00:00.000Z');
    expect(until(nightly, 'Europe/Berlin', '2026-10-25T06:00:00Z')).toBeUndefined();
  });

  it('a window that starts in the skipped hour starts when the clock reaches that reading after the jump', () => {
    const early: QuietHours = { windows: [{ days: ['sun'], start: '02:30', end: '05:00' }] };
    // 02:30 does not occur on 2026-03-29 in Berlin: the window runs 03:30–05:00 CEST (01:30Z–03:00Z).
    expect(until(early, 'Europe/Berlin', '2026-03-29T01:15:00Z')).toBeUndefined();
    expect(until(early, 'Europe/Berlin', '2026-03-29T01:30:00Z')).toBe('2026-03-29T03:00:00.000Z');
    // A window wholly inside the skipped hour is empty that night.
    const skipped: QuietHours = { windows: [{ days: ['sun'], start: '02:00', end: '03:00' }] };
    expect(until(skipped, 'Europe/Berlin', '2026-03-29T01:00:00Z')).toBeUndefined();
    expect(until(skipped, 'Europe/Berlin', '2026-03-29T00:59:00Z')).toBeUndefined();
  });

  it('a window that starts in the repeated hour starts at its first occurrence', () => {
    const early: QuietHours = { windows: [{ days: ['sun'], start: '02:30', end: '04:00' }] };
    expect(until(early, 'Europe/Berlin', '2026-10-25T00:29:00Z')).toBeUndefined();
    expect(until(early, 'Europe/Berlin', '2026-10-25T00:30:00Z')).toBe('2026-10-25T03:00:00.000Z');
  });

  it('America/New_York weekdays 22:00–07:00 around its change of clocks: a weekend night is not quiet', () => {
    const weeknights: QuietHours = { windows: [{ days: WEEKDAYS, start: '22:00', end: '07:00' }] };
    // Fri 6 March 22:00 EST (7 March 03:00Z) to Sat 7 March 07:00 EST (12:00Z).
    expect(until(weeknights, 'America/New_York', '2026-03-07T03:00:00Z')).toBe('2026-03-07T12:00:00.000Z');
    // Sat 7 March 23:00 EST and Sun 8 March 23:00 EDT: no window starts on a weekend day.
    expect(until(weeknights, 'America/New_York', '2026-03-08T04:00:00Z')).toBeUndefined();
    expect(until(weeknights, 'America/New_York', '2026-03-09T03:00:00Z')).toBeUndefined();
    // Mon 9 March 22:00 EDT (10 March 02:00Z) to Tue 07:00 EDT (11:00Z): the offset changed on Sunday.
    expect(until(weeknights, 'America/New_York', '2026-03-10T02:00:00Z')).toBe('2026-03-10T11:00:00.000Z');
    // Fri 30 October 22:00 EDT to Sat 07:00 EDT; the clocks go back on Sun 1 November.
    expect(until(weeknights, 'America/New_York', '2026-10-31T02:00:00Z')).toBe('2026-10-31T11:00:00.000Z');
    // Mon 2 November 22:00 EST (3 November 03:00Z) to Tue 07:00 EST (12:00Z).
    expect(until(weeknights, 'America/New_York', '2026-11-03T03:00:00Z')).toBe('2026-11-03T12:00:00.000Z');
  });

  it("Australia/Lord_Howe's half-hour change: the window's end moves by 30 minutes", () => {
    // Sat 4 April 22:00 at +11 (11:00Z) to Sun 5 April 07:00 at +10:30 (4 April 20:30Z).
    expect(until(nightly, 'Australia/Lord_Howe', '2026-04-04T11:00:00Z')).toBe('2026-04-04T20:30:00.000Z');
    expect(until(nightly, 'Australia/Lord_Howe', '2026-04-04T10:59:00Z')).toBeUndefined();
    // Sat 3 October 22:00 at +10:30 (11:30Z) to Sun 4 October 07:00 at +11 (20:00Z).
    expect(until(nightly, 'Australia/Lord_Howe', '2026-10-03T11:30:00Z')).toBe('2026-10-03T20:00:00.000Z');
  });

  it('windows that meet are one quiet period; the end is the last one’s', () => {
    const joined: QuietHours = {
      windows: [
        { days: ['mon'], start: '22:00', end: '07:00' },
        { days: ['tue'], start: '07:00', end: '09:00' },
        { days: ['tue'], start: '08:30', end: '10:00' },
      ],
    };
    // UTC: Mon 2026-07-06.
    expect(until(joined, 'UTC', '2026-07-06T23:00:00Z')).toBe('2026-07-07T10:00:00.000Z');
    expect(until(joined, 'UTC', '2026-07-07T07:00:00Z')).toBe('2026-07-07T10:00:00.000Z');
    expect(until(joined, 'UTC', '2026-07-07T10:00:00Z')).toBeUndefined();
  });

  it('a window ending at 00:00 ends at midnight; a window on one day only holds that night', () => {
    const evening: QuietHours = { windows: [{ days: ['fri'], start: '20:00', end: '00:00' }] };
    expect(until(evening, 'UTC', '2026-07-03T23:59:00Z')).toBe('2026-07-04T00:00:00.000Z');
    expect(until(evening, 'UTC', '2026-07-04T20:30:00Z')).toBeUndefined();
  });

  it('every minute of a week is quiet: the period is followed a week ahead, not for ever', () => {
    const always: QuietHours = { windows: [{ days: EVERY_DAY, start: '00:00', end: '00:00' }] };
    const end = quietUntil(always, 'UTC', at('2026-07-01T12:00:00Z'));
    expect(end).toBeDefined();
    expect(end as number).toBeGreaterThan(at('2026-07-07T00:00:00Z'));
    expect(end as number).toBeLessThan(at('2026-08-01T00:00:00Z'));
  });

  it('no quiet hours: never quiet', () => {
    expect(quietUntil(null, 'UTC', Date.now())).toBeUndefined();
    expect(quietUntil({ windows: [] }, 'UTC', Date.now())).toBeUndefined();
  });
});

describe('time zone names', () => {
  it('takes IANA names Node knows and refuses offsets and unknown names', () => {
    for (const zone of ['Europe/Berlin', 'UTC', 'America/Argentina/Buenos_Aires', 'Australia/Lord_Howe']) {
      expect(isTimeZone(zone)).toBe(true);
    }
    for (const zone of ['Mars/Olympus', '+01:00', 'GMT+1:00', '', 'Europe/', '../etc']) {
      expect(isTimeZone(zone), zone).toBe(false);
    }
  });
});
