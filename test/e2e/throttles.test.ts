import { describe, expect, it, vi } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { deliveryIdle, usePushRuntime } from '../support/push-runtime';

/**
 * Throttles by category and a throttle's over-limit digest, end to end over real HTTP (docs/delivery-rules.md
 * "Throttles"): pushes counted per recipient across the event types of a category, exactly, under concurrent and
 * repeated requests; over a limit whose `over` is `digest`, one digest of the over-limit notifications when the
 * window ends. The tests wait for outcomes (pushes at the Expo stand-in, items in the feed), never for a time.
 */
// SQS time 10× faster: a message whose handling failed once returns after 18 s, not 180 s (quiet-hours.test.ts).
const push = usePushRuntime({ timeScale: '0.1' });

vi.setConfig({ testTimeout: 150_000 });

const api = apiClient(() => push.runtime.httpUrl);
const service = () => push.runtime.mintServiceToken('throttled', ['notifications:write']);
let seq = 0;

/** A user with one Expo device: each push it gets shows at the stand-in. */
const userWithDevice = async (name: string) => {
  const id = `${name}-${push.run}-${++seq}`;
  const token = await push.runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  expect((await api('POST', '/devices', token, { token: pushToken, platform: 'android' })).status).toBe(201);
  return { id, token, pushToken };
};

interface FeedItem {
  readonly notification_id: string;
  readonly title: string;
  readonly data: { digest?: { key: string; count: number; items: { notification_id: string }[] } };
}

const feedOf = async (token: string) =>
  (await api('GET', '/notifications?limit=100', token)).body.items as FeedItem[];

const setDefaults = async (rules: readonly Record<string, unknown>[]) => {
  const answer = await api('PUT', '/preferences/defaults', await service(), { rules });
  expect(answer.status).toBe(200);
  return answer.body;
};

/**
 * Sends each notification twice at once under one Idempotency-Key (a retried request): answers 202, or 409 for the
 * copy that found the first in flight. The ids of the notifications created, one per index.
 */
const sendTwiceEach = async (count: number, body: (index: number) => Record<string, unknown>) => {
  const token = await service();
  const batch = ++seq;
  const send = (index: number) =>
    api('POST', '/notifications', token, body(index), { 'idempotency-key': `${push.run}-${batch}-${index}` });
  const answers = await Promise.all(Array.from({ length: count * 2 }, (_, index) => send(index % count)));
  for (const answer of answers) expect([202, 409]).toContain(answer.status);
  const ids = [...new Set(answers.filter((a) => a.status === 202).map((a) => a.body.id as string))];
  expect(ids).toHaveLength(count);
  return ids;
};

/** Waits, when less than `leadMs` of the current fixed window of `windowMs` is left, for the next; its end. */
const freshWindow = async (windowMs: number, leadMs: number) => {
  const left = () => windowMs - (Date.now() % windowMs);
  if (left() < leadMs) await new Promise((resolve) => setTimeout(resolve, left() + 200));
  return Date.now() + left();
};

