/**
 * The client SDK's inbox store against a live local service: after any resume, replay or burst, once it has
 * settled, the store lists exactly the feed's newest items (no gap, nothing twice), says whether older ones
 * exist, and `loadMore()` brings the rest; its badge is the unread count. Property tests (fast-check) pick the
 * sequences: bursts while connected and while away (resumed with replay), drops by the server, `loadMore()`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxSnapshot, Notify, Receiver } from '../../client/src/index';
import { NotifyService } from '../../client/src/service';
import { eventually } from '../support/api';
import { dropConnections, startNotify } from '../support/client-sdk';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

/** The SDK's default page: a burst of more than this while away is what used to leave a gap. */
const PAGE = 20;

let runtime: Runtime;
let service: NotifyService;
let run = 0;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = new NotifyService({
    apiUrl: runtime.httpUrl,
    token: await runtime.mintServiceToken('tests', ['notifications:write']),
  });
}, 90_000);
afterAll(() => runtime?.stop());

const started: Notify[] = [];
const startInbox = async (userId: string): Promise<Notify> => {
  const notify = await startNotify(runtime, userId);
  started.push(notify);
  return notify;
};

/** `count` notifications to the user, a few at a time (each its own feed item). */
const send = async (userId: string, count: number, label: string) => {
  for (let start = 0; start < count; start += 5) {
    await Promise.all(
      Array.from({ length: Math.min(5, count - start) }, (_, index) =>
        service.createNotification({
          event_type: 'tests.inbox',
          title: `${label} ${start + index}`,
          recipient_ids: [userId],
          channels: ['in_app', 'realtime'],
        }),
      ),
    );
  }
};

const feedOf = async (notify: Notify): Promise<Receiver[]> => {
  const items: Receiver[] = [];
  for await (const item of notify.api.feed({ limit: 100 })) items.push(item);
  return items;
};

const ids = (items: readonly { readonly id: string }[]) => items.map((item) => item.id);

/** The store lists the feed's newest items with no gap, says whether more exist, and shows the unread count. */
const matches = (snapshot: InboxSnapshot, feed: readonly Receiver[], unread: number) =>
  snapshot.status === 'ready' &&
  JSON.stringify(ids(snapshot.items)) === JSON.stringify(ids(feed.slice(0, snapshot.items.length))) &&
  snapshot.hasMore === snapshot.items.length < feed.length &&
  snapshot.unreadCount === unread;

/** Waits for the store to settle on what the service holds, then asserts it (the assertion says what differs). */
const expectStoreEqualsFeed = async (notify: Notify, { loadAll = false } = {}) => {
  const feed = await feedOf(notify);
  const unread = await notify.api.getUnreadCount();
  const snapshot = await eventually(
    () => notify.inbox.getSnapshot(),
    (current) => matches(current, feed, unread),
  );
  expect({
    items: ids(snapshot.items),
    hasMore: snapshot.hasMore,
    unreadCount: snapshot.unreadCount,
  }).toEqual({
    items: ids(feed.slice(0, snapshot.items.length)),
    hasMore: snapshot.items.length < feed.length,
    unreadCount: unread,
  });
  if (!loadAll) return;
  // Whatever is not shown yet, loadMore brings, in order and once.
  while (notify.inbox.getSnapshot().hasMore) await notify.inbox.loadMore();
  expect(ids(notify.inbox.getSnapshot().items)).toEqual(ids(feed));
};

/** Away (the SDK disconnected) while a burst arrives, then back within the session's 120 s: resumed, replayed. */
const awayDuring = async (notify: Notify, burst: () => Promise<void>) => {
  notify.realtime.disconnect();
  await burst();
  notify.realtime.connect();
  await eventually(
    () => notify.realtime.state,
    (state) => state === 'connected',
  );
};

describe('the SDK inbox after a resume', () => {
  it(`holds every item when more than a page (${PAGE}) arrived while away`, async () => {
    const userId = `inbox-gap-${run}`;
    const notify = await startInbox(userId);
    try {
      await send(userId, 3, 'before');
      await expectStoreEqualsFeed(notify);
      const resumed = new Promise((resolve) => notify.realtime.on('session', resolve));
      await awayDuring(notify, () => send(userId, 25, 'away'));
      expect(await resumed).toMatchObject({ resumed: true, replayed: 25 });
      await expectStoreEqualsFeed(notify, { loadAll: true });
      expect(notify.inbox.getSnapshot().unreadCount).toBe(28);
    } finally {
      notify.stop();
    }
  }, 120_000);

  type Step =
    | { readonly kind: 'burst'; readonly count: number }
    | { readonly kind: 'away'; readonly count: number }
    | { readonly kind: 'dropped'; readonly count: number }
    | { readonly kind: 'loadMore' };

  const step: fc.Arbitrary<Step> = fc.oneof(
    fc.record({ kind: fc.constant('burst' as const), count: fc.integer({ min: 1, max: 30 }) }),
    fc.record({ kind: fc.constant('away' as const), count: fc.integer({ min: 0, max: 45 }) }),
    fc.record({ kind: fc.constant('dropped' as const), count: fc.integer({ min: 0, max: 25 }) }),
    fc.record({ kind: fc.constant('loadMore' as const) }),
  );

  it(
    'equals the feed after any sequence of bursts, resumes with replay, server drops and loadMore',
    async () => {
      let property = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 25 }),
          fc.array(step, { minLength: 1, maxLength: 3 }),
          async (initial, steps) => {
            const userId = `inbox-prop-${run}-${property++}`;
            const notify = await startInbox(userId);
            try {
              await send(userId, initial, 'initial');
              await expectStoreEqualsFeed(notify);
              for (const [index, current] of steps.entries()) {
                const label = `step ${index}`;
                if (current.kind === 'burst') await send(userId, current.count, label);
                else if (current.kind === 'away')
                  await awayDuring(notify, () => send(userId, current.count, label));
                else if (current.kind === 'dropped') {
                  // The server ends the connection (the sweeper, a deploy): the SDK reconnects and resumes by itself.
                  await dropConnections(userId);
                  await send(userId, current.count, label);
                } else await notify.inbox.loadMore();
                await expectStoreEqualsFeed(notify);
              }
              await expectStoreEqualsFeed(notify, { loadAll: true });
            } finally {
              notify.stop();
            }
          },
        ),
        { numRuns: LONG ? 20 : 3, endOnFailure: true },
      );
    },
    LONG ? 1_800_000 : 300_000,
  );
});
