/**
 * The client SDK's REST half (client/src) against the local runtime, through a fault-injecting HTTP proxy:
 * typed errors, cursor iteration, which requests are retried and how, and the inbox's optimistic reads.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type InboxSnapshot, InboxStore, NotifyApi, NotifyError } from '../../client/src/index';
import { NotifyService } from '../../client/src/service';
import { eventually } from '../support/api';
import { rejection } from '../support/await';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let proxy: FaultProxy;
let serviceToken: string;

beforeAll(async () => {
  runtime = await startTestRuntime();
  proxy = await startFaultProxy(runtime.httpUrl);
  serviceToken = await runtime.mintServiceToken('tests', ['notifications:write', 'broadcast:write']);
}, 90_000);
afterAll(async () => {
  await proxy?.stop();
  await runtime?.stop();
});
beforeEach(() => {
  proxy.requests.length = 0;
});

const FAST_RETRY = { initialMs: 10, maxMs: 50 };
const UNAVAILABLE = { code: 'unavailable', message: 'try again', request_id: 'from-the-proxy' };

/** The user's REST client through the proxy. */
const apiFor = (userId: string) =>
  new NotifyApi({
    apiUrl: proxy.url,
    getToken: () => runtime.mintUserToken(userId),
    retry: FAST_RETRY,
  });

const service = () => new NotifyService({ apiUrl: proxy.url, token: serviceToken, retry: FAST_RETRY });

const notify = (userId: string, title: string, extra: Record<string, unknown> = {}) =>
  new NotifyService({ apiUrl: runtime.httpUrl, token: serviceToken }).createNotification({
    event_type: 'tests.rest',
    title,
    recipient_ids: [userId],
    ...extra,
  });

/** Waits until the fan-out worker has written `count` feed items for the user. */
const feedHas = (api: NotifyApi, count: number) =>
  eventually(
    () => api.getUnreadCount(),
    (unread) => unread >= count,
  );

describe('errors', () => {
  it('are NotifyError objects with the service’s code, status, request id and details', async () => {
    const api = new NotifyApi({ apiUrl: runtime.httpUrl, getToken: () => runtime.mintUserToken('rest-eve') });
    const missing = await rejection(api.markRead('01a204c7-0000-7000-8000-000000000000'));
    expect(missing).toBeInstanceOf(NotifyError);
    expect(missing).toMatchObject({ code: 'not_found', status: 404 });
    expect((missing as NotifyError).requestId).toMatch(/^[0-9a-f-]{36}$/);

    const invalid = (await rejection(
      api.createNotification({ event_type: 'tests.rest', title: '', recipient_ids: ['rest-eve'] }),
    )) as NotifyError;
    expect(invalid).toMatchObject({ code: 'validation', status: 400 });
    expect(invalid.details?.map((detail) => detail.field)).toContain('title');

    const foreign = await rejection(
      api.createNotification({ event_type: 'tests.rest', title: 'hi', recipient_ids: ['someone-else'] }),
    );
    expect(foreign).toMatchObject({ code: 'forbidden', status: 403 });
  });

  it('retry a refused token once with a fresh one from the provider', async () => {
    const calls: boolean[] = [];
    const api = new NotifyApi({
      apiUrl: proxy.url,
      getToken: ({ forceRefresh }) => {
        calls.push(forceRefresh);
        return calls.length === 1 ? 'stale-token' : runtime.mintUserToken('rest-ray');
      },
    });
    expect(await api.getUnreadCount()).toBe(0);
    expect(calls).toEqual([false, true]);
    expect(proxy.requests.map((request) => request.path)).toEqual([
      '/notifications/unread-count',
      '/notifications/unread-count',
    ]);
  });
});

describe('feed', () => {
  it('iterates every item over the cursors, newest first', async () => {
    const api = apiFor('rest-fay');
    for (let n = 1; n <= 5; n++) await notify('rest-fay', `item ${n}`);
    await feedHas(api, 5);
    proxy.requests.length = 0;
    const titles: string[] = [];
    for await (const item of api.feed({ limit: 2 })) titles.push(item.title);
    // Newest delivered first (the fan-out of concurrent creates may finish in any order): the one-page order.
    const onePage = await api.getFeed({ limit: 100 });
    expect(titles).toEqual(onePage.items.map((item) => item.title));
    expect([...titles].sort()).toEqual(['item 1', 'item 2', 'item 3', 'item 4', 'item 5']);
    expect(proxy.requests.slice(0, 3).map((request) => request.path)).toEqual([
      '/notifications?limit=2',
      expect.stringMatching(/^\/notifications\?limit=2&cursor=/),
      expect.stringMatching(/^\/notifications\?limit=2&cursor=/),
    ]);
  });
});

