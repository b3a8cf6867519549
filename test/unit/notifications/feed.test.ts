import { BatchWriteCommand, DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { ServiceError, toServiceError } from '../../../lambdas/core/errors';
import { newId } from '../../../lambdas/core/ids';
import { bulkChange } from '../../../lambdas/domain/notifications/bulk';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import {
  type FeedItem,
  feedCounts,
  feedState,
  listFeed,
  MAX_READ_ALL_MARKS,
  readAll,
  unreadCount,
} from '../../../lambdas/domain/notifications/feed';
import type { FeedStateFilter } from '../../../lambdas/domain/notifications/feed-query';
import {
  applyTransition,
  archiveItem,
  markItemsSeen,
  readItem as markRead,
  snoozeUntil,
  unarchiveItem,
} from '../../../lambdas/domain/notifications/item-states';
import {
  type NotificationRecord,
  type ReceiverRecord,
  receiverIdFor,
} from '../../../lambdas/domain/notifications/model';
import { receiverCount, useDynamoDbLocal, useDynamoDbOutage } from '../../support/dynamodb';
import { countsOf, countsOfListed } from '../../support/feed-counts';
import { storeNotification } from '../../support/feed-records';
import { handlingOf } from '../../support/queues';

// The local runtime's stand-in for the stack's cursor key secret (lambdas/core/cursor-mac.ts).
process.env.NOTIFY_CURSOR_KEY ??= 'unit-test-cursor-key-0123456789abcdef';

useDynamoDbLocal();
const outage = useDynamoDbOutage();

let userSeq = 0;
const newUser = () => {
  userSeq += 1;
  return `user-${Date.now()}-${userSeq}`;
};

/** Runs the record's chunk as the SQS message `deliveryId` (the same id again is a redelivery). */
const deliver = (record: NotificationRecord, deliveryId = `message-${record.id}`) =>
  processFanoutMessage(
    { kind: 'chunk', notification_id: record.id, recipients: record.recipient_ids ?? [] },
    handlingOf(deliveryId),
  );

const errorCode = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: unknown) => (error instanceof ServiceError ? error.code : String(error)),
  );

describe('fan-out into feeds', () => {
  it('writes exactly one receiver per recipient however often a chunk is redelivered', async () => {
    const [alice, bob] = [newUser(), newUser()];
    const record = await storeNotification([alice, bob]);
    // Redeliveries of one message, and other messages naming the same recipients (overlapping audiences).
    await Promise.all([deliver(record), deliver(record), deliver(record, 'other'), deliver(record, 'third')]);
    await deliver(record);
    expect(await receiverCount(alice)).toBe(1);
    expect(await receiverCount(bob)).toBe(1);
    expect(await unreadCount(alice)).toBe(1);
  });

  it('does not deliver an expired notification', async () => {
    const alice = newUser();
    const record = await storeNotification([alice], { expires_at: new Date(Date.now() - 1).toISOString() });
    expect(await deliver(record)).toBe('expired');
    expect(await receiverCount(alice)).toBe(0);
  });

  it('fails loudly for a notification that does not exist (the message goes to the DLQ)', async () => {
    await expect(
      processFanoutMessage(
        { kind: 'chunk', notification_id: newId(), recipients: ['x'] },
        handlingOf('message-1'),
      ),
    ).rejects.toThrow(/does not exist/);
  });
});

/** A receiver written as fan-out writes it, expired when `expiresAt` is in the past. */
const putReceiver = async (
  userId: string,
  record: NotificationRecord,
  deliverAtMs: number,
  expiresAt?: string,
): Promise<string> => {
  const receiverId = receiverIdFor(record.id, userId, deliverAtMs);
  await documentClient().send(
    new PutCommand({
      TableName: tableName('receivers'),
      Item: {
        user_id: userId,
        receiver_id: receiverId,
        notification_id: record.id,
        delivered_at: new Date(deliverAtMs).toISOString(),
        unread_key: receiverId,
        ttl: record.ttl,
        ...(expiresAt ? { expires_at: expiresAt } : {}),
      },
    }),
  );
  return receiverId;
};

