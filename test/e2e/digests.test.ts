import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/**
 * Digests through the local runtime (docs/digests.md): windows of a few seconds, and the tests wait for the
 * outcome (the digest in the feed), never for a time.
 */
let runtime: Runtime;
let service: string;
let run = 0;
const user = (name: string) => `${name}-${process.pid}-${run}`;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = await runtime.mintServiceToken('comments', ['notifications:write']);
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

interface FeedItem {
  readonly id: string;
  readonly title: string;
  readonly body: string;
  readonly event_type: string;
  readonly data: {
    digest?: { key: string; count: number; items: { notification_id: string; title: string }[] };
  };
}

const feed = async (token: string): Promise<FeedItem[]> =>
  (await api('GET', '/notifications?limit=100', token)).body.items as FeedItem[];

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

/** Waits until the feed holds `count` digests (or the time is up) and returns the feed. */
const feedWithDigests = (token: string, count: number) =>
  eventually(
    () => feed(token),
    (items) => items.filter((item) => item.data.digest).length >= count,
    60_000,
  );

describe('digests', () => {
  it('batches a window per recipient and key into one notification: one feed item, one frame, exact counts', async () => {
    const [alice, bob] = [user('alice'), user('bob')];
    const [aliceToken, bobToken] = await Promise.all([
      runtime.mintUserToken(alice),
      runtime.mintUserToken(bob),
    ]);
    const socket = await TestClient.open(`${runtime.wsUrl}?token=${aliceToken}`);
    await socket.nextOfType('session');
    const comment = (index: number, key = 'post-42', recipients = [alice, bob]) =>
      api(
        'POST',
        '/notifications',
        service,
        {
          event_type: 'comment.created',
          title: `Comment ${index}`,
          recipient_ids: recipients,
          channels: ['in_app', 'toast'],
          digest: { key, window_secs: 3, max_items: 2, title: '{count} new comments on post 42' },
        },
        { 'idempotency-key': `comment-${run}-${key}-${index}` },
      );
    for (const index of [1, 2, 3]) expect((await comment(index)).status).toBe(202);
    // A retried request (same Idempotency-Key) is the same notification: it joins once.
    expect((await comment(3)).status).toBe(202);
    // Another key to alice alone: a batch of its own.
    expect((await comment(4, 'post-7', [alice])).status).toBe(202);

    const items = await feedWithDigests(aliceToken, 2);
    expect(items).toHaveLength(2);
    const post42 = items.find((item) => item.data.digest?.key === 'post-42');
    expect(post42).toMatchObject({
      title: '3 new comments on post 42',
      event_type: 'comment.created',
      data: { digest: { key: 'post-42', count: 3 } },
    });
    // max_items 2: the first two listed, the count exact.
    expect(post42?.data.digest?.items.map((item) => item.title)).toEqual(['Comment 1', 'Comment 2']);
    const post7 = items.find((item) => item.data.digest?.key === 'post-7');
    expect(post7).toMatchObject({ data: { digest: { count: 1 } } });
    expect(await unread(aliceToken)).toBe(2);

    // One toast per digest, none per member.
    const frames = [
      await socket.nextOfType('notification', 30_000),
      await socket.nextOfType('notification', 30_000),
    ];
    expect(frames.map((frame) => frame.id).sort()).toEqual(items.map((item) => item.id).sort());
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expect(socket.next((frame) => frame.type === 'notification', 0)).rejects.toThrow();
    await socket.close();

    // Bob's batch is his own: the same three comments, one digest.
    const bobs = await feedWithDigests(bobToken, 1);
    expect(bobs).toHaveLength(1);
    expect(bobs[0]?.data.digest?.count).toBe(3);
    expect(await unread(bobToken)).toBe(1);

    // A comment after the close opens the next batch.
    expect((await comment(5, 'post-42', [bob])).status).toBe(202);
    const later = await feedWithDigests(bobToken, 2);
    expect(later.map((item) => item.data.digest?.count)).toEqual([1, 3]);
    expect(await unread(bobToken)).toBe(2);
  }, 120_000);

  it('batches through the fan-out worker too (more recipients than the request delivers itself)', async () => {
    const recipients = Array.from({ length: 12 }, (_, index) => user(`fan-${index}`));
    const send = (index: number) =>
      api('POST', '/notifications', service, {
        event_type: 'comment.created',
        title: `Reply ${index}`,
        recipient_ids: recipients,
        digest: { key: 'thread-1', window_secs: 3 },
      });
    expect((await send(1)).status).toBe(202);
    expect((await send(2)).status).toBe(202);
    for (const recipient of [recipients[0], recipients[11]]) {
      const token = await runtime.mintUserToken(recipient as string);
      const items = await feedWithDigests(token, 1);
      expect(items).toHaveLength(1);
      expect(items[0]?.data.digest?.count).toBe(2);
      expect(items[0]?.title).toBe('Reply 2 (and 1 more)');
    }
  }, 120_000);

  it("applies the user's digest choice to matching notifications only", async () => {
    const carol = user('carol');
    const token = await runtime.mintUserToken(carol);
    const put = await api('PUT', '/preferences', token, {
      rules: [],
      digests: [{ event_type: 'marketing.*', window_secs: 2 }],
    });
    expect(put.status).toBe(200);
    expect(put.body.digests).toEqual([{ event_type: 'marketing.*', window_secs: 2 }]);
    expect((await api('GET', '/preferences', token)).body.digests).toEqual([
      { event_type: 'marketing.*', window_secs: 2 },
    ]);
    const send = (eventType: string, title: string) =>
      api('POST', '/notifications', service, { event_type: eventType, title, recipient_ids: [carol] });
    expect((await send('marketing.sale', 'Sale')).status).toBe(202);
    expect((await send('marketing.newsletter', 'Newsletter')).status).toBe(202);
    expect((await send('billing.invoice', 'Invoice')).status).toBe(202);

    const items = await feedWithDigests(token, 1);
    expect(items.map((item) => item.title).sort()).toEqual(['Invoice', 'Newsletter (and 1 more)']);
    const digest = items.find((item) => item.data.digest);
    expect(digest?.data.digest).toMatchObject({ key: 'marketing.*', count: 2 });
    expect(digest?.body).toBe('Sale\nNewsletter');
    expect(await unread(token)).toBe(2);
  }, 120_000);

  it('refuses a digest without exactly one of window_secs and at, or with a time that is not HH:MM', async () => {
    const dave = user('dave');
    for (const digest of [
      { key: 'k' },
      { key: 'k', window_secs: 10, at: '09:00' },
      { key: 'k', at: '24:00' },
      { key: 'bad key', window_secs: 10 },
      { key: 'k', window_secs: 0 },
    ]) {
      const answer = await api('POST', '/notifications', service, {
        event_type: 'comment.created',
        title: 'x',
        recipient_ids: [dave],
        digest,
      });
      expect(answer.status, JSON.stringify(digest)).toBe(400);
      expect(answer.body.code).toBe('validation');
      expect(JSON.stringify(answer.body.details)).toContain('digest');
    }
    const token = await runtime.mintUserToken(dave);
    const refused = await api('PUT', '/preferences', token, {
      rules: [],
      digests: [{ event_type: 'a.*', category: 'b', at: '09:00' }],
    });
    expect(refused.status).toBe(400);
  });
});
