import { describe, expect, it } from 'vitest';
import type { Channel } from '../../../lambdas/domain/notifications/channels';
import type { NotificationRecord } from '../../../lambdas/domain/notifications/model';
import { applyThrottle, type ThrottleOutcome } from '../../../lambdas/domain/notifications/throttle';
import { resolveDefaults, type Throttle } from '../../../lambdas/domain/preferences/rules';
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

/** A notification of `eventType` in `category` under the defaults' two throttles (no throttle of its own). */
const underDefaults = (
  eventType: string,
  category: string,
  throttle: Throttle,
  categoryThrottle: Throttle,
): NotificationRecord =>
  notification({
    event_type: eventType,
    category,
    throttle: undefined,
    preference_defaults: { channels: {}, required: false, throttle, category_throttle: categoryThrottle },
  });

/** Whether the throttle left the loud channels on. */
const loud = ({ channels }: ThrottleOutcome) => channels.includes('push') && channels.includes('toast');

describe('throttle', () => {
  it('under concurrent deliveries and duplicates: exactly `limit` notifications reach a recipient loudly', async () => {
    const user = newUser();
    const now = comingHour(10);
    const sent = Array.from({ length: 12 }, () => notification());
    // Each notification delivered three times at once (redelivered chunks, a release run twice).
    const attempts = sent.flatMap((item) => [item, item, item]);
    const outcomes = await Promise.all(
      attempts.map(async (item) => ({ id: item.id, outcome: await applyThrottle(item, user, LOUD, now) })),
    );
    const admitted = new Set(outcomes.filter(({ outcome }) => loud(outcome)).map(({ id }) => id));
    expect(admitted.size).toBe(3);
    // Every copy of an admitted notification was admitted; every other copy went to the feed only.
    for (const { id, outcome } of outcomes) {
      expect(loud(outcome)).toBe(admitted.has(id));
      if (!admitted.has(id)) expect(outcome).toEqual({ channels: ['in_app', 'realtime'] });
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
    expect(await applyThrottle(notification({ throttle: limited }), user, quiet)).toEqual({
      channels: quiet,
    });
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

  it("the defaults' category throttle: the most specific matching category rule with one, counted under `category:` and its pattern, beside the event type's", () => {
    const rules = [
      { event_type: 'social.*', throttle: { limit: 5, window_secs: 600 } },
      { category: '*', throttle: { limit: 50, window_secs: 86_400 } },
      { category: 'social.*', throttle: { limit: 3, window_secs: 3600, over: 'digest' as const } },
      { category: 'social.friends', channels: { toast: false } },
    ];
    const social = resolveDefaults(rules, { event_type: 'social.comment', category: 'social.friends' });
    expect(social.throttle).toEqual({ key: 'social.*', limit: 5, window_secs: 600 });
    expect(social.category_throttle).toEqual({
      key: 'category:social.*',
      limit: 3,
      window_secs: 3600,
      over: 'digest',
    });
    expect(
      resolveDefaults(rules, { event_type: 'billing.paid', category: 'billing' }).category_throttle,
    ).toEqual({ key: 'category:*', limit: 50, window_secs: 86_400 });
    // No category: no category rule applies (not even `*`).
    expect(resolveDefaults(rules, { event_type: 'billing.paid' }).category_throttle).toBeUndefined();
  });

  it('two throttles (event type and category) both count: over either is over, and a notification over one takes no place under the other', async () => {
    const user = newUser();
    const now = comingHour(20);
    const byType = (eventType: string, limit: number) => ({ key: eventType, limit, window_secs: 3600 });
    const byCategory = { key: 'category:social', limit: 3, window_secs: 3600 };
    const under = (eventType: string, typeLimit: number) =>
      underDefaults(eventType, 'social', byType(eventType, typeLimit), byCategory);
    // social.like allows 1: the second like is over its type's limit and must not use up the category's.
    expect(loud(await applyThrottle(under('social.like', 1), user, LOUD, now))).toBe(true);
    expect(loud(await applyThrottle(under('social.like', 1), user, LOUD, now))).toBe(false);
    expect(loud(await applyThrottle(under('social.like', 1), user, LOUD, now))).toBe(false);
    // The category (limit 3) has two places left, for another type of the category.
    expect(loud(await applyThrottle(under('social.comment', 10), user, LOUD, now))).toBe(true);
    expect(loud(await applyThrottle(under('social.comment', 10), user, LOUD, now))).toBe(true);
    expect(loud(await applyThrottle(under('social.comment', 10), user, LOUD, now))).toBe(false);
    // The other way round: over the category's limit takes no place under the type's.
    const other = newUser();
    const perMinute = { key: 'category:social', limit: 1, window_secs: 60 };
    const like = () => underDefaults('social.like', 'social', byType('social.like', 2), perMinute);
    expect(loud(await applyThrottle(like(), other, LOUD, now))).toBe(true);
    expect(loud(await applyThrottle(like(), other, LOUD, now))).toBe(false);
    // The next minute the category has room again, and the type (hourly) still its second place.
    expect(loud(await applyThrottle(like(), other, LOUD, now + 60_000))).toBe(true);
  });

  it('a category counter under concurrent deliveries of two event types and duplicates: exactly `limit` loud', async () => {
    const user = newUser();
    const now = comingHour(30);
    const byCategory = { key: 'category:social', limit: 4, window_secs: 3600 };
    const sent = Array.from({ length: 14 }, (_, index) => {
      const eventType = index % 2 === 0 ? 'social.comment' : 'social.like';
      // Each type allows more than the category: the category's counter decides.
      return underDefaults(eventType, 'social', { key: eventType, limit: 20, window_secs: 3600 }, byCategory);
    });
    const attempts = sent.flatMap((item) => [item, item, item]);
    const outcomes = await Promise.all(
      attempts.map(async (item) => ({ id: item.id, outcome: await applyThrottle(item, user, LOUD, now) })),
    );
    const admitted = new Set(outcomes.filter(({ outcome }) => loud(outcome)).map(({ id }) => id));
    expect(admitted.size).toBe(4);
    for (const { id, outcome } of outcomes) expect(loud(outcome)).toBe(admitted.has(id));
    // Redelivered later in the window: the admitted ones again, no other.
    for (const item of sent)
      expect(loud(await applyThrottle(item, user, LOUD, now + 60_000))).toBe(admitted.has(item.id));
  });

  it('`over: digest`: over the limit the notification joins the batch of the throttle key, closing when the window ends; a digest itself never does', async () => {
    const user = newUser();
    const now = comingHour(40);
    const windowEnd = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
    const limited = { key: 'category:social', limit: 1, window_secs: 3600, over: 'digest' as const };
    expect(await applyThrottle(notification({ throttle: limited }), user, LOUD, now)).toEqual({
      channels: LOUD,
    });
    expect(await applyThrottle(notification({ throttle: limited }), user, LOUD, now)).toEqual({
      channels: ['in_app', 'realtime'],
      digest: {
        scope: 'throttle:category:social',
        spec: { key: 'category:social', closes_at: windowEnd, max_items: 10 },
      },
    });
    const digest = notification({
      throttle: limited,
      digest_of: { key: 'category:social', batch_id: 'b', count: 2 },
    });
    expect(await applyThrottle(digest, user, LOUD, now)).toEqual({ channels: ['in_app', 'realtime'] });
    // Over two limits, one of which says digest: the digest of that one.
    const feedOnly = { key: 'social.comment', limit: 1, window_secs: 60 };
    const both = () => underDefaults('social.comment', 'social', feedOnly, limited);
    const other = newUser();
    expect(loud(await applyThrottle(both(), other, LOUD, now))).toBe(true);
    expect((await applyThrottle(both(), other, LOUD, now)).digest?.scope).toBe('throttle:category:social');
  });
});
