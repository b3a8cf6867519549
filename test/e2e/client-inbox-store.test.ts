/**
 * The client SDK's inbox store against the local runtime (real HTTP and WebSocket connections): an item that
 * comes back into the feed below the first page shows in its place; changes show at once and are undone when
 * the service refuses (a real error answer: an outage injected by a proxy in front of the service, or a route
 * the service does not have); tabs; counts; the headless contract React, Vue and Svelte bind to.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InboxSnapshot, Notify } from '../../client/src/index';
import { NotifyService } from '../../client/src/service';
import { eventually } from '../support/api';
import { sendTitled, sendWithExtras, startNotify } from '../support/client-sdk';
import { type FaultProxy, startFaultProxy } from '../support/fault-proxy';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let proxy: FaultProxy;
let service: NotifyService;
let run = 0;
const started: Notify[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime();
  proxy = await startFaultProxy(runtime.httpUrl);
  run = Date.now();
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
}, 90_000);
afterAll(async () => {
  await proxy?.stop();
  await runtime?.stop();
});
afterEach(() => {
  for (const notify of started.splice(0)) notify.stop();
});

/** One device of the user, its REST calls through the fault proxy (no retries), its inbox loaded. */
const device = async (userId: string, pageSize = 20): Promise<Notify> => {
  const notify = await startNotify(runtime, userId, { apiUrl: proxy.url, retry: { attempts: 1 }, pageSize });
  started.push(notify);
  await notify.inbox.load();
  return notify;
};

const send = (userId: string, ...titles: string[]) => sendTitled(service, userId, ...titles);

const view = (snapshot: InboxSnapshot) => ({
  titles: snapshot.items.map((item) => item.title),
  unread: snapshot.unreadCount,
});

/** Waits until the inbox shows `expected` (titles newest first, and the badge), then asserts it. */
const shows = async (notify: Notify, expected: { titles: string[]; unread: number }) => {
  const snapshot = await eventually(
    () => notify.inbox.getSnapshot(),
    (current) => JSON.stringify(view(current)) === JSON.stringify(expected),
  );
  expect(view(snapshot)).toEqual(expected);
  return snapshot;
};

const idOf = (notify: Notify, title: string) =>
  notify.inbox.getSnapshot().items.find((item) => item.title === title)?.id as string;

const OUTAGE = { status: 500, body: { code: 'internal', message: 'injected outage', request_id: 'r-1' } };
const isChange = (method: string, suffix: string) => (request: { method: string; path: string }) =>
  request.method === method && request.path.split('?')[0]?.endsWith(suffix) === true;

describe('items that come back below the first page', () => {
  it('shows an item unarchived or woken on another device in its place, though older than the first page', async () => {
    const userId = `store-back-${run}`;
    const titles = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    await send(userId, ...titles);
    const [laptop, phone] = [await device(userId, 3), await device(userId, 3)];
    await laptop.inbox.loadMore();
    await shows(laptop, { titles: ['h', 'g', 'f', 'e', 'd', 'c'], unread: 8 });

    // Archived and unarchived on the phone (an item of the second page): gone, then back in its place.
    const d = idOf(laptop, 'd');
    await phone.api.archive(d);
    await shows(laptop, { titles: ['h', 'g', 'f', 'e', 'c'], unread: 7 });
    await phone.api.unarchive(d);
    await shows(laptop, { titles: ['h', 'g', 'f', 'e', 'd', 'c'], unread: 8 });

    // Snoozed on the phone: at its time it wakes up, unread, in its place on the laptop.
    const e = idOf(laptop, 'e');
    await phone.api.markRead(e);
    await phone.api.snooze(e, new Date(Date.now() + 3000));
    await shows(laptop, { titles: ['h', 'g', 'f', 'd', 'c'], unread: 7 });
    await eventually(
      () => laptop.inbox.getSnapshot(),
      (snapshot) => snapshot.items.length === 6,
      40_000,
    );
    await shows(laptop, { titles: ['h', 'g', 'f', 'e', 'd', 'c'], unread: 8 });
    expect(laptop.inbox.getSnapshot().hasMore).toBe(true);
    await laptop.inbox.loadMore();
    await shows(laptop, { titles: ['h', 'g', 'f', 'e', 'd', 'c', 'b', 'a'], unread: 8 });
  }, 120_000);
});

