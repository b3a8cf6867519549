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
  readonly category: string | null;
  readonly data: {
    digest?: { key: string; count: number; items: { notification_id: string; title: string }[] };
  };
}

const feed = async (token: string): Promise<FeedItem[]> =>
  (await api('GET', '/notifications?limit=100', token)).body.items as FeedItem[];

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

/** The digests of `key` in a feed. */
const digestsOf = (items: readonly FeedItem[], key: string) =>
  items.filter((item) => item.data.digest?.key === key);

/** How many notifications the feed's digests of `key` carry together. */
const carried = (items: readonly FeedItem[], key: string) =>
  digestsOf(items, key).reduce((sum, item) => sum + (item.data.digest?.count ?? 0), 0);

/** Waits until the feed's digests of each key carry the given number of notifications; returns the feed. */
const feedCarrying = (token: string, counts: Readonly<Record<string, number>>) =>
  eventually(
    () => feed(token),
    (items) => Object.entries(counts).every(([key, count]) => carried(items, key) >= count),
    60_000,
  );

/*
 * How many notifications share a batch depends on when each arrives, which a loaded machine can stretch past a
 * window: the tests send a batch's notifications at once, with a window of several seconds, and assert what holds
 * however the windows fell (each notification carried once, counts and titles agree, one feed item and one frame
 * per digest), plus that batching happened at all.
 */
const WINDOW_SECS = 8;

/** A digested comment of the category `social.comments` to one recipient. */
const commentOnSocial = (recipient: string, key: string, title: string, channels?: readonly string[]) =>
  api('POST', '/notifications', service, {
    event_type: 'comment.created',
    category: 'social.comments',
    tags: ['thread'],
    title,
    recipient_ids: [recipient],
    ...(channels ? { channels } : {}),
    digest: { key, window_secs: WINDOW_SECS },
  });

