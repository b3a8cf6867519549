/**
 * The client SDK's inbox store on two devices of one user (two SDK instances, each with its own real WebSocket
 * connection to the local runtime): a change made on one — read, read-all, seen, archive, snooze, and the
 * snooze's wake-up — shows on the other through the state frames, badge included.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { InboxSnapshot, Notify } from '../../client/src/index';
import { NotifyService } from '../../client/src/service';
import { eventually } from '../support/api';
import { sendTitled, startNotify } from '../support/client-sdk';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let service: NotifyService;
let run = 0;
const started: Notify[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
}, 90_000);
afterAll(() => runtime?.stop());
afterEach(() => {
  for (const notify of started.splice(0)) notify.stop();
});

/** One device: an SDK instance connected, its inbox loaded. */
const device = async (userId: string): Promise<Notify> => {
  const notify = await startNotify(runtime, userId);
  started.push(notify);
  await notify.inbox.load();
  return notify;
};

const send = (userId: string, ...titles: string[]) => sendTitled(service, userId, ...titles);

/** Waits until the device's inbox shows `expected` (titles, newest first, and the badge), then asserts it. */
const shows = async (notify: Notify, expected: { titles: string[]; unread: number }) => {
  const view = (snapshot: InboxSnapshot) => ({
    titles: snapshot.items.map((item) => item.title),
    unread: snapshot.unreadCount,
  });
  const snapshot = await eventually(
    () => notify.inbox.getSnapshot(),
    (current) => JSON.stringify(view(current)) === JSON.stringify(expected),
  );
  expect(view(snapshot)).toEqual(expected);
  return snapshot;
};

describe('the inbox on two devices', () => {
  it('clears the badge on the laptop when the phone reads, reads all, archives or snoozes', async () => {
    const userId = `sync-${run}`;
    await send(userId, 'a', 'b', 'c', 'd');
    const [phone, laptop] = [await device(userId), await device(userId)];
    await shows(laptop, { titles: ['d', 'c', 'b', 'a'], unread: 4 });

    const [d, c, b] = phone.inbox.getSnapshot().items.map((item) => item.id) as [string, string, string];
    await phone.inbox.markRead(d);
    await shows(laptop, { titles: ['d', 'c', 'b', 'a'], unread: 3 });
    expect(laptop.inbox.getSnapshot().items[0]?.read_at).not.toBeNull();

    await phone.inbox.archive(c);
    await shows(phone, { titles: ['d', 'b', 'a'], unread: 2 });
    await shows(laptop, { titles: ['d', 'b', 'a'], unread: 2 });

    await phone.inbox.markSeen([b]);
    const seen = await eventually(
      () => laptop.inbox.getSnapshot().items.find((item) => item.id === b)?.seen_at,
      (value) => typeof value === 'string',
    );
    expect(seen).toEqual(expect.any(String));

    await phone.inbox.markAllRead();
    await shows(laptop, { titles: ['d', 'b', 'a'], unread: 0 });

    // Unarchived on the laptop: back on the phone, in its place and unread.
    await laptop.inbox.unarchive(c);
    await shows(phone, { titles: ['d', 'c', 'b', 'a'], unread: 1 });

    // Snoozed on the phone: gone from both; at its time it wakes up on both, unread again.
    await phone.inbox.snooze(b, new Date(Date.now() + 3000));
    await shows(laptop, { titles: ['d', 'c', 'a'], unread: 1 });
    const woken = await eventually(
      () => laptop.inbox.getSnapshot(),
      (snapshot) => snapshot.items.length === 4,
      40_000,
    );
    expect(woken.items.map((item) => item.title)).toEqual(['d', 'c', 'b', 'a']);
    await shows(laptop, { titles: ['d', 'c', 'b', 'a'], unread: 2 });
    await shows(phone, { titles: ['d', 'c', 'b', 'a'], unread: 2 });
    expect(phone.inbox.getSnapshot().items.find((item) => item.id === b)).toMatchObject({
      read_at: null,
      seen_at: null,
      snoozed_until: null,
    });

    // A bulk archive of the older items on the laptop.
    await laptop.api.bulkChange({ action: 'archive', before: c });
    await shows(phone, { titles: ['d', 'c'], unread: 1 });
  }, 120_000);

  it('shows an archive again when the service refuses it', async () => {
    const userId = `sync-refused-${run}`;
    await send(userId, 'kept');
    const phone = await device(userId);
    await shows(phone, { titles: ['kept'], unread: 1 });
    const archiving = phone.inbox.archive('01a204c7-0000-7000-8000-000000000000');
    await expect(archiving).rejects.toMatchObject({ code: 'not_found' });
    await shows(phone, { titles: ['kept'], unread: 1 });
    const id = phone.inbox.getSnapshot().items[0]?.id as string;
    const pending = phone.inbox.archive(id);
    // Hidden at once, before the service answers.
    expect(phone.inbox.getSnapshot()).toMatchObject({ items: [], unreadCount: 0 });
    await pending;
    await shows(phone, { titles: [], unread: 0 });
  }, 60_000);
});