describe('optimistic changes', () => {
  it('shows each change at once and undoes it when the service answers with an error', async () => {
    const userId = `store-undo-${run}`;
    await send(userId, 'a', 'b', 'c');
    const phone = await device(userId);
    await shows(phone, { titles: ['c', 'b', 'a'], unread: 3 });
    const [c, b] = [idOf(phone, 'c'), idOf(phone, 'b')];
    const before = phone.inbox.getSnapshot();

    const refused = async (
      suffix: string,
      change: () => Promise<void>,
      during: (s: InboxSnapshot) => void,
    ) => {
      proxy.failNext(isChange('POST', suffix), OUTAGE);
      const pending = change();
      during(phone.inbox.getSnapshot());
      await expect(pending).rejects.toMatchObject({ code: 'internal', status: 500 });
      await shows(phone, view(before));
    };
    await refused(
      `${c}/read`,
      () => phone.inbox.markRead(c),
      (during) => expect(view(during)).toEqual({ titles: ['c', 'b', 'a'], unread: 2 }),
    );
    await refused(
      `${c}/archive`,
      () => phone.inbox.archive(c),
      (during) => expect(view(during)).toEqual({ titles: ['b', 'a'], unread: 2 }),
    );
    await refused(
      `${b}/snooze`,
      () => phone.inbox.snooze(b, new Date(Date.now() + 60_000)),
      (during) => expect(view(during)).toEqual({ titles: ['c', 'a'], unread: 2 }),
    );
    await refused(
      '/read-all',
      () => phone.inbox.markAllRead(),
      (during) => expect(view(during)).toEqual({ titles: ['c', 'b', 'a'], unread: 0 }),
    );
    await refused(
      '/bulk',
      () => phone.inbox.bulk({ action: 'archive', before: c }),
      (during) => expect(view(during)).toEqual({ titles: ['c'], unread: 1 }),
    );
    await refused(
      '/seen',
      () => phone.inbox.markSeen([b]),
      (during) => expect(during.items.find((item) => item.id === b)?.seen_at).toEqual(expect.any(String)),
    );
    expect(phone.inbox.getSnapshot().items.every((item) => item.seen_at === null)).toBe(true);

    // The same changes, answered: kept, and the service agrees.
    await phone.inbox.markRead(c);
    await phone.inbox.bulk({ action: 'archive', before: b });
    await shows(phone, { titles: ['c', 'b'], unread: 1 });
    expect(await phone.api.getUnreadCount()).toBe(1);
  }, 90_000);

  it('undoes a click the service refuses (400), and a change to another user’s item (404)', async () => {
    const userId = `store-click-${run}`;
    const otherId = `store-click-other-${run}`;
    await send(userId, 'mine');
    await send(otherId, 'theirs');
    const [phone, other] = [await device(userId), await device(otherId)];
    await shows(phone, { titles: ['mine'], unread: 1 });
    const mine = idOf(phone, 'mine');

    // A click the service refuses (a button the item does not have: 400) is shown at once, then undone.
    const clicking = phone.inbox.interact(mine, 'no-such-button');
    expect(phone.inbox.getSnapshot().items[0]).toMatchObject({ interacted_at: expect.any(String) });
    expect(phone.inbox.getSnapshot().unreadCount).toBe(0);
    await expect(clicking).rejects.toMatchObject({ status: 400 });
    expect(phone.inbox.getSnapshot().items[0]).toMatchObject({ interacted_at: null, read_at: null });
    expect(phone.inbox.getSnapshot().unreadCount).toBe(1);

    // Another user's item, in this store's list only by mistake: refused with 404 and shown again.
    const theirs = idOf(other, 'theirs');
    await expect(phone.inbox.archive(theirs)).rejects.toMatchObject({ code: 'not_found' });
    await expect(phone.inbox.unarchive(theirs)).rejects.toMatchObject({ code: 'not_found' });
    await shows(other, { titles: ['theirs'], unread: 1 });
  }, 60_000);
});