describe('retries', () => {
  it('repeat a GET after a 503, waiting for its Retry-After', async () => {
    const api = apiFor('rest-gus');
    proxy.failNext((request) => request.method === 'GET', {
      status: 503,
      headers: { 'retry-after': '1' },
      body: UNAVAILABLE,
    });
    const started = Date.now();
    expect(await api.getUnreadCount()).toBe(0);
    expect(proxy.requests).toHaveLength(2);
    // Retry-After is a lower bound the client must respect (not a timing of the service).
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('give up after the configured tries and throw the last error', async () => {
    const api = apiFor('rest-gus');
    for (let n = 0; n < 3; n++) proxy.failNext(() => true, { status: 502, body: UNAVAILABLE });
    const error = await rejection(api.getUnreadCount());
    expect(error).toMatchObject({ code: 'unavailable', status: 502, requestId: 'from-the-proxy' });
    expect(proxy.requests).toHaveLength(3);
  });

  it('make a create safe: the answer is lost, the retry carries the same Idempotency-Key, one notification results', async () => {
    const reader = apiFor('rest-ida');
    proxy.failNext((request) => request.path === '/notifications', 'lose-answer');
    const created = await service().createNotification({
      event_type: 'tests.rest',
      title: 'exactly once',
      recipient_ids: ['rest-ida'],
    });
    const posts = proxy.requests.filter((request) => request.path === '/notifications');
    expect(posts).toHaveLength(2);
    expect(posts[0]?.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(posts[1]?.idempotencyKey).toBe(posts[0]?.idempotencyKey);
    await feedHas(reader, 1);
    const items = [];
    for await (const item of reader.feed()) items.push(item);
    expect(items.map((item) => item.notification_id)).toEqual([created.id]);
    expect(await reader.getUnreadCount()).toBe(1);
  });

  it('never repeat a request that is not idempotent when its answer is lost, but do after a 429', async () => {
    const lost = await rejection(
      (() => {
        proxy.failNext((request) => request.path === '/broadcast', 'lose-answer');
        return service().broadcast({ channel: 'room:rest-nobody', payload: { type: 'ping' } });
      })(),
    );
    expect(lost).toMatchObject({ code: 'network', status: 0 });
    expect(proxy.requests).toHaveLength(1);

    proxy.requests.length = 0;
    proxy.failNext((request) => request.path === '/broadcast', {
      status: 429,
      headers: { 'retry-after': '0' },
      body: { code: 'rate_limited', message: 'slow down', request_id: 'x' },
    });
    expect(await service().broadcast({ channel: 'room:rest-nobody', payload: { type: 'ping' } })).toEqual({
      recipients: 0,
    });
    expect(proxy.requests).toHaveLength(2);
  });
});

describe('inbox store', () => {
  /** The snapshots a listener gets: the current one at once (Svelte's store contract), then one per change. */
  const record = (inbox: InboxStore) => {
    const snapshots: InboxSnapshot[] = [];
    inbox.subscribe((snapshot) => snapshots.push(snapshot));
    return snapshots;
  };

  it('marks read at once and keeps it when the service confirms', async () => {
    const api = apiFor('rest-kim');
    await notify('rest-kim', 'first');
    await notify('rest-kim', 'second');
    await feedHas(api, 2);
    const inbox = new InboxStore({ api });
    await inbox.load();
    expect(inbox.getSnapshot()).toMatchObject({ unreadCount: 2, status: 'ready', hasMore: false });
    // useSyncExternalStore needs the same object until something changes.
    expect(inbox.getSnapshot()).toBe(inbox.getSnapshot());
    const snapshots = record(inbox);
    const target = inbox.getSnapshot().items[1]?.id as string;
    const marking = inbox.markRead(target);
    expect(inbox.getSnapshot().unreadCount).toBe(1);
    await marking;
    expect(snapshots[0]?.items[1]?.read_at).toBeNull();
    expect(snapshots[1]?.items[1]?.read_at).not.toBeNull();
    expect(inbox.getSnapshot()).toMatchObject({ unreadCount: 1 });
    expect(await api.getUnreadCount()).toBe(1);
    await inbox.markAllRead();
    expect(inbox.getSnapshot().unreadCount).toBe(0);
    expect(inbox.getSnapshot().items.every((item) => item.read_at !== null)).toBe(true);
    expect(await api.getUnreadCount()).toBe(0);
  });

  it('marks an item that is not loaded (a toast’s id) and takes the count from the service', async () => {
    const api = apiFor('rest-ned');
    await notify('rest-ned', 'older');
    await feedHas(api, 1);
    await notify('rest-ned', 'newer');
    await feedHas(api, 2);
    const inbox = new InboxStore({ api, pageSize: 1 });
    await inbox.load();
    expect(inbox.getSnapshot()).toMatchObject({ unreadCount: 2, hasMore: true, items: [{ title: 'newer' }] });
    const older = (await api.getFeed({ limit: 2 })).items.find((item) => item.title === 'older');
    await inbox.markRead(older?.id as string);
    const settled = await eventually(
      () => inbox.getSnapshot(),
      (snapshot) => snapshot.unreadCount === 1,
    );
    expect(settled.items).toMatchObject([{ title: 'newer', read_at: null }]);
  });

  it('rolls an optimistic read back when the service refuses it (the item expired while shown)', async () => {
    const api = apiFor('rest-lou');
    await notify('rest-lou', 'short-lived', { expires_at: new Date(Date.now() + 1500).toISOString() });
    await feedHas(api, 1);
    const inbox = new InboxStore({ api });
    await inbox.load();
    expect(inbox.getSnapshot().unreadCount).toBe(1);
    const snapshots = record(inbox);
    const id = inbox.getSnapshot().items[0]?.id as string;
    await eventually(
      () => api.getUnreadCount(),
      (count) => count === 0,
    );
    const error = await rejection(inbox.markRead(id));
    expect(error).toMatchObject({ code: 'not_found', status: 404 });
    expect(snapshots.map((snapshot) => [snapshot.items[0]?.read_at !== null, snapshot.unreadCount])).toEqual([
      [false, 1],
      [true, 0],
      [false, 1],
    ]);
  });

  it('says why a read failed that never reached the service, and rolls it back too', async () => {
    const api = apiFor('rest-lou2');
    await notify('rest-lou2', 'keep me');
    await feedHas(api, 1);
    const inbox = new InboxStore({ api });
    await inbox.load();
    const id = inbox.getSnapshot().items[0]?.id as string;
    for (let n = 0; n < 3; n++) proxy.failNext((request) => request.path.endsWith('/read'), 'reset');
    expect(await rejection(inbox.markRead(id))).toMatchObject({ code: 'network', status: 0 });
    expect(inbox.getSnapshot()).toMatchObject({ unreadCount: 1, items: [{ id, read_at: null }] });
    expect(await api.getUnreadCount()).toBe(1);
  });

  it('rolls an optimistic read-all back when the service refuses it', async () => {
    const api = apiFor('rest-max');
    await notify('rest-max', 'one');
    await notify('rest-max', 'two');
    await feedHas(api, 2);
    const inbox = new InboxStore({ api });
    await inbox.load();
    const snapshots = record(inbox);
    proxy.failNext((request) => request.path === '/notifications/read-all', {
      status: 403,
      body: { code: 'forbidden', message: 'Not allowed', request_id: 'r-2' },
    });
    expect(await rejection(inbox.markAllRead())).toMatchObject({ code: 'forbidden' });
    expect(snapshots.map((snapshot) => snapshot.unreadCount)).toEqual([2, 0, 2]);
    expect(inbox.getSnapshot().items.map((item) => item.read_at)).toEqual([null, null]);
  });
});

describe('topics from a service', () => {
  it('creates, lists a page at a time with subscriber counts, and deletes a topic', async () => {
    const notifyService = service();
    const name = `sdk-${Date.now()}`;
    expect(await notifyService.createTopic({ name, description: 'From the SDK' })).toMatchObject({
      name,
      subscriber_count: 0,
    });
    await apiFor(`${name}-reader`).createSubscription(name);
    const listed = new Map<string, number>();
    let cursor: string | undefined;
    do {
      const page = await notifyService.listTopics({ limit: 1, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(1);
      for (const topic of page.items) listed.set(topic.name, topic.subscriber_count);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(listed.get(name)).toBe(1);
    expect(await notifyService.deleteTopic(name)).toEqual({ name, status: 'deleting' });
    expect(await rejection(apiFor(`${name}-reader`).getTopic(name))).toMatchObject({ code: 'not_found' });
  });
});