describe('throttles by category', () => {
  it('a default category throttle counts two event types of the category together: exactly `limit` pushes under concurrent, repeated requests', async () => {
    const erin = await userWithDevice('erin');
    const category = `social${push.run}`;
    try {
      const stored = await setDefaults([
        // Each event type alone would allow every one of them: the category's limit decides.
        { event_type: `fam${push.run}.*`, throttle: { limit: 10, window_secs: 86_400 } },
        { category, throttle: { limit: 3, window_secs: 86_400 } },
      ]);
      expect(stored.rules[1]).toEqual({
        category,
        channels: {},
        required: false,
        throttle: { limit: 3, window_secs: 86_400 },
      });
      await freshWindow(86_400_000, 120_000);
      const ids = await sendTwiceEach(8, (index) => ({
        event_type: index % 2 === 0 ? `fam${push.run}.comment` : `fam${push.run}.like`,
        category,
        title: `Activity ${index}`,
        recipient_ids: [erin.id],
        channels: ['in_app', 'push'],
      }));
      await eventually(
        () => push.pushesTo(erin.pushToken),
        (pushes) => pushes.length >= 3,
      );
      await deliveryIdle();
      expect(push.pushesTo(erin.pushToken)).toHaveLength(3);
      // Over the limit (`over` left out: feed): every notification is in the feed.
      expect((await feedOf(erin.token)).map((item) => item.notification_id).sort()).toEqual([...ids].sort());
    } finally {
      await setDefaults([]);
    }
  });

  it("a notification's own throttle counts by category with `per: category`; without a category that is a 400", async () => {
    const gus = await userWithDevice('gus');
    const category = `deals${push.run}`;
    await freshWindow(86_400_000, 120_000);
    const throttle = { limit: 1, window_secs: 86_400, per: 'category' };
    await sendTwiceEach(4, (index) => ({
      event_type: index % 2 === 0 ? 'deal.flash' : 'deal.weekly',
      category,
      title: `Deal ${index}`,
      recipient_ids: [gus.id],
      channels: ['in_app', 'push'],
      throttle,
    }));
    await eventually(
      () => push.pushesTo(gus.pushToken),
      (pushes) => pushes.length >= 1,
    );
    await deliveryIdle();
    expect(push.pushesTo(gus.pushToken)).toHaveLength(1);
    expect(await feedOf(gus.token)).toHaveLength(4);
    const refused = await api('POST', '/notifications', await service(), {
      event_type: 'deal.flash',
      title: 'No category',
      recipient_ids: [gus.id],
      throttle,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([{ field: 'throttle.per', issue: '`category` needs a category' }]);
  });
});

describe('over the limit: a digest', () => {
  it('`over: digest` sends one digest of every over-limit notification when the window ends, exactly once', async () => {
    const hana = await userWithDevice('hana');
    const category = `comments${push.run}`;
    const WINDOW_SECS = 30;
    try {
      await setDefaults([{ category, throttle: { limit: 1, window_secs: WINDOW_SECS, over: 'digest' } }]);
      // All sent inside one window (counted at their creation), which then ends within half a minute.
      await freshWindow(WINDOW_SECS * 1000, 20_000);
      const ids = await sendTwiceEach(4, (index) => ({
        event_type: index % 2 === 0 ? 'post.comment' : 'post.reply',
        category,
        title: `Comment ${index}`,
        recipient_ids: [hana.id],
        channels: ['in_app', 'push'],
      }));
      const key = `category:${category}`;
      const items = await eventually(
        () => feedOf(hana.token),
        (feed) => feed.some((item) => item.data.digest?.key === key),
        90_000,
      );
      // One notification within the limit, delivered as itself; the three over it only in the digest.
      const digest = items.find((item) => item.data.digest);
      const others = items.filter((item) => !item.data.digest);
      expect(others).toHaveLength(1);
      const admitted = others[0]?.notification_id;
      expect(ids).toContain(admitted);
      expect(digest?.data.digest?.count).toBe(3);
      expect(digest?.data.digest?.items.map((item) => item.notification_id).sort()).toEqual(
        ids.filter((id) => id !== admitted).sort(),
      );
      expect(digest?.title).toMatch(/^Comment \d \(and 2 more\)$/);
      // The push of the admitted one and the digest's, nothing else; nothing more arrives once all is done.
      await eventually(
        () => push.pushesTo(hana.pushToken),
        (pushes) => pushes.length >= 2,
      );
      await deliveryIdle();
      expect(push.pushesTo(hana.pushToken)).toHaveLength(2);
      expect(await feedOf(hana.token)).toHaveLength(2);
    } finally {
      await setDefaults([]);
    }
  });
});

describe("a notification's own throttle and its digest", () => {
  it('counts the digest against the throttle its opener carried: over the limit, the digest goes to the feed only', async () => {
    const ines = await userWithDevice('ines');
    const token = await service();
    const throttle = { limit: 1, window_secs: 3600 };
    const send = async (title: string, extra: Record<string, unknown> = {}) => {
      const body = { event_type: `own.throttle${push.run}`, title, recipient_ids: [ines.id], ...extra };
      const answer = await api('POST', '/notifications', token, {
        channels: ['in_app', 'push'],
        throttle,
        ...body,
      });
      expect(answer.status).toBe(202);
    };
    await send('first');
    await eventually(
      () => push.pushesTo(ines.pushToken),
      (pushes) => pushes.length === 1,
    );
    const digest = { key: `own-${push.run}`, window_secs: 1 };
    await send('member 1', { digest });
    await send('member 2', { digest });
    await eventually(
      () => feedOf(ines.token),
      (feed) => feed.some((item) => item.data.digest?.count === 2),
      60_000,
    );
    await deliveryIdle();
    // The limit of 1 was the first notification's: the digest is over it, so it makes no push.
    expect(push.pushesTo(ines.pushToken)).toHaveLength(1);
  });
});
