import { describe, expect, it } from 'vitest';
import { closesAt, timeZoneOf } from '../../../lambdas/domain/notifications/digest-join';
import { digestFor } from '../../../lambdas/domain/notifications/digest-rules';
import { nextTimeOfDay } from '../../../lambdas/domain/notifications/digest-time';
import type { NotificationRecord } from '../../../lambdas/domain/notifications/model';
import { resolveDefaults } from '../../../lambdas/domain/preferences/rules';
import { instantOfWall as instantOf, isTimeZone } from '../../../lambdas/domain/time-zones';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('nextTimeOfDay', () => {
  it('is today when the time is still ahead, else tomorrow, in the zone', () => {
    expect(iso(nextTimeOfDay(at('2026-03-02T07:00:00Z'), '09:00', 'Europe/Berlin'))).toBe(
      '2026-03-02T08:00:00.000Z',
    );
    expect(iso(nextTimeOfDay(at('2026-03-02T08:00:00Z'), '09:00', 'Europe/Berlin'))).toBe(
      '2026-03-03T08:00:00.000Z',
    );
    expect(iso(nextTimeOfDay(at('2026-03-02T08:00:00Z'), '09:00', 'UTC'))).toBe('2026-03-02T09:00:00.000Z');
  });

  it('uses the local date, not the UTC date (Tokyo is already on the next day)', () => {
    // 2026-03-02 20:00 UTC is 2026-03-03 05:00 in Tokyo: 09:00 there is four hours later.
    expect(iso(nextTimeOfDay(at('2026-03-02T20:00:00Z'), '09:00', 'Asia/Tokyo'))).toBe(
      '2026-03-03T00:00:00.000Z',
    );
    // 2026-03-03 02:00 UTC is 2026-03-02 18:00 in Los Angeles: 09:00 there is the next local morning.
    expect(iso(nextTimeOfDay(at('2026-03-03T02:00:00Z'), '09:00', 'America/Los_Angeles'))).toBe(
      '2026-03-03T17:00:00.000Z',
    );
  });

  it('follows daylight saving: 09:00 New York is 14:00 UTC before and 13:00 UTC after the spring change', () => {
    // Clocks went forward on Sunday 2026-03-08 at 02:00 local.
    expect(iso(nextTimeOfDay(at('2026-03-07T15:00:00Z'), '09:00', 'America/New_York'))).toBe(
      '2026-03-08T13:00:00.000Z',
    );
    expect(iso(nextTimeOfDay(at('2026-03-06T15:00:00Z'), '09:00', 'America/New_York'))).toBe(
      '2026-03-07T14:00:00.000Z',
    );
    // Back on Sunday 2026-10-25 in Berlin: 09:00 is 07:00 UTC on Saturday, 08:00 UTC on Sunday.
    expect(iso(nextTimeOfDay(at('2026-10-24T06:00:00Z'), '09:00', 'Europe/Berlin'))).toBe(
      '2026-10-24T07:00:00.000Z',
    );
    expect(iso(nextTimeOfDay(at('2026-10-24T07:00:00Z'), '09:00', 'Europe/Berlin'))).toBe(
      '2026-10-25T08:00:00.000Z',
    );
  });

  it('moves a time the clocks skip forward by the gap, and takes the first of a time they repeat', () => {
    // 02:30 does not happen in New York on 2026-03-08: 03:30 EDT (07:30 UTC).
    expect(iso(instantOf(Date.UTC(2026, 2, 8, 2, 30), 'America/New_York'))).toBe('2026-03-08T07:30:00.000Z');
    expect(iso(nextTimeOfDay(at('2026-03-08T05:00:00Z'), '02:30', 'America/New_York'))).toBe(
      '2026-03-08T07:30:00.000Z',
    );
    // 01:30 happens twice on 2026-11-01 (EDT, then EST): the first, 05:30 UTC.
    expect(iso(instantOf(Date.UTC(2026, 10, 1, 1, 30), 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
    // Berlin skips 02:00-03:00 on 2026-03-29.
    expect(iso(instantOf(Date.UTC(2026, 2, 29, 2, 30), 'Europe/Berlin'))).toBe('2026-03-29T01:30:00.000Z');
  });

  it('handles zones with offsets in minutes and days that cross midnight', () => {
    expect(iso(nextTimeOfDay(at('2026-06-01T00:00:00Z'), '00:00', 'Asia/Kolkata'))).toBe(
      '2026-06-01T18:30:00.000Z',
    );
    expect(iso(nextTimeOfDay(at('2026-12-31T23:59:30Z'), '23:59', 'UTC'))).toBe('2027-01-01T23:59:00.000Z');
  });
});

describe('closesAt and the time zone accessor', () => {
  it('closes a window after its seconds, and an `at` digest at the next time of day in the zone', () => {
    const opened = at('2026-03-02T07:00:00Z');
    expect(closesAt({ key: 'k', window_secs: 600, max_items: 10 }, opened, 'UTC')).toBe(opened + 600_000);
    expect(iso(closesAt({ key: 'k', at: '09:00', max_items: 10 }, opened, 'Europe/Berlin'))).toBe(
      '2026-03-02T08:00:00.000Z',
    );
  });

  it('reads time_zone from the preferences, UTC when absent or not a zone', () => {
    expect(timeZoneOf({ rules: [], time_zone: 'Europe/Berlin' })).toBe('Europe/Berlin');
    expect(timeZoneOf({ rules: [] })).toBe('UTC');
    expect(timeZoneOf(undefined)).toBe('UTC');
    expect(timeZoneOf({ time_zone: 'Mars/Olympus' })).toBe('UTC');
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});

describe('digestFor', () => {
  const notification = (fields: Partial<NotificationRecord>) =>
    ({ id: 'n1', event_type: 'marketing.sale', ...fields }) as NotificationRecord;

  it("prefers the notification's own digest, else the first matching choice of the user", () => {
    const own = { key: 'post-42', window_secs: 60, max_items: 5 };
    expect(digestFor(notification({ digest: own }), [{ event_type: '*', at: '09:00' }])).toEqual({
      scope: 'key:post-42',
      spec: own,
    });
    expect(
      digestFor(notification({}), [
        { event_type: 'billing.*', at: '08:00' },
        { event_type: 'marketing.*', at: '09:00' },
      ]),
    ).toEqual({ scope: 'preference:marketing.*', spec: { key: 'marketing.*', at: '09:00', max_items: 10 } });
    expect(digestFor(notification({}), [{ event_type: 'billing.*', at: '08:00' }])).toBeUndefined();
  });

  it('matches a category choice on the category, and never batches a digest or a required type', () => {
    const withCategory = { ...notification({}), category: 'promotions' } as NotificationRecord;
    expect(digestFor(withCategory, [{ category: 'promotions', window_secs: 5 }])?.scope).toBe(
      'preference:category:promotions',
    );
    expect(digestFor(notification({}), [{ category: 'promotions', window_secs: 5 }])).toBeUndefined();
    const choices = [{ event_type: '*', window_secs: 5 }];
    expect(
      digestFor(notification({ digest_of: { key: 'k', batch_id: 'b', count: 2 } }), choices),
    ).toBeUndefined();
    expect(
      digestFor(notification({ preference_defaults: { channels: {}, required: true } }), choices),
    ).toBeUndefined();
  });

  it("a service default's digest: for what carries none of its own and the user chose none for; never a required type", () => {
    const defaults = (rules: Parameters<typeof resolveDefaults>[0], category?: string) =>
      notification({
        ...(category ? { category } : {}),
        preference_defaults: resolveDefaults(rules, { event_type: 'marketing.sale', category }),
      });
    const byDefault = defaults(
      [
        { event_type: '*', digest: { at: '09:00', max_items: 10 } },
        { event_type: 'marketing.*', digest: { window_secs: 600, max_items: 5, title: '{count} offers' } },
        { category: 'promotions', digest: { window_secs: 60, max_items: 10 } },
      ],
      'promotions',
    );
    // The most specific event-type rule's, before a category rule's; keyed by its pattern.
    expect(digestFor(byDefault, [])).toEqual({
      scope: 'default:marketing.*',
      spec: { key: 'marketing.*', window_secs: 600, max_items: 5, title: '{count} offers' },
    });
    // The category rule's when no event-type rule has one: keyed `category:<pattern>`.
    expect(
      digestFor(
        defaults([{ category: 'promotions', digest: { window_secs: 60, max_items: 10 } }], 'promotions'),
        undefined,
      ),
    ).toEqual({
      scope: 'default:category:promotions',
      spec: { key: 'category:promotions', window_secs: 60, max_items: 10 },
    });
    // The user's choice beats the default; the notification's own beats both.
    expect(digestFor(byDefault, [{ event_type: 'marketing.*', at: '18:00' }])?.scope).toBe(
      'preference:marketing.*',
    );
    const own = { key: 'sale-1', window_secs: 5, max_items: 10 };
    expect(digestFor({ ...byDefault, digest: own }, [{ event_type: '*', at: '18:00' }])?.scope).toBe(
      'key:sale-1',
    );
    // Required (by another rule): never held back by the default.
    const required = defaults(
      [
        { event_type: 'marketing.*', digest: { window_secs: 600, max_items: 10 } },
        { category: 'promotions', required: true },
      ],
      'promotions',
    );
    expect(digestFor(required, [])).toBeUndefined();
    expect(digestFor(defaults([]), [])).toBeUndefined();
  });
});