describe('feed', () => {
  it('lists newest first with the receiver shape of the contract, paged by an opaque cursor', async () => {
    const alice = newUser();
    const records: NotificationRecord[] = [];
    for (let index = 0; index < 5; index += 1) {
      const record = await storeNotification([alice], { title: `n${index}`, deliver_at: Date.now() + index });
      await deliver(record);
      records.push(record);
    }
    const first = await listFeed(alice, { limit: 2 });
    expect(first.items.map((item) => item.title)).toEqual(['n4', 'n3']);
    expect(first.items[0]).toEqual({
      id: receiverIdFor(records[4]!.id, alice, records[4]!.deliver_at),
      notification_id: records[4]!.id,
      source: 'billing',
      event_type: 'invoice.paid',
      title: 'n4',
      body: '',
      data: { amount: 12 },
      priority: 'normal',
      channels: ['in_app'],
      created_at: records[4]!.created_at,
      read_at: null,
      expires_at: null,
      seen_at: null,
      archived_at: null,
      snoozed_until: null,
      url: null,
      actions: [],
      interacted_at: null,
      interacted_action: null,
      revision: 0,
      category: null,
      tags: [],
    });
    const second = await listFeed(alice, { limit: 2, cursor: first.next_cursor! });
    const third = await listFeed(alice, { limit: 2, cursor: second.next_cursor! });
    expect(second.items.map((item) => item.title)).toEqual(['n2', 'n1']);
    expect(third.items.map((item) => item.title)).toEqual(['n0']);
    expect(third.next_cursor).toBeNull();
  });

  it('fills each page with live items and pages on past expired ones', async () => {
    const alice = newUser();
    const base = Date.now() - 60_000;
    const past = new Date(Date.now() - 1000).toISOString();
    const live: string[] = [];
    for (let index = 0; index < 9; index += 1) {
      const record = await storeNotification([alice], { title: `n${index}` });
      // Every other receiver, and the three newest, have expired.
      const expired = index % 2 === 1 || index >= 6;
      await putReceiver(alice, record, base + index * 10, expired ? past : undefined);
      if (!expired) live.unshift(`n${index}`);
    }
    const titles: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listFeed(alice, { limit: 2, cursor });
      pages += 1;
      titles.push(...page.items.map((item) => item.title));
      if (page.next_cursor) expect(page.items).toHaveLength(2);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && pages < 10);
    expect(titles).toEqual(live);
    expect(await unreadCount(alice)).toBe(live.length);
  });

  it('leaves out a receiver whose notification retention already removed', async () => {
    const alice = newUser();
    const kept = await storeNotification([alice], { title: 'kept' });
    await deliver(kept);
    const gone = { ...kept, id: newId() }; // never stored: its notification is gone
    await putReceiver(alice, gone, Date.now() + 5);
    const page = await listFeed(alice, { limit: 10 });
    expect(page.items.map((item) => item.title)).toEqual(['kept']);
    expect(page.next_cursor).toBeNull();
  });

  it('refuses a tampered cursor and another user’s cursor', async () => {
    const alice = newUser();
    for (let index = 0; index < 3; index += 1) await deliver(await storeNotification([alice]));
    const { next_cursor } = await listFeed(alice, { limit: 1 });
    const tampered = `${next_cursor!.slice(0, -2)}${next_cursor!.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await errorCode(listFeed(alice, { limit: 1, cursor: tampered }))).toBe('validation');
    expect(await errorCode(listFeed(newUser(), { limit: 1, cursor: next_cursor! }))).toBe('validation');
  });

  it('drops expired receivers from the feed and the count', async () => {
    const alice = newUser();
    // 4 s ahead: the stores, deliveries and first count fit well before it on a loaded machine (1.5 s did not
    // leave room for a stall of the test or of DynamoDB Local); then the test waits until it has passed.
    const expiresAt = Date.now() + 4000;
    await deliver(await storeNotification([alice], { expires_at: new Date(expiresAt).toISOString() }));
    await deliver(await storeNotification([alice]));
    expect(await unreadCount(alice)).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, expiresAt + 100 - Date.now()));
    expect(await unreadCount(alice)).toBe(1);
    expect((await listFeed(alice, { limit: 10 })).items).toHaveLength(1);
  });
});

describe('read state', () => {
  it('marks one receiver read idempotently, keeping the first read_at', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    const first = await markRead(alice, receiverId);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await markRead(alice, receiverId);
    expect(second).toEqual(first);
    expect(await unreadCount(alice)).toBe(0);
    expect((await listFeed(alice, { limit: 1 })).items[0]?.read_at).toBe(first.read_at);
  });

  it('answers 404 for a receiver removed (by its retention) between its read and the update', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    const table = tableName('receivers');
    let removed = false;
    outage.interpose(async (operation, request) => {
      if (operation !== 'UpdateItem' || request.TableName !== table || removed) return;
      removed = true;
      await documentClient().send(
        new DeleteCommand({ TableName: table, Key: { user_id: alice, receiver_id: receiverId } }),
      );
    });
    const error = await markRead(alice, receiverId).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 404, code: 'not_found', message: 'No such notification' });
    expect(removed).toBe(true);
  });

  it('leaves alone in a bulk change an item that arrives during it, also one older than the others', async () => {
    const alice = newUser();
    const older = await storeNotification([alice], { deliver_at: Date.now() - 60_000 });
    for (let index = 0; index < 3; index += 1) {
      await deliver(await storeNotification([alice], { deliver_at: Date.now() + index }));
    }
    const [newest] = (await listFeed(alice, { limit: 1 })).items;
    const table = tableName('receivers');
    for (const action of ['mark_seen', 'archive'] as const) {
      let arrived = false;
      outage.interpose(async (operation, request) => {
        if (operation !== 'Query' || request.TableName !== table || request.IndexName || arrived) return;
        arrived = true;
        // A lagging fan-out lands now, between the call's start and its Query: its id sorts below the others'.
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (action === 'mark_seen') await deliver(older);
        else await deliver(await storeNotification([alice], { deliver_at: Date.now() - 30_000 }));
      });
      const before = action === 'mark_seen' ? newest?.id : undefined;
      expect(await bulkChange(alice, action, { before })).toEqual({
        updated: 2 + (action === 'archive' ? 2 : 0),
      });
      expect(arrived).toBe(true);
      const lateId =
        action === 'mark_seen'
          ? receiverIdFor(older.id, alice, older.deliver_at)
          : (await listFeed(alice, { limit: 100 })).items.at(-1)?.id;
      const all = (await listFeed(alice, { limit: 100, state: 'all' })).items;
      const late = all.find((item) => item.id === lateId);
      expect(late).toMatchObject(action === 'mark_seen' ? { seen_at: null } : { archived_at: null });
    }
    expect((await listFeed(alice, { limit: 100 })).items).toHaveLength(1);
    expect(await unreadCount(alice)).toBe(1);
  });

  it('leaves alone in a bulk change an item unarchived or woken from a snooze during it', async () => {
    const table = tableName('receivers');
    for (const action of ['mark_seen', 'mark_read', 'archive'] as const) {
      for (const comeback of ['unarchive', 'wake'] as const) {
        const alice = newUser();
        const present = await storeNotification([alice], { deliver_at: Date.now() - 2_000 });
        const away = await storeNotification([alice], { deliver_at: Date.now() - 60_000 });
        await deliver(present);
        await deliver(away);
        const awayId = receiverIdFor(away.id, alice, away.deliver_at);
        const until = new Date(Date.now() + 3_600_000).toISOString();
        if (comeback === 'unarchive') await archiveItem(alice, awayId);
        else {
          const [receiver] = (await listFeed(alice, { limit: 100, state: 'all' })).items.filter(
            (item) => item.id === awayId,
          );
          expect(receiver).toBeDefined();
          const read = await documentClient().send(
            new GetCommand({ TableName: table, Key: { user_id: alice, receiver_id: awayId } }),
          );
          await applyTransition(read.Item as ReceiverRecord, await feedState(alice), snoozeUntil(until));
        }
        let returned = false;
        // Marking all read moves the read-all watermark to the newest unread key it read: the item comes back
        // between that read and the watermark's write. The other changes: between the call's start and its Query.
        const sweeping = (operation: string, request: Record<string, unknown>) =>
          action === 'mark_read'
            ? operation === 'UpdateItem' && request.TableName === tableName('feedState')
            : operation === 'Query' && request.TableName === table && !request.IndexName;
        outage.interpose(async (operation, request) => {
          if (!sweeping(operation, request) || returned) return;
          returned = true;
          await new Promise((resolve) => setTimeout(resolve, 5));
          if (comeback === 'unarchive') await unarchiveItem(alice, awayId);
          else
            await processFanoutMessage(
              { kind: 'wake', user_id: alice, receiver_id: awayId, until },
              handlingOf(`wake-${awayId}`),
              Date.parse(until),
            );
        });
        const label = `${action} while an item is ${comeback}d`;
        expect(await bulkChange(alice, action), label).toEqual({ updated: 1 });
        expect(returned, label).toBe(true);
        const back = (await listFeed(alice, { limit: 100 })).items.find((item) => item.id === awayId);
        expect(back, label).toMatchObject({ archived_at: null, read_at: null, seen_at: null });
      }
    }
  });

  it('counts in a second read-all only what arrived after the first', async () => {
    const alice = newUser();
    for (let index = 0; index < 2; index += 1) {
      await deliver(await storeNotification([alice], { deliver_at: Date.now() + index }));
    }
    expect(await readAll(alice)).toEqual({ updated: 2 });
    const later = Date.now() + 10;
    const records = [];
    for (let index = 0; index < 3; index += 1) {
      const record = await storeNotification([alice], { deliver_at: later + index });
      await deliver(record);
      records.push(record);
    }
    // One of the new ones is read on its own first: read-all reports only what it marked.
    await markRead(alice, receiverIdFor(records[0]!.id, alice, records[0]!.deliver_at));
    expect(await unreadCount(alice)).toBe(2);
    expect(await readAll(alice)).toEqual({ updated: 2 });
    expect(await unreadCount(alice)).toBe(0);
    expect(await readAll(alice)).toEqual({ updated: 0 });
  });

  it('reports the read-all time for a receiver read by a read-all, and 404 for an expired one', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    await readAll(alice);
    const listed = (await listFeed(alice, { limit: 1 })).items[0];
    expect(listed?.read_at).toEqual(expect.any(String));
    expect(await markRead(alice, receiverId)).toEqual({ id: receiverId, read_at: listed?.read_at });
    const expiredRecord = await storeNotification([alice]);
    const expiredId = await putReceiver(
      alice,
      expiredRecord,
      Date.now() + 50,
      new Date(Date.now() - 1000).toISOString(),
    );
    expect(await errorCode(markRead(alice, expiredId))).toBe('not_found');
  });

  it(`keeps the read_at of the last ${MAX_READ_ALL_MARKS} read-alls' items; older ones take the oldest kept time`, async () => {
    const alice = newUser();
    const rounds = MAX_READ_ALL_MARKS + 2;
    const start = Date.now();
    for (let round = 0; round < rounds; round += 1) {
      await deliver(await storeNotification([alice], { deliver_at: start + round }));
      expect(await readAll(alice)).toEqual({ updated: 1 });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const oldestFirst = (await listFeed(alice, { limit: rounds })).items
      .map((item) => item.read_at)
      .reverse();
    // Each of the newest 20 items has its own read-all's time, in order.
    const kept = oldestFirst.slice(2);
    expect(new Set(kept).size).toBe(MAX_READ_ALL_MARKS);
    expect([...kept].sort()).toEqual(kept);
    // The two read-alls before them are no longer kept: their items take the oldest kept time.
    expect(oldestFirst.slice(0, 3)).toEqual([kept[0], kept[0], kept[0]]);
  });

  it('reads a feed state written before read-all times were kept, and keeps its time from then on', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    // What a read-all wrote before the marks: the last watermark and its time alone.
    await documentClient().send(
      new PutCommand({
        TableName: tableName('feedState'),
        Item: { user_id: alice, read_all_watermark: receiverId, read_all_at: '2026-01-02T03:04:05.000Z' },
      }),
    );
    expect((await listFeed(alice, { limit: 1 })).items[0]?.read_at).toBe('2026-01-02T03:04:05.000Z');
    await deliver(await storeNotification([alice], { deliver_at: Date.now() + 5 }));
    expect(await readAll(alice)).toEqual({ updated: 1 });
    const items = (await listFeed(alice, { limit: 2 })).items;
    expect(items.map((item) => item.read_at)).toEqual([expect.any(String), '2026-01-02T03:04:05.000Z']);
    expect(items[0]?.read_at).not.toBe('2026-01-02T03:04:05.000Z');
  });

  it('reads a watermark an older writer moved without the marks (a rolling deploy) with its time', async () => {
    const alice = newUser();
    const records = [];
    for (let index = 0; index < 2; index += 1) {
      const record = await storeNotification([alice], { deliver_at: Date.now() + index });
      await deliver(record);
      records.push(receiverIdFor(record.id, alice, record.deliver_at));
    }
    const [older, newer] = records as [string, string];
    await documentClient().send(
      new PutCommand({
        TableName: tableName('feedState'),
        Item: {
          user_id: alice,
          read_all_marks: [[older, '2026-01-01T00:00:00.000Z']],
          read_all_watermark: newer,
          read_all_at: '2026-02-02T00:00:00.000Z',
        },
      }),
    );
    const readAts = (await listFeed(alice, { limit: 2 })).items.map((item) => item.read_at);
    expect(readAts).toEqual(['2026-02-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z']);
  });

  it('answers 404 for another user’s receiver and for unknown ids', async () => {
    const [alice, mallory] = [newUser(), newUser()];
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    expect(await errorCode(markRead(mallory, receiverId))).toBe('not_found');
    expect(await errorCode(markRead(alice, 'nope'))).toBe('not_found');
    for (const [user, id] of [
      [mallory, receiverId],
      [alice, 'nope'],
    ] as const) {
      expect(await markRead(user, id).catch((error: Error) => error.message)).toBe('No such notification');
    }
    expect(await unreadCount(alice)).toBe(1);
  });

  it('read-all marks 10,000 unread items in one call and reports how many', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    const base = Date.now() - 60_000;
    const receivers = Array.from({ length: 10_000 }, (_, index) => {
      const receiverId = receiverIdFor(`${record.id}-${index}`, alice, base + index);
      return {
        user_id: alice,
        receiver_id: receiverId,
        notification_id: record.id,
        delivered_at: new Date(base + index).toISOString(),
        unread_key: receiverId,
        ttl: record.ttl,
      };
    });
    for (let start = 0; start < receivers.length; start += 25 * 8) {
      await Promise.all(
        Array.from({ length: 8 }, (_, lane) => receivers.slice(start + lane * 25, start + (lane + 1) * 25))
          .filter((batch) => batch.length > 0)
          .map((batch) =>
            documentClient().send(
              new BatchWriteCommand({
                RequestItems: { [tableName('receivers')]: batch.map((Item) => ({ PutRequest: { Item } })) },
              }),
            ),
          ),
      );
    }
    expect(await unreadCount(alice)).toBe(10_000);
    expect(await readAll(alice)).toEqual({ updated: 10_000 });
    expect(await unreadCount(alice)).toBe(0);
    expect(await readAll(alice)).toEqual({ updated: 0 });
    const page = await listFeed(alice, { limit: 100 });
    expect(page.items.every((item) => item.read_at !== null)).toBe(true);
  }, 120_000);

  it('leaves unread what arrives after a read-all', async () => {
    const alice = newUser();
    await deliver(await storeNotification([alice]));
    await readAll(alice);
    await deliver(await storeNotification([alice], { title: 'later', deliver_at: Date.now() + 1 }));
    expect(await unreadCount(alice)).toBe(1);
    const listed = (await listFeed(alice, { limit: 10 })).items;
    expect(listed.map((item) => [item.title, item.read_at === null])).toEqual([
      ['later', true],
      ['Invoice paid', false],
    ]);
  });

  it('gives concurrent reads of one receiver the same read_at', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    const reads = await Promise.all(Array.from({ length: 8 }, () => markRead(alice, receiverId)));
    expect(new Set(reads.map((read) => read.read_at)).size).toBe(1);
    expect(await unreadCount(alice)).toBe(0);
  });

  it('counts each item once across concurrent read-alls', async () => {
    const alice = newUser();
    for (let index = 0; index < 3; index += 1) {
      await deliver(await storeNotification([alice], { deliver_at: Date.now() + index }));
    }
    const results = await Promise.all(Array.from({ length: 4 }, () => readAll(alice)));
    expect(results.reduce((sum, result) => sum + result.updated, 0)).toBe(3);
    expect(await unreadCount(alice)).toBe(0);
  });

  it('answers 503 when the store fails to mark a receiver read, and marks it on the retry', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    outage.fail(
      (operation, request) => operation === 'UpdateItem' && request.TableName === tableName('receivers'),
    );
    const error = await markRead(alice, receiverId).catch((caught: unknown) => caught);
    outage.heal();
    expect(toServiceError(error)).toMatchObject({ status: 503, code: 'unavailable' });
    expect(await unreadCount(alice)).toBe(1);
    expect(await markRead(alice, receiverId)).toEqual({ id: receiverId, read_at: expect.any(String) });
    expect(await unreadCount(alice)).toBe(0);
  });

  it('answers 503 when the store fails to move the read-all watermark, marking nothing, and the retry marks all', async () => {
    const alice = newUser();
    for (let index = 0; index < 2; index += 1) {
      await deliver(await storeNotification([alice], { deliver_at: Date.now() + index }));
    }
    outage.fail(
      (operation, request) => operation === 'UpdateItem' && request.TableName === tableName('feedState'),
    );
    const error = await readAll(alice).catch((caught: unknown) => caught);
    outage.heal();
    expect(toServiceError(error)).toMatchObject({ status: 503, code: 'unavailable' });
    expect(await unreadCount(alice)).toBe(2);
    expect(await readAll(alice)).toEqual({ updated: 2 });
    expect(await unreadCount(alice)).toBe(0);
  });

  it('leaves unread an older notification whose fan-out lags behind a newer one and a read-all', async () => {
    const alice = newUser();
    const older = await storeNotification([alice]);
    const newer = await storeNotification([alice], { deliver_at: Date.now() + 1 });
    await deliver(newer);
    expect(await readAll(alice)).toEqual({ updated: 1 });
    await deliver(older);
    expect(await unreadCount(alice)).toBe(1);
    const feed = await listFeed(alice, { limit: 10 });
    // Listed by delivery time (newest first); the late one is unread.
    expect(feed.items.map((item) => [item.notification_id, item.read_at === null])).toEqual([
      [newer.id, false],
      [older.id, true],
    ]);
  });
});

