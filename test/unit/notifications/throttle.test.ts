import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../lambdas/domain/notifications/channels';
import type { NotificationRecord } from '../../../lambdas/domain/notifications/model';
import { applyThrottle } from '../../../lambdas/domain/notifications/throttle';
import { resolveDefaults } from '../../../lambdas/domain/preferences/rules';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { notificationRecord } from '../../support/notification-records';

useDynamoDbLocal();

const LOUD: Channel[] = ['in_app', 'toast', 'realtime', 'push'];
let userSeq = 0;
const newUser = () => `throttled-${Date.now()}-${++userSeq}`;
const HOUR_MS = 3600_000;
/** A time in an hour to come: its counters expire (TTL) after the test, and the test cannot cross into the next hour. */
const comingHour = (minute: number) => (Math.floor(Date.now() / HOUR_MS) + 2) * HOUR_MS + minute * 60_000;

const notification = (overrides: Partial<NotificationRecord> = {}): NotificationRecord =>
  notificationRecord({
    channels: LOUD,
    throttle: { key: 'social.*', limit: 3, window_secs: 3600 },
    ...overrides,
  });

/** Whether the throttle left the loud channels on. */
const loud = (channels: readonly Channel[]) => channels.includes('push') && channels.includes('toast');

describe('throttle', () => {
  it('under concurrent deliveries and duplicates: exactly `limit` notifications reach a recipient loudly', async () => {
    const user = newUser();
    const now = comingHour(10);
    const sent = Array.from({ length: 12 }, () => notification());
    // Each notification delivered three times at once (redelivered chunks, a release run twice).
    const attempts = sent.flatMap((item) => [item, item, item]);
    const outcomes = await Promise.all(
      attempts.map(async (item) => ({ id: item.id, channels: await applyThrottle(item, user, LOUD, now) })),
    );
    const admitted = new Set(
      outcomes.filter((outcome) => loud(outcome.channels)).map((outcome) => outcome.id),
    );
    expect(admitted.size).toBe(3);
    // Every copy of an admitted notification was admitted; every other copy went to the feed only.
    for (const outcome of outcomes) {
      expect(loud(outcome.channels)).toBe(admitted.has(outcome.id));
      if (!admitted.has(outcome.id)) expect(outcome.channels).toEqual(['in_app', 'realtime']);
    }
    // A later redelivery of an admitted one is let through; a new one is not.
    const [first] = [...admitted];
    const again = sent.find((item) => item.id === first) as NotificationRecord;
    expect(loud(await applyThrottle(again, user, LOUD, now + 60_000))).toBe(true);
    expect(loud(await applyThrottle(notification(), user, LOUD, now + 60_000))).toBe(false);
  });

  it('counts per recipient, per key and per window', async () => {
    const [alice, bob] = [newUser(), newUser()];
    const now = comingHour(59);
    const limited = { key: 'social.*', limit: 1, window_secs: 3600 };
    expect(loud(await applyThrottle(notification({ throttle: limited }), alice, LOUD, now))).toBe(true);
    expect(loud(await applyThrottle(notification({ throttle: limited }), alice, LOUD, now))).toBe(false);
    expect(loud(await applyThrottle(notification({ throttle: limited }), bob, LOUD, now))).toBe(true);
    const otherKey = { ...limited, key: 'billing.*' };
    expect(loud(await applyThrottle(notification({ throttle: otherKey }), alice, LOUD, now))).toBe(true);
    // The next hour is a new window.
    expect(loud(await applyThrottle(notification({ throttle: limited }), alice, LOUD, now + 60_000))).toBe(
      true,
    );
  });

  it('leaves quiet channels alone and counts nothing for them; no throttle, no limit', async () => {
    const user = newUser();
    const limited = { key: 'social.*', limit: 1, window_secs: 3600 };
    const quiet: Channel[] = ['in_app', 'realtime'];
    expect(await applyThrottle(notification({ throttle: limited }), user, quiet)).toEqual(quiet);
    expect(loud(await applyThrottle(notification({ throttle: limited }), user, LOUD))).toBe(true);
    const unlimited = notification({ throttle: undefined });
    for (let index = 0; index < 3; index += 1)
      expect(loud(await applyThrottle(unlimited, user, LOUD))).toBe(true);
  });

  it("the defaults' throttle: the most specific matching rule with one, counted under its pattern", () => {
    const rules = [
      { event_type: '*', throttle: { limit: 50, window_secs: 3600 } },
      { event_type: 'social.*', throttle: { limit: 5, window_secs: 600 } },
      { event_type: 'social.comment', channels: { toast: false } },
    ];
    expect(resolveDefaults(rules, { event_type: 'social.comment' }).throttle).toEqual({
      key: 'social.*',
      limit: 5,
      window_secs: 600,
    });
    expect(resolveDefaults(rules, { event_type: 'billing.paid' }).throttle).toEqual({
      key: '*',
      limit: 50,
      window_secs: 3600,
    });
    expect(resolveDefaults([], { event_type: 'billing.paid' }).throttle).toBeUndefined();
  });
});