describe('tabs and counts', () => {
  it('lists a state per tab, moves items between tabs at once, and counts the default feed', async () => {
    const userId = `store-tabs-${run}`;
    await send(userId, 'a', 'b', 'c', 'd');
    const phone = await device(userId);
    await shows(phone, { titles: ['d', 'c', 'b', 'a'], unread: 4 });
    const [d, c, b] = [idOf(phone, 'd'), idOf(phone, 'c'), idOf(phone, 'b')];
    await phone.inbox.markRead(d);
    await phone.inbox.archive(c);
    await phone.inbox.markSeen([b]);

    await phone.inbox.setFilter({ state: 'unread' });
    expect(phone.inbox.getSnapshot()).toMatchObject({ filter: { state: 'unread' } });
    await shows(phone, { titles: ['b', 'a'], unread: 2 });
    await phone.inbox.setFilter({ state: 'archived' });
    await shows(phone, { titles: ['c'], unread: 2 });

    // Unarchived from the archived tab: it leaves the tab and counts as unread at once.
    const unarchiving = phone.inbox.unarchive(c);
    expect(view(phone.inbox.getSnapshot())).toEqual({ titles: [], unread: 3 });
    await unarchiving;
    await phone.inbox.setFilter({});
    await shows(phone, { titles: ['d', 'c', 'b', 'a'], unread: 3 });

    const { counts } = phone.inbox.getSnapshot();
    if (counts.unseen === null) {
      // A service without GET /notifications/counts: the unread count alone.
      expect(counts).toEqual({ unread: 3, unseen: null, total: null, categories: {} });
    } else {
      expect(counts).toMatchObject({ unread: 3, unseen: 3, total: 4 });
    }
    expect(counts.unread).toBe(await phone.api.getUnreadCount());
  }, 60_000);
});

describe('the headless contract', () => {
  it('gives frozen snapshots that change identity only on a change, to listeners called at once (Svelte) or not', async () => {
    const userId = `store-contract-${run}`;
    await send(userId, 'a');
    const phone = await device(userId);
    await shows(phone, { titles: ['a'], unread: 1 });
    const { inbox } = phone;

    // React's useSyncExternalStore: getSnapshot returns the same object while nothing changed.
    const first = inbox.getSnapshot();
    expect(inbox.getSnapshot()).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.items)).toBe(true);
    expect(Object.isFrozen(first.items[0])).toBe(true);
    await inbox.refresh();
    expect(inbox.getSnapshot()).toBe(first);

    // Svelte's store contract: the listener gets the value at once, then each new one; unsubscribe stops it.
    const received: InboxSnapshot[] = [];
    const unsubscribe = inbox.subscribe((snapshot) => received.push(snapshot));
    expect(received).toEqual([first]);
    const id = first.items[0]?.id as string;
    await inbox.markRead(id);
    expect(received.length).toBeGreaterThan(1);
    expect(received.at(-1)).toBe(inbox.getSnapshot());
    expect(new Set(received).size).toBe(received.length);
    expect(received.at(-1)?.items[0]?.read_at).toEqual(expect.any(String));
    unsubscribe();
    const count = received.length;
    await inbox.markAllSeen();
    expect(received.length).toBe(count);

    // A React-like binding: re-render only when the snapshot's identity changed.
    let renders = 0;
    let last = inbox.getSnapshot();
    const stop = inbox.subscribe(() => {
      const next = inbox.getSnapshot();
      if (next !== last) renders++;
      last = next;
    });
    await inbox.refresh();
    expect(renders).toBe(0);
    await send(userId, 'b');
    await shows(phone, { titles: ['b', 'a'], unread: 1 });
    expect(renders).toBeGreaterThan(0);
    stop();
  }, 60_000);
});

const sendWith = (userId: string, title: string, extra: Record<string, unknown>) =>
  sendWithExtras(service, userId, title, extra);