// Each test has recipients of its own and waits out windows of its own, so they wait side by side; the service
// defaults (which `PUT /preferences/defaults` replaces) are set by one test only, for an event family of its own.
describe.concurrent('digests', () => {
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
          digest: { key, window_secs: WINDOW_SECS, max_items: 2, title: '{count} new comments on post 42' },
        },
        { 'idempotency-key': `comment-${run}-${key}-${index}` },
      );
    const answers = await Promise.all([
      comment(1),
      comment(2),
      comment(3),
      // A retried request (same Idempotency-Key) is the same notification: it joins once.
      comment(3),
      // Another key to alice alone: a batch of its own.
      comment(4, 'post-7', [alice]),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);

    const items = await feedCarrying(aliceToken, { 'post-42': 3, 'post-7': 1 });
    expect(carried(items, 'post-42')).toBe(3);
    expect(carried(items, 'post-7')).toBe(1);
    // The feed shows each batch as one item, nothing else.
    expect(items.every((item) => item.data.digest)).toBe(true);
    const post42 = digestsOf(items, 'post-42');
    for (const digest of post42) {
      const count = digest.data.digest?.count ?? 0;
      expect(digest).toMatchObject({
        title: `${count} new comments on post 42`,
        event_type: 'comment.created',
      });
      // max_items 2: at most the first two listed, the count exact.
      expect(digest.data.digest?.items).toHaveLength(Math.min(count, 2));
    }
    expect(post42.some((digest) => (digest.data.digest?.count ?? 0) >= 2)).toBe(true); // batched
    expect(await unread(aliceToken)).toBe(items.length);

    // One toast per digest, none per member.
    const frames = [];
    for (const _ of items) frames.push(await socket.nextOfType('notification', 30_000));
    expect(frames.map((frame) => frame.id).sort()).toEqual(items.map((item) => item.id).sort());
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await expect(socket.next((frame) => frame.type === 'notification', 0)).rejects.toThrow();
    await socket.close();

    // Bob's batches are his own: the same three comments.
    const bobs = await feedCarrying(bobToken, { 'post-42': 3 });
    expect(carried(bobs, 'post-42')).toBe(3);
    expect(await unread(bobToken)).toBe(bobs.length);

    // A comment after the close opens the next batch.
    expect((await comment(5, 'post-42', [bob])).status).toBe(202);
    const later = await feedCarrying(bobToken, { 'post-42': 4 });
    expect(carried(later, 'post-42')).toBe(4);
    expect(later).toHaveLength(bobs.length + 1);
    expect(later[0]?.data.digest?.count).toBe(1);
    expect(await unread(bobToken)).toBe(later.length);
  }, 180_000);

  it('batches through the fan-out worker too (more recipients than the request delivers itself)', async () => {
    const recipients = Array.from({ length: 12 }, (_, index) => user(`fan-${index}`));
    const send = (index: number) =>
      api('POST', '/notifications', service, {
        event_type: 'comment.created',
        title: `Reply ${index}`,
        recipient_ids: recipients,
        digest: { key: 'thread-1', window_secs: WINDOW_SECS },
      });
    expect((await Promise.all([send(1), send(2)])).map((answer) => answer.status)).toEqual([202, 202]);
    for (const recipient of [recipients[0], recipients[11]]) {
      const token = await runtime.mintUserToken(recipient as string);
      const items = await feedCarrying(token, { 'thread-1': 2 });
      expect(carried(items, 'thread-1')).toBe(2);
      for (const item of items) {
        const count = item.data.digest?.count;
        if (count === 2) expect(item.title).toMatch(/^Reply \d \(and 1 more\)$/);
        else expect(item.title).toMatch(/^Reply \d$/);
      }
    }
  }, 180_000);

  it("applies the user's digest choice to matching notifications only", async () => {
    const carol = user('carol');
    const token = await runtime.mintUserToken(carol);
    const choice = { event_type: 'marketing.*', window_secs: WINDOW_SECS };
    const put = await api('PUT', '/preferences', token, { rules: [], digests: [choice] });
    expect(put.status).toBe(200);
    expect(put.body.digests).toEqual([choice]);
    expect((await api('GET', '/preferences', token)).body.digests).toEqual([choice]);
    const send = (eventType: string, title: string) =>
      api('POST', '/notifications', service, { event_type: eventType, title, recipient_ids: [carol] });
    const answers = await Promise.all([
      send('marketing.sale', 'Sale'),
      send('marketing.newsletter', 'Newsletter'),
      send('billing.invoice', 'Invoice'),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);

    const items = await feedCarrying(token, { 'marketing.*': 2 });
    expect(carried(items, 'marketing.*')).toBe(2);
    // The invoice matches no choice: delivered on its own, at once.
    expect(items.filter((item) => !item.data.digest).map((item) => item.title)).toEqual(['Invoice']);
    for (const digest of digestsOf(items, 'marketing.*')) {
      const listed = digest.data.digest?.items.map((item) => item.title) ?? [];
      expect(['Sale', 'Newsletter']).toEqual(expect.arrayContaining(listed));
      expect(digest.body).toBe(listed.length > 1 ? listed.join('\n') : '');
    }
    expect(await unread(token)).toBe(items.length);
  }, 180_000);

  it("batches by a service default's digest; a user's own choice beats it; a required rule carries none", async () => {
    const [gina, hal] = [user('gina'), user('hal')];
    const [ginaToken, halToken] = await Promise.all([
      runtime.mintUserToken(gina),
      runtime.mintUserToken(hal),
    ]);
    const family = `offer${run}`;
    const rule = { event_type: `${family}.*`, digest: { window_secs: WINDOW_SECS, title: '{count} offers' } };
    try {
      const set = await api('PUT', '/preferences/defaults', service, { rules: [rule] });
      expect(set.status).toBe(200);
      expect(set.body.rules).toEqual([
        { ...rule, channels: {}, required: false, digest: { ...rule.digest, max_items: 10 } },
      ]);
      const refused = await api('PUT', '/preferences/defaults', service, {
        rules: [{ ...rule, required: true }],
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details).toEqual([
        { field: 'rules[0].digest', issue: 'a required rule is never held back' },
      ]);
      // Hal chose his own digest for the category: his choice, not the service's.
      const choice = { category: 'deals', window_secs: WINDOW_SECS };
      expect((await api('PUT', '/preferences', halToken, { rules: [], digests: [choice] })).status).toBe(200);
      const send = (index: number) =>
        api('POST', '/notifications', service, {
          event_type: `${family}.sale`,
          category: 'deals',
          title: `Offer ${index}`,
          recipient_ids: [gina, hal],
        });
      expect((await Promise.all([send(1), send(2), send(3)])).map((answer) => answer.status)).toEqual([
        202, 202, 202,
      ]);

      const ginas = await feedCarrying(ginaToken, { [`${family}.*`]: 3 });
      expect(carried(ginas, `${family}.*`)).toBe(3);
      expect(ginas.every((item) => item.data.digest)).toBe(true);
      for (const digest of ginas) expect(digest.title).toBe(`${digest.data.digest?.count} offers`);
      expect(ginas.some((digest) => (digest.data.digest?.count ?? 0) >= 2)).toBe(true); // batched

      const hals = await feedCarrying(halToken, { 'category:deals': 3 });
      expect(carried(hals, 'category:deals')).toBe(3);
      expect(carried(hals, `${family}.*`)).toBe(0);
      expect(hals.every((item) => item.data.digest)).toBe(true);
      expect(await unread(halToken)).toBe(hals.length);
    } finally {
      await api('PUT', '/preferences/defaults', service, { rules: [] });
    }
  }, 180_000);

  it("carries its opener's category and tags: the feed's filters and counts find it, the recipient's category rules apply to it", async () => {
    const [erin, finn] = [user('erin'), user('finn')];
    const [erinToken, finnToken] = await Promise.all([
      runtime.mintUserToken(erin),
      runtime.mintUserToken(finn),
    ]);
    // Finn turned toasts off for the category: his digests reach his connection as silent updates.
    const rule = { category: 'social.comments', channels: { toast: false } };
    expect((await api('PUT', '/preferences', finnToken, { rules: [rule] })).status).toBe(200);
    const socket = await TestClient.open(`${runtime.wsUrl}?token=${finnToken}`);
    await socket.nextOfType('session');
    const answers = await Promise.all([
      ...[1, 2, 3].map((index) => commentOnSocial(erin, 'post-9', `Note ${index}`)),
      ...[1, 2].map((index) =>
        commentOnSocial(finn, 'post-11', `Remark ${index}`, ['in_app', 'toast', 'realtime']),
      ),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);

    const items = await feedCarrying(erinToken, { 'post-9': 3 });
    expect(items.every((item) => item.data.digest)).toBe(true);
    expect(items.map((item) => item.category)).toEqual(items.map(() => 'social.comments'));
    const filtered = (await api('GET', '/notifications?category=social.comments&limit=100', erinToken)).body
      .items as FeedItem[];
    expect(filtered.map((item) => item.id).sort()).toEqual(items.map((item) => item.id).sort());
    const tagged = (await api('GET', '/notifications?tag=thread&limit=100', erinToken)).body
      .items as FeedItem[];
    expect(tagged.map((item) => item.id).sort()).toEqual(items.map((item) => item.id).sort());
    const counts = (await api('GET', '/notifications/counts', erinToken)).body;
    expect(counts.categories).toEqual({
      'social.comments': { unseen: items.length, unread: items.length, total: items.length },
    });

    const finns = await feedCarrying(finnToken, { 'post-11': 2 });
    for (const _ of finns) {
      const frame = await socket.nextOfType('notification', 30_000);
      expect(frame).toMatchObject({ channel: 'realtime', category: 'social.comments' });
    }
    await socket.close();
  }, 180_000);

  it('refuses a digest without exactly one of window_secs and at, with a time that is not HH:MM, or a choice naming no category pattern', async () => {
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
    // A choice's category is a category pattern, as a rule's is: `Billing` could never match a category.
    for (const category of ['Billing', 'billing..x', 'billing.*.x']) {
      const answer = await api('PUT', '/preferences', token, {
        rules: [],
        digests: [{ category, window_secs: 60 }],
      });
      expect(answer.status, category).toBe(400);
      expect(answer.body.details).toEqual([
        { field: 'digests[0].category', issue: 'must be a category, `prefix.*` or `*`' },
      ]);
    }
    // A second choice of the same pattern could never apply (the first that matches does): refused, as for rules.
    const twice = await api('PUT', '/preferences', token, {
      rules: [],
      digests: [
        { category: 'social', window_secs: 60 },
        { event_type: 'social', at: '09:00' },
        { category: 'social', at: '09:00' },
      ],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.details).toEqual([{ field: 'digests[2].category', issue: 'duplicate pattern' }]);
  });
});
