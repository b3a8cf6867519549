/**
 * Categories and tags end to end, over real HTTP and WebSocket on the local runtime: carried by POST
 * /notifications into the feed item and the `notification` frame, the feed's category and tag filters (with the
 * state filters, paged by cursor while items arrive), the counts overall and per category, bulk changes of one
 * category, and preferences that mute a category.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api';
import { countsOfListed } from '../support/feed-counts';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/** The runtime, a service token that sends, and a suffix that makes this run's user ids its own. */
const local = { runtime: undefined as unknown as Runtime, service: '', suffix: '' };
const user = (name: string) => `${name}-${local.suffix}`;

beforeAll(async () => {
  local.runtime = await startTestRuntime();
  local.suffix = `${process.pid}-${Date.now()}`;
  local.service = await local.runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(() => local.runtime?.stop());

const api = apiClient(() => local.runtime.httpUrl);

/** The fields of a feed item these tests look at. */
type Item = Readonly<{
  id: string;
  title: string;
  category: string | null;
  tags: string[];
  read_at: string | null;
  seen_at: string | null;
  archived_at: string | null;
}>;

/** Every item of the feed (all pages) matching a query (`state=…&category=…&tag=…`). */
const feed = async (token: string, query = ''): Promise<Item[]> => {
  const items: Item[] = [];
  let page = await api('GET', `/notifications?limit=100${query ? `&${query}` : ''}`, token);
  for (;;) {
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    items.push(...(page.body.items as Item[]));
    const cursor: string | null = page.body.next_cursor;
    if (!cursor) return items;
    page = await api('GET', `/notifications?limit=100${query ? `&${query}` : ''}&cursor=${cursor}`, token);
  }
};

const titles = (items: readonly Item[]) => items.map((item) => item.title);

/** One notification per entry, in order: `[title, category?, tags?]`; their feed ids, in the same order. */
const notify = async (
  userId: string,
  token: string,
  ...entries: (readonly [string, (string | null)?, string[]?])[]
): Promise<string[]> => {
  for (const [title, category, tags] of entries) {
    const created = await api('POST', '/notifications', local.service, {
      event_type: 'inbox.test',
      title,
      recipient_ids: [userId],
      ...(category === undefined ? {} : { category }),
      ...(tags === undefined ? {} : { tags }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
  }
  const items = await feed(token, 'state=all');
  return entries.map(([title]) => items.find((item) => item.title === title)?.id as string);
};

describe('category and tags', () => {
  it('carries them into the feed item and the notification frame; items without them read as null and []', async () => {
    const ada = user('ada');
    const token = await local.runtime.mintUserToken(ada);
    const client = await TestClient.open(`${local.runtime.wsUrl}?token=${token}`);
    await client.nextOfType('session');
    const created = await api('POST', '/notifications', local.service, {
      event_type: 'invoice.paid',
      title: 'Paid',
      recipient_ids: [ada],
      channels: ['in_app', 'toast'],
      category: 'billing.invoices',
      tags: ['vip', 'eu:west', 'Q4.2026'],
    });
    expect(created.status).toBe(202);
    expect(await client.nextOfType('notification')).toMatchObject({
      notification_id: created.body.id,
      category: 'billing.invoices',
      tags: ['vip', 'eu:west', 'Q4.2026'],
    });
    await notify(ada, token, ['Plain']);
    const items = await feed(token);
    expect(items.map(({ title, category, tags }) => ({ title, category, tags }))).toEqual([
      { title: 'Plain', category: null, tags: [] },
      { title: 'Paid', category: 'billing.invoices', tags: ['vip', 'eu:west', 'Q4.2026'] },
    ]);
    client.assertDocumentedFrames();
    await client.close();
  });

  it('refuses a malformed category or tags with a 400 naming the field, and stores nothing', async () => {
    const bea = user('bea');
    const token = await local.runtime.mintUserToken(bea);
    const cases: [Record<string, unknown>, string][] = [
      [{ category: 'Billing' }, 'category'],
      [{ category: 'billing..x' }, 'category'],
      [{ category: 'a'.repeat(65) }, 'category'],
      [{ category: '' }, 'category'],
      [{ tags: ['a b'] }, 'tags[0]'],
      [{ tags: ['x', 'x'] }, 'tags[1]'],
      [{ tags: ['1', '2', '3', '4', '5', '6'] }, 'tags'],
      [{ tags: ['t'.repeat(33)] }, 'tags[0]'],
      [{ tags: 'vip' }, 'tags'],
    ];
    for (const [extra, field] of cases) {
      const answer = await api('POST', '/notifications', local.service, {
        event_type: 'inbox.test',
        title: 'bad',
        recipient_ids: [bea],
        ...extra,
      });
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      // One issue each: an empty or over-long name is not also "not a dotted name".
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toEqual([field]);
    }
    for (const query of ['category=Bad', 'tag=a%20b', `tag=${'t'.repeat(33)}`, 'category=', 'tag=']) {
      const answer = await api('GET', `/notifications?${query}`, token);
      expect(answer.status, query).toBe(400);
      expect(answer.body.details, query).toHaveLength(1);
    }
    expect(await feed(token, 'state=all')).toEqual([]);
  });
});

describe('filters', () => {
  it('filters by category and by tag, with the state filters, paged by cursor while items arrive', async () => {
    const cal = user('cal');
    const token = await local.runtime.mintUserToken(cal);
    const ids = await notify(
      cal,
      token,
      ['s0', 'social', ['friends']],
      ['b1', 'billing', ['vip']],
      ['s2', 'social', ['vip', 'friends']],
      ['n3'],
      ['s4', 'social'],
      ['s5', 'social', ['friends']],
      ['b6', 'billing'],
    );
    expect(titles(await feed(token, 'category=social'))).toEqual(['s5', 's4', 's2', 's0']);
    expect(titles(await feed(token, 'category=billing'))).toEqual(['b6', 'b1']);
    expect(titles(await feed(token, 'tag=vip'))).toEqual(['s2', 'b1']);
    expect(titles(await feed(token, 'category=social&tag=friends'))).toEqual(['s5', 's2', 's0']);
    expect(await feed(token, 'category=nothing.here')).toEqual([]);
    // A prefix is not a category: the filter is the exact name.
    expect(await feed(token, 'category=soc')).toEqual([]);

    await api('POST', `/notifications/${ids[4]}/read`, token);
    await api('POST', `/notifications/${ids[0]}/archive`, token);
    expect(titles(await feed(token, 'state=unread&category=social'))).toEqual(['s5', 's2']);
    expect(titles(await feed(token, 'state=read&category=social'))).toEqual(['s4']);
    expect(titles(await feed(token, 'state=archived&category=social'))).toEqual(['s0']);
    expect(titles(await feed(token, 'state=unseen&tag=friends'))).toEqual(['s5', 's2']);

    // Paged one item at a time while more items of the category arrive: nothing missed, nothing twice.
    const first = await api('GET', '/notifications?category=social&limit=1', token);
    expect(titles(first.body.items)).toEqual(['s5']);
    await notify(cal, token, ['s7', 'social'], ['b8', 'billing']);
    const seen = [...titles(first.body.items)];
    let cursor: string | null = first.body.next_cursor;
    while (cursor) {
      const page = await api('GET', `/notifications?category=social&limit=1&cursor=${cursor}`, token);
      expect(page.status).toBe(200);
      seen.push(...titles(page.body.items));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(['s5', 's4', 's2']);
    expect(titles(await feed(token, 'category=social'))).toEqual(['s7', 's5', 's4', 's2']);
  });
});

/** What GET /notifications lists, counted as GET /notifications/counts counts. */
const countsListed = async (token: string) => countsOfListed(await feed(token));

/** Five items: three social, one billing, one without a category. */
const FIVE = [['s0', 'social'], ['b1', 'billing'], ['s2', 'social'], ['n3'], ['s4', 'social']] as const;

describe('counts', () => {
  it('counts unseen, unread and total overall and per category, as the feed lists them, after every change', async () => {
    const hal = user('hal');
    const token = await local.runtime.mintUserToken(hal);
    const counts = async () => {
      const answer = await api('GET', '/notifications/counts', token);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    expect(await counts()).toEqual({ unseen: 0, unread: 0, total: 0, categories: {} });
    const ids = await notify(hal, token, ...FIVE);
    expect(await counts()).toEqual({
      unseen: 5,
      unread: 5,
      total: 5,
      categories: {
        social: { unseen: 3, unread: 3, total: 3 },
        billing: { unseen: 1, unread: 1, total: 1 },
      },
    });
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const changes: [string, unknown?][] = [
      [`/notifications/${ids[0]}/read`],
      ['/notifications/seen', { ids: [ids[2], ids[3]] }],
      [`/notifications/${ids[1]}/archive`],
      [`/notifications/${ids[4]}/snooze`, { until }],
      ['/notifications/bulk', { action: 'mark_read', category: 'social' }],
      [`/notifications/${ids[1]}/unarchive`],
      ['/notifications/read-all'],
      ['/notifications/bulk', { action: 'archive', category: 'billing' }],
    ];
    for (const [path, body] of changes) {
      expect((await api('POST', path, token, body)).status, path).toBe(200);
      const answered = await counts();
      expect(answered, path).toEqual(await countsListed(token));
      expect((await api('GET', '/notifications/unread-count', token)).body.count, path).toBe(answered.unread);
    }
    expect(await counts()).toEqual({
      unseen: 1,
      unread: 0,
      total: 3,
      categories: { social: { unseen: 1, unread: 0, total: 2 } },
    });
  });

  it('counts categories named like the properties of every JavaScript object, and the service keeps working', async () => {
    const ivy = user('ivy');
    const token = await local.runtime.mintUserToken(ivy);
    await notify(ivy, token, ['P', '__proto__'], ['C', 'constructor'], ['Q', 'prototype']);
    const answer = await api('GET', '/notifications/counts', token);
    expect(answer.status).toBe(200);
    // Built from entries: a literal `__proto__` key would set the expected object's prototype instead.
    const one = { unseen: 1, unread: 1, total: 1 };
    expect(Object.entries(answer.body.categories).sort()).toEqual(
      [
        ['__proto__', one],
        ['constructor', one],
        ['prototype', one],
      ].sort(),
    );
    // Counting them left every object as it was: validation still sees no unknown field, for anyone.
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect((await api('GET', '/notifications?limit=1', token)).status).toBe(200);
    expect((await api('GET', '/notifications?category=__proto__', token)).body.items).toHaveLength(1);
  });
});

describe('query parameters', () => {
  it('refuses a parameter given more than once, saying so, rather than its values joined by a comma', async () => {
    const token = await local.runtime.mintUserToken(user('quinn'));
    for (const query of ['category=a.b&category=a.b', 'state=unread&state=read', 'limit=5&tag=x&limit=5']) {
      const answer = await api('GET', `/notifications?${query}`, token);
      expect(answer.status, query).toBe(400);
      expect(answer.body.code).toBe('validation');
      expect(answer.body.details, query).toEqual([
        { field: query.split('=')[0], issue: 'given more than once' },
      ]);
    }
  });
});

describe('bulk changes of one category', () => {
  it('marks seen, marks read or archives only that category’s items, older than `before` when given', async () => {
    const dan = user('dan');
    const token = await local.runtime.mintUserToken(dan);
    const client = await TestClient.open(`${local.runtime.wsUrl}?token=${token}`);
    await client.nextOfType('session');
    const ids = await notify(dan, token, ...FIVE);
    const bulk = (body: Record<string, unknown>) => api('POST', '/notifications/bulk', token, body);

    expect((await bulk({ action: 'mark_seen', category: 'social', before: ids[4] })).body).toEqual({
      updated: 2,
    });
    expect(titles(await feed(token, 'state=unseen'))).toEqual(['s4', 'n3', 'b1']);
    expect(
      await client.next((frame) => frame.type === 'notification.bulk' && frame.change === 'seen'),
    ).toMatchObject({ ids: null, before: ids[4], category: 'social', updated: 2 });

    expect((await bulk({ action: 'mark_read', category: 'social' })).body).toEqual({ updated: 3 });
    expect(titles(await feed(token, 'state=unread'))).toEqual(['n3', 'b1']);
    expect((await api('GET', '/notifications/unread-count', token)).body).toEqual({ count: 2 });
    expect((await bulk({ action: 'mark_read', category: 'social' })).body).toEqual({ updated: 0 });

    expect((await bulk({ action: 'archive', category: 'billing' })).body).toEqual({ updated: 1 });
    expect(titles(await feed(token))).toEqual(['s4', 'n3', 's2', 's0']);
    expect(titles(await feed(token, 'state=archived'))).toEqual(['b1']);
    expect(
      await client.next((frame) => frame.type === 'notification.bulk' && frame.change === 'archived'),
    ).toMatchObject({ before: null, category: 'billing', updated: 1 });

    for (const body of [
      { action: 'archive', category: 'Social' },
      { action: 'archive', category: '' },
    ]) {
      const refused = await bulk(body);
      expect(refused.status).toBe(400);
      expect(refused.body.details[0].field).toBe('category');
    }
    client.assertDocumentedFrames();
    await client.close();
  });

  it('leaves alone what arrives during the call, in the category or not', async () => {
    const eve = user('eve');
    const token = await local.runtime.mintUserToken(eve);
    await notify(eve, token, ...Array.from({ length: 12 }, (_, index) => [`p${index}`, 'social'] as const));
    const racing = Array.from({ length: 6 }, (_, index) =>
      api('POST', '/notifications', local.service, {
        event_type: 'inbox.test',
        title: `during-${index}`,
        recipient_ids: [eve],
        category: 'social',
      }),
    );
    const { body } = await api('POST', '/notifications/bulk', token, {
      action: 'archive',
      category: 'social',
    });
    await Promise.all(racing);
    await notify(eve, token, ['after', 'social']);
    const all = await feed(token, 'state=all');
    const archived = all.filter((item) => item.archived_at !== null);
    expect(archived.filter((item) => item.title.startsWith('p'))).toHaveLength(12);
    expect(body.updated).toBe(archived.length);
    expect(all.find((item) => item.title === 'after')?.archived_at).toBeNull();
  });
});

describe('preferences by category', () => {
  it('mutes a category on a channel with a category rule; off wins over an event-type rule that turns it on', async () => {
    const fox = user('fox');
    const token = await local.runtime.mintUserToken(fox);
    const put = await api('PUT', '/preferences', token, {
      rules: [
        { category: 'social.*', channels: { in_app: false } },
        { event_type: 'inbox.test', channels: { in_app: true } },
        { category: 'billing', channels: { toast: false } },
      ],
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const read = await api('GET', '/preferences', token);
    expect(read.body.rules).toEqual([
      { category: 'social.*', channels: { in_app: false } },
      { event_type: 'inbox.test', channels: { in_app: true } },
      { category: 'billing', channels: { toast: false } },
    ]);
    await notify(
      fox,
      token,
      ['muted', 'social.friends'],
      ['kept', 'billing'],
      ['plain'],
      ['other', 'socialite'],
    );
    expect(titles(await feed(token, 'state=all'))).toEqual(['other', 'plain', 'kept']);
  });

  it('refuses a rule naming both or neither, a malformed category pattern, and a mute of a required category', async () => {
    const gus = user('gus');
    const token = await local.runtime.mintUserToken(gus);
    const cases: [unknown, string][] = [
      [{ event_type: 'a', category: 'a', channels: {} }, 'rules[0].category'],
      [{ channels: { in_app: false } }, 'rules[0].event_type'],
      [{ category: 'Social', channels: {} }, 'rules[0].category'],
      [{ category: 'social.', channels: {} }, 'rules[0].category'],
    ];
    for (const [rule, field] of cases) {
      const answer = await api('PUT', '/preferences', token, { rules: [rule] });
      expect(answer.status, JSON.stringify(rule)).toBe(400);
      expect(answer.body.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    const twice = await api('PUT', '/preferences', token, {
      rules: [
        { category: 'x', channels: {} },
        { event_type: 'x', channels: {} },
        { category: 'x', channels: {} },
      ],
    });
    expect(twice.body.details).toEqual([{ field: 'rules[2].category', issue: 'duplicate pattern' }]);

    const defaults = await api('PUT', '/preferences/defaults', local.service, {
      rules: [{ category: 'security.*', required: true }],
    });
    expect(defaults.status, JSON.stringify(defaults.body)).toBe(200);
    const refused = await api('PUT', '/preferences', token, {
      rules: [{ category: 'security.login', channels: { in_app: false } }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details).toEqual([
      { field: 'rules[0].category', issue: 'security.* is required and cannot be turned off' },
    ]);
    // A required category reaches the user whatever its own rules say.
    expect(
      (await api('PUT', '/preferences', token, { rules: [{ category: '*', channels: { in_app: false } }] }))
        .status,
    ).toBe(200);
    await notify(gus, token, ['alert', 'security.login'], ['chatter', 'social']);
    expect(titles(await feed(token, 'state=all'))).toEqual(['alert']);
    await api('PUT', '/preferences/defaults', local.service, { rules: [] });
  });
});