describe('categories, tags, links and buttons', () => {
  it('filters by category and tag, counts per category, and reads one category at once', async () => {
    const userId = `store-categories-${run}`;
    await sendWith(userId, 'invoice', { category: 'billing' });
    await sendWith(userId, 'mention', { category: 'social', tags: ['vip'] });
    await sendWith(userId, 'plain', {});
    const phone = await device(userId);
    await shows(phone, { titles: ['plain', 'mention', 'invoice'], unread: 3 });
    expect(phone.inbox.getSnapshot().items.map((item) => [item.category, item.tags])).toEqual([
      [null, []],
      ['social', ['vip']],
      ['billing', []],
    ]);
    const { counts } = phone.inbox.getSnapshot();
    expect(counts.categories).toMatchObject({ billing: { unread: 1 }, social: { unread: 1 } });

    await phone.inbox.setFilter({ category: 'billing' });
    await shows(phone, { titles: ['invoice'], unread: 3 });
    await phone.inbox.setFilter({ tag: 'vip' });
    await shows(phone, { titles: ['mention'], unread: 3 });
    await phone.inbox.setFilter({});
    await shows(phone, { titles: ['plain', 'mention', 'invoice'], unread: 3 });

    const reading = phone.inbox.bulk({ action: 'mark_read', category: 'social' });
    expect(phone.inbox.getSnapshot().items.map((item) => item.read_at !== null)).toEqual([
      false,
      true,
      false,
    ]);
    expect(phone.inbox.getSnapshot().unreadCount).toBe(2);
    await reading;
    await shows(phone, { titles: ['plain', 'mention', 'invoice'], unread: 2 });
    expect(await phone.api.getUnreadCount()).toBe(2);
  }, 60_000);

  it('counts categories named like the properties of every object, also in a change shown before its answer', async () => {
    const userId = `store-odd-categories-${run}`;
    await sendWith(userId, 'b', { category: 'billing' });
    await sendWith(userId, 'p', { category: '__proto__' });
    await sendWith(userId, 'c', { category: 'constructor' });
    const phone = await device(userId);
    await shows(phone, { titles: ['c', 'p', 'b'], unread: 3 });
    const unreadOf = () =>
      Object.entries(phone.inbox.getSnapshot().counts.categories)
        .map(([category, figures]) => [category, figures.unread])
        .sort();
    await eventually(unreadOf, (current) => current.length === 3);
    // Archived, their categories leave the counts; unarchived from the archived tab, each comes back at once.
    await phone.inbox.archive(idOf(phone, 'p'));
    await phone.inbox.archive(idOf(phone, 'c'));
    await eventually(unreadOf, (current) => current.length === 1);
    await phone.inbox.setFilter({ state: 'archived' });
    await shows(phone, { titles: ['c', 'p'], unread: 1 });
    const unarchiving = [phone.inbox.unarchive(idOf(phone, 'p')), phone.inbox.unarchive(idOf(phone, 'c'))];
    expect(unreadOf()).toEqual([
      ['__proto__', 1],
      ['billing', 1],
      ['constructor', 1],
    ]);
    await Promise.all(unarchiving);
    expect(Object.keys(Object.prototype)).toEqual([]);
  }, 60_000);

  it('records a button’s click once, shows it on the other device, and keeps the first click', async () => {
    const userId = `store-actions-${run}`;
    const actions = [
      { id: 'approve', label: 'Approve' },
      { id: 'open', label: 'Open', url: 'https://example.com/requests/7' },
    ];
    await sendWith(userId, 'request', { url: 'https://example.com/requests/7', actions });
    const [phone, laptop] = [await device(userId), await device(userId)];
    await shows(laptop, { titles: ['request'], unread: 1 });
    const item = phone.inbox.getSnapshot().items[0];
    expect(item).toMatchObject({ url: 'https://example.com/requests/7', actions });
    const id = item?.id as string;

    const clicking = phone.inbox.interact(id, 'approve');
    expect(phone.inbox.getSnapshot().items[0]).toMatchObject({ interacted_action: 'approve' });
    expect(phone.inbox.getSnapshot().unreadCount).toBe(0);
    await clicking;
    const clicked = await eventually(
      () => laptop.inbox.getSnapshot().items[0],
      (shown) => shown?.interacted_action === 'approve',
    );
    expect(clicked).toMatchObject({ interacted_at: expect.any(String), read_at: expect.any(String) });
    expect(laptop.inbox.getSnapshot().unreadCount).toBe(0);

    // A second click (another button) changes nothing: the first is kept, here and on the service.
    await laptop.inbox.interact(id, 'open');
    await laptop.inbox.refresh();
    expect(laptop.inbox.getSnapshot().items[0]).toMatchObject({ interacted_action: 'approve' });
  }, 60_000);
});