/** A small seeded PRNG, so a failing mix can be replayed from its seed. */
const prng = (seed: number) => () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

describe('unread count under a random mix of operations', () => {
  it('always equals the number of unread, unexpired receivers', async () => {
    const seed = Number(process.env.NOTIFY_TEST_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const users = [newUser(), newUser(), newUser()];
    /** The model: per user, receiver id → read flag and expiry (epoch ms or null). */
    const model = new Map(
      users.map((user) => [user, new Map<string, { read: boolean; expiresAt: number | null }>()]),
    );
    const notifications: NotificationRecord[] = [];
    const expectedUnread = (user: string, at: number) =>
      [...(model.get(user)?.values() ?? [])].filter(
        (r) => !r.read && (r.expiresAt === null || r.expiresAt > at),
      ).length;
    const feedUnread = async (user: string) => {
      let unread = 0;
      let cursor: string | undefined;
      do {
        const page = await listFeed(user, { limit: 100, cursor });
        unread += page.items.filter((item) => item.read_at === null).length;
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return unread;
    };

    for (let step = 0; step < 150; step += 1) {
      const roll = random();
      if (roll < 0.35 || notifications.length === 0) {
        const recipients = users.filter(() => random() < 0.6);
        if (recipients.length === 0) recipients.push(pick(users));
        const expiresAt = random() < 0.2 ? Date.now() + 300 + Math.floor(random() * 1500) : null;
        const record = await storeNotification(recipients, {
          deliver_at: Date.now() + step,
          expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
        });
        notifications.push(record);
        if ((await deliver(record)) === 'delivered') {
          for (const user of recipients) {
            model
              .get(user)
              ?.set(receiverIdFor(record.id, user, record.deliver_at), { read: false, expiresAt });
          }
        }
      } else if (roll < 0.55) {
        await deliver(pick(notifications)); // an injected SQS redelivery
      } else if (roll < 0.8) {
        const user = pick(users);
        const receivers = [...(model.get(user)?.entries() ?? [])];
        if (receivers.length === 0) continue;
        const [receiverId, state] = pick(receivers);
        const outcome = await errorCode(markRead(user, receiverId));
        if (outcome === 'ok') state.read = true;
        else
          expect(
            state.expiresAt !== null && state.expiresAt <= Date.now(),
            `seed ${seed}: read ${outcome}`,
          ).toBe(true);
      } else if (roll < 0.88) {
        const user = pick(users);
        await readAll(user);
        for (const state of model.get(user)?.values() ?? []) state.read = true;
      } else {
        const user = pick(users);
        const before = expectedUnread(user, Date.now());
        const [count, listed] = await Promise.all([unreadCount(user), feedUnread(user)]);
        const after = expectedUnread(user, Date.now());
        if (before === after) {
          // Only compare when no expiry fell between the two model readings.
          expect(count, `seed ${seed}, step ${step}`).toBe(before);
          expect(listed, `seed ${seed}, step ${step}`).toBe(before);
        }
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1900)); // every expiring receiver has expired now
    for (const user of users) {
      expect(await unreadCount(user), `seed ${seed}`).toBe(expectedUnread(user, Date.now()));
      expect(await feedUnread(user), `seed ${seed}`).toBe(expectedUnread(user, Date.now()));
    }
  }, 120_000);
});

describe('unread count and counts under a random mix of operations with archives, snoozes and bulk changes', () => {
  /** Snoozes as the route does after scheduling the wake-up (the schedule itself is the scheduler's). */
  const snooze = async (userId: string, receiverId: string, until: string) => {
    const read = await documentClient().send(
      new GetCommand({
        TableName: tableName('receivers'),
        Key: { user_id: userId, receiver_id: receiverId },
        ConsistentRead: true,
      }),
    );
    if (!read.Item) throw new Error('no such receiver');
    await applyTransition(read.Item as ReceiverRecord, await feedState(userId), snoozeUntil(until));
  };

  it('archiving an archived item snoozed since ends its snooze: unarchived, it is back in the default feed', async () => {
    const alice = newUser();
    const record = await storeNotification([alice]);
    await deliver(record);
    const receiverId = receiverIdFor(record.id, alice, record.deliver_at);
    await archiveItem(alice, receiverId);
    await snooze(alice, receiverId, new Date(Date.now() + 3_600_000).toISOString());
    await archiveItem(alice, receiverId);
    await unarchiveItem(alice, receiverId);
    const page = await listFeed(alice, { limit: 10 });
    expect(page.items.map((item) => item.id)).toEqual([receiverId]);
    expect(await unreadCount(alice)).toBe(1);
  });

  it('always equals the unread, unexpired items the default feed lists; so do the counts per category', async () => {
    const seed = Number(process.env.NOTIFY_TEST_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const users = [newUser(), newUser()];
    interface Modelled {
      read: boolean;
      seen: boolean;
      archived: boolean;
      snoozedUntil: string | null;
      expiresAt: number | null;
      category: string | undefined;
    }
    /** The model: per user, receiver id → its states. */
    const model = new Map(users.map((user) => [user, new Map<string, Modelled>()]));
    const live = (state: Modelled, at: number) => state.expiresAt === null || state.expiresAt > at;
    const inFeed = (state: Modelled) => !state.archived && state.snoozedUntil === null;
    const listed = async (user: string, state?: FeedStateFilter) => {
      const items: FeedItem[] = [];
      let cursor: string | undefined;
      do {
        const page = await listFeed(user, { limit: 100, cursor, ...(state ? { state } : {}) });
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return items;
    };
    /** The counts the model expects: of the live items of the default feed, overall and per category. */
    const expectedCounts = (user: string, at: number) =>
      countsOf(
        [...(model.get(user)?.values() ?? [])]
          .filter((r) => inFeed(r) && live(r, at))
          .map((r) => ({ category: r.category ?? null, read: r.read, seen: r.seen })),
      );
    const check = async (user: string, label: string) => {
      // The reads run side by side, so an expiry between them may show in one answer and not in another: read
      // again until no modelled expiry falls between the first read and the last.
      for (;;) {
        const before = expectedCounts(user, Date.now());
        const [count, counts, unreadListed, feedListed] = await Promise.all([
          unreadCount(user),
          feedCounts(user),
          listed(user, 'unread'),
          listed(user),
        ]);
        if (JSON.stringify(before) !== JSON.stringify(expectedCounts(user, Date.now()))) continue;
        expect(count, label).toBe(before.unread);
        expect(counts, label).toEqual(before);
        expect(unreadListed.length, label).toBe(before.unread);
        expect(counts, label).toEqual(countsOfListed(feedListed));
        return;
      }
    };
    /** Any change of an expired item is a 404; of a live one, it succeeds. */
    const expectOutcome = (outcome: string, state: Modelled, label: string) => {
      if (outcome === 'ok') return true;
      expect(state.expiresAt !== null && state.expiresAt <= Date.now(), `${label}: ${outcome}`).toBe(true);
      return false;
    };

    for (let step = 0; step < 200; step += 1) {
      const label = `seed ${seed}, step ${step}`;
      const roll = random();
      const user = pick(users);
      const receivers = [...(model.get(user)?.entries() ?? [])];
      if (roll < 0.25 || receivers.length === 0) {
        const expiresAt = random() < 0.15 ? Date.now() + 300 + Math.floor(random() * 1500) : null;
        const category = pick(['social', 'billing', 'billing.eu', undefined]);
        const record = await storeNotification(users, {
          deliver_at: Date.now() + step,
          expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString(),
          ...(category === undefined ? {} : { category }),
        });
        if ((await deliver(record)) === 'delivered') {
          for (const recipient of users) {
            model.get(recipient)?.set(receiverIdFor(record.id, recipient, record.deliver_at), {
              read: false,
              seen: false,
              archived: false,
              snoozedUntil: null,
              expiresAt,
              category,
            });
          }
        }
        continue;
      }
      const [receiverId, state] = pick(receivers);
      if (roll < 0.37) {
        if (random() < 0.4) {
          if (expectOutcome(await errorCode(markItemsSeen(user, [receiverId])), state, label))
            state.seen = true;
        } else if (expectOutcome(await errorCode(markRead(user, receiverId)), state, label))
          state.read = true;
      } else if (roll < 0.49) {
        // Archiving ends a snooze: no wake-up brings the item back out of the archive.
        if (expectOutcome(await errorCode(archiveItem(user, receiverId)), state, label))
          Object.assign(state, { archived: true, snoozedUntil: null });
      } else if (roll < 0.59) {
        if (expectOutcome(await errorCode(unarchiveItem(user, receiverId)), state, label))
          state.archived = false;
      } else if (roll < 0.69) {
        const until = new Date(Date.now() + 3_600_000 + step).toISOString();
        if (expectOutcome(await errorCode(snooze(user, receiverId, until)), state, label))
          state.snoozedUntil = until;
      } else if (roll < 0.77) {
        // The wake-up of a snooze: the schedule's message, as the fan-out worker handles it.
        const snoozed = receivers.filter(([, candidate]) => candidate.snoozedUntil !== null);
        if (snoozed.length === 0) continue;
        const [sleeper, sleeping] = pick(snoozed);
        const until = sleeping.snoozedUntil as string;
        const outcome = await processFanoutMessage(
          { kind: 'wake', user_id: user, receiver_id: sleeper, until },
          handlingOf(`wake-${sleeper}-${step}`),
          Date.parse(until),
        );
        if (outcome === 'woken')
          Object.assign(sleeping, { snoozedUntil: null, archived: false, read: false, seen: false });
        else expect(live(sleeping, Date.now()), label).toBe(false);
      } else if (roll < 0.85) {
        await readAll(user);
        for (const each of model.get(user)?.values() ?? []) if (inFeed(each)) each.read = true;
      } else if (roll < 0.93) {
        const action = pick(['mark_read', 'archive', 'mark_seen'] as const);
        if (!live(state, Date.now() + 50)) continue; // `before` must name a live item
        const category = random() < 0.5 ? pick(['social', 'billing']) : undefined;
        await bulkChange(user, action, { before: receiverId, category });
        for (const [id, each] of model.get(user) ?? []) {
          if (id >= receiverId || !inFeed(each)) continue;
          if (category !== undefined && each.category !== category) continue;
          if (action === 'mark_read') each.read = true;
          if (action === 'archive') each.archived = true;
          if (action === 'mark_seen') each.seen = true;
        }
      } else {
        await check(user, label);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 1900)); // every expiring receiver has expired now
    for (const user of users) await check(user, `seed ${seed}, at the end`);
  }, 180_000);
});

describe('counts under concurrent changes, redeliveries and failed writes', () => {
  it('always equal what the feed lists, overall and per category, and the unread count', async () => {
    const seed = Number(process.env.NOTIFY_TEST_SEED ?? Date.now() % 100_000);
    const random = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const users = [newUser(), newUser()];
    const notifications: NotificationRecord[] = [];
    const listedAll = async (user: string) => {
      const items: FeedItem[] = [];
      let cursor: string | undefined;
      do {
        const page = await listFeed(user, { limit: 100, cursor, state: 'all' });
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return items;
    };
    /**
     * One random operation of a user, as a route, the fan-out or the wake-up schedule makes it: chosen now, run
     * by the function returned (again, for a retry).
     */
    const operation = async (user: string, step: number): Promise<() => Promise<unknown>> => {
      const roll = random();
      const items = await listedAll(user);
      const item = items.length > 0 ? pick(items) : undefined;
      if (roll < 0.25 || !item) {
        const category = pick(['social', 'billing', undefined]);
        const record = await storeNotification(users, {
          deliver_at: Date.now() - Math.floor(random() * 2_000), // some land below newer items
          ...(category === undefined ? {} : { category }),
        });
        notifications.push(record);
        return () => deliver(record);
      }
      if (roll < 0.35 && notifications.length > 0) {
        const again = pick(notifications);
        return () => deliver(again); // a redelivery
      }
      if (roll < 0.45) return () => markRead(user, item.id);
      if (roll < 0.55) return () => markItemsSeen(user, [item.id]);
      if (roll < 0.62) return () => archiveItem(user, item.id);
      if (roll < 0.69) return () => unarchiveItem(user, item.id);
      if (roll < 0.78) {
        const until = new Date(Date.now() + 3_600_000 + step).toISOString();
        return async () => {
          const read = await documentClient().send(
            new GetCommand({
              TableName: tableName('receivers'),
              Key: { user_id: user, receiver_id: item.id },
            }),
          );
          if (!read.Item) return undefined;
          await applyTransition(read.Item as ReceiverRecord, await feedState(user), snoozeUntil(until));
          // Its wake-up, as the schedule's message makes it.
          return processFanoutMessage(
            { kind: 'wake', user_id: user, receiver_id: item.id, until },
            handlingOf(`wake-${item.id}-${step}`),
            Date.parse(until),
          );
        };
      }
      if (roll < 0.85) return () => readAll(user);
      const action = pick(['mark_seen', 'mark_read', 'archive'] as const);
      const category = pick(['social', 'billing', undefined]);
      return () => bulkChange(user, action, { category });
    };
    const check = async (label: string) => {
      for (const user of users) {
        const [counts, count, listed] = await Promise.all([
          feedCounts(user),
          unreadCount(user),
          listFeedAll(user),
        ]);
        expect(counts, label).toEqual(countsOfListed(listed));
        expect(count, label).toBe(counts.unread);
      }
    };
    const listFeedAll = async (user: string) => {
      const items: FeedItem[] = [];
      let cursor: string | undefined;
      do {
        const page = await listFeed(user, { limit: 100, cursor });
        items.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return items;
    };

    for (let round = 0; round < 10; round += 1) {
      const label = `seed ${seed}, round ${round}`;
      // Every other round, a write in three fails (a crash between a call's steps, a throttled request).
      const failing = round % 2 === 1;
      const runs = await Promise.all(
        Array.from({ length: 6 }, (_, index) => operation(pick(users), round * 10 + index)),
      );
      if (failing) {
        outage.fail((call) => ['PutItem', 'UpdateItem', 'BatchWriteItem'].includes(call) && random() < 1 / 3);
      }
      const outcomes = await Promise.allSettled(runs.map((run) => run()));
      outage.heal();
      // Counted as listed even with calls left half-done; then every failed call is retried (the client's retry,
      // SQS's redelivery) and the counts still equal the feed.
      await check(`${label}, after the failures`);
      for (const [index, outcome] of outcomes.entries()) {
        if (outcome.status === 'rejected') await errorCode((runs[index] as () => Promise<unknown>)());
      }
      await check(label);
    }
  }, 180_000);
});
