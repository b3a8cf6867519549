import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { sendDigest } from '../../../lambdas/domain/notifications/digest-close';
import { joinDigest } from '../../../lambdas/domain/notifications/digest-join';
import type { DigestChoice } from '../../../lambdas/domain/notifications/digest-rules';
import { type FanoutMessage, fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import type { NotificationRecord } from '../../../lambdas/domain/notifications/model';
import { digestRecords } from '../../support/digest-records';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { handlingOf, messageOf, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * A member joining while its batch closes (docs/digests.md "Exactly once"): each step of the join and of the close
 * is held at the moment that matters, so every interleaving of the member's put, its check and the close's two
 * writes is run on purpose. The member ends up in that batch or in the next one, never lost, never in both, and
 * a retried join counts once. Also: a batch of the previous record shape closes after an upgrade.
 */
useDynamoDbLocal();
const queues = useQueuesWithoutWorkers();

type Input = Record<string, unknown>;

/** One DynamoDB request held before or after it is sent, until released. */
interface Hold {
  readonly matches: (input: Input) => boolean;
  readonly when: 'before' | 'after';
  readonly reached: Promise<void>;
  readonly release: () => void;
  readonly onReach: () => void;
  readonly released: Promise<void>;
}

const holds: Hold[] = [];

const holdRequest = (when: Hold['when'], matches: Hold['matches']) => {
  let onReach = () => {};
  let release = () => {};
  const reached = new Promise<void>((resolve) => {
    onReach = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const hold: Hold = { matches, when, reached, release, onReach, released };
  holds.push(hold);
  return hold;
};

/** The first hold a request matches, taken (each holds one request). */
const takeHold = (input: Input, when: Hold['when']) => {
  const index = holds.findIndex((hold) => hold.when === when && hold.matches(input));
  return index < 0 ? undefined : holds.splice(index, 1)[0];
};

beforeAll(() => {
  documentClient().middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Input;
      const before = takeHold(input, 'before');
      if (before) {
        before.onReach();
        await before.released;
      }
      const output = await next(args);
      const after = takeHold(input, 'after');
      if (after) {
        after.onReach();
        await after.released;
      }
      return output;
    },
    { step: 'initialize', name: 'holdDigestRequests' },
  );
});

afterEach(() => {
  expect(holds).toEqual([]); // every hold was met
});

/** The put of a member's record for a notification. */
const memberPut = (notificationId: string) => (input: Input) => {
  const item = JSON.stringify(input.Item ?? null);
  return item.includes('"joined#') && item.includes(`#${notificationId}"`);
};

/** The close's first write: the batch marked closing with the scope's current batch closed. */
const closingWrite = (input: Input) => 'TransactItems' in input && JSON.stringify(input).includes(':closing');

const service = 'forum';
let counter = 0;

const notification = (userId: string): NotificationRecord => {
  counter += 1;
  const now = Date.now();
  return {
    id: `${userId}-n${counter}`,
    source: service,
    event_type: 'comment.created',
    title: `Comment ${counter}`,
    body: '',
    data: {},
    priority: 'normal',
    channels: ['in_app'],
    scheduled_at: null,
    expires_at: null,
    created_at: new Date(now).toISOString(),
    deliver_at: now,
    status: 'accepted',
    created_by: `service:${service}`,
    recipient_count: 1,
    ttl: Math.ceil(now / 1000) + 3600,
  };
};

// A 1 s window: its close is a delayed message on `fanout` (no worker takes it); the tests close by hand.
const choice: DigestChoice = {
  scope: 'key:post-1',
  spec: { key: 'post-1', window_secs: 1, max_items: 10 },
};

/** The members of each of the user's batches, oldest first, as their closes recorded them. */
const closedMembers = async (userId: string) =>
  (await digestRecords(userId, 'window#'))
    .sort((a, b) => a.opened_at - b.opened_at)
    .map((batch) => ({ state: batch.state, count: batch.count, members: batch.members }));

/** How many items the user's feed has (each a digest). */
const feedItems = async (userId: string) => {
  const receivers =
    (
      await documentClient().send(
        new QueryCommand({
          TableName: tableName('receivers'),
          KeyConditionExpression: 'user_id = :user',
          ExpressionAttributeValues: { ':user': userId },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];
  return receivers.length;
};

const close = (userId: string, batchId: string) =>
  sendDigest(userId, choice.scope, batchId, handlingOf(`close-${batchId}`));

describe('a member joining while its batch closes', () => {
  it('is in the batch when its put lands before the close reads the members, though it sees the batch closing', async () => {
    const userId = `close-race-a-${Date.now()}`;
    const opener = notification(userId);
    expect(await joinDigest(opener, userId, choice, undefined)).toBe('opened');
    const late = notification(userId);
    const put = holdRequest('after', memberPut(late.id));
    const joining = joinDigest(late, userId, choice, undefined);
    await put.reached; // its record is in; it has not checked yet
    expect(await close(userId, opener.id)).toBe('delivered');
    put.release();
    expect(await joining).toBe('joined');
    expect(await closedMembers(userId)).toEqual([
      { state: 'closed', count: 2, members: [opener.id, late.id] },
    ]);
    expect(await feedItems(userId)).toBe(1);
  });

  it('joins the next batch when its put lands after the close read the members, and a retry counts once', async () => {
    const userId = `close-race-b-${Date.now()}`;
    const opener = notification(userId);
    expect(await joinDigest(opener, userId, choice, undefined)).toBe('opened');
    const late = notification(userId);
    const put = holdRequest('before', memberPut(late.id));
    const joining = joinDigest(late, userId, choice, undefined);
    await put.reached; // it read the batch open and is about to put its record
    await close(userId, opener.id);
    put.release();
    expect(await joining).toBe('opened'); // its record under the closed batch is not in it: it opened the next
    expect(await joinDigest(late, userId, choice, undefined)).toBe('already');
    // The opener retried while the next batch is open: it looks back and finds itself in the closed one.
    expect(await joinDigest(opener, userId, choice, undefined)).toBe('already');
    await close(userId, late.id);
    expect(await joinDigest(late, userId, choice, undefined)).toBe('already'); // both batches closed
    expect(await closedMembers(userId)).toEqual([
      { state: 'closed', count: 1, members: [opener.id] },
      { state: 'closed', count: 1, members: [late.id] },
    ]);
    expect(await digestRecords(userId, `joined#${choice.scope}#${opener.id}#${late.id}`)).toHaveLength(1);
    expect(await feedItems(userId)).toBe(2);
  });

  it('is in the batch when it finds the batch closing and finishes the close itself', async () => {
    const userId = `close-race-c-${Date.now()}`;
    const opener = notification(userId);
    expect(await joinDigest(opener, userId, choice, undefined)).toBe('opened');
    const before = notification(userId); // put before the close starts, checked after
    const during = notification(userId); // put while the batch is closing
    const beforePut = holdRequest('after', memberPut(before.id));
    const duringPut = holdRequest('before', memberPut(during.id));
    const joinBefore = joinDigest(before, userId, choice, undefined);
    const joinDuring = joinDigest(during, userId, choice, undefined);
    await Promise.all([beforePut.reached, duringPut.reached]);
    const closing = holdRequest('after', closingWrite);
    const closed = close(userId, opener.id);
    await closing.reached; // marked closing; its members not read yet
    duringPut.release();
    beforePut.release();
    expect(await joinDuring).toBe('joined');
    expect(await joinBefore).toBe('joined');
    closing.release();
    expect(await closed).toBe('delivered');
    const [batch] = await closedMembers(userId);
    expect(batch).toMatchObject({ state: 'closed', count: 3 });
    expect([...(batch?.members ?? [])].sort()).toEqual([opener.id, before.id, during.id].sort());
    expect(await closedMembers(userId)).toHaveLength(1);
    expect(await feedItems(userId)).toBe(1);
  });

  it('closes a batch of the previous record shape, and a member of one is not joined again', async () => {
    const userId = `close-race-legacy-${Date.now()}`;
    const opener = notification(userId);
    const member = notification(userId);
    const item = (n: NotificationRecord) => ({
      notification_id: n.id,
      event_type: n.event_type,
      source: n.source,
      title: n.title,
      created_at: n.created_at,
    });
    const ttl = Math.ceil(Date.now() / 1000) + 3600;
    const legacy = [
      { entry: `open#${choice.scope}`, batch_id: opener.id, closes_at: Date.now(), ttl },
      {
        entry: `batch#${choice.scope}#${opener.id}`,
        key: 'post-1',
        batch_id: opener.id,
        state: 'open',
        opened_at: Date.now() - 1000,
        closes_at: Date.now(),
        count: 2,
        items: [item(opener), item(member)],
        latest: item(member),
        max_items: 10,
        opener: {
          source: service,
          event_type: 'comment.created',
          channels: ['in_app'],
          priority: 'normal',
          created_by: `service:${service}`,
        },
        ttl,
      },
      { entry: `member#${opener.id}`, batch_id: opener.id, scope: choice.scope, ttl },
      { entry: `member#${member.id}`, batch_id: opener.id, scope: choice.scope, ttl },
    ];
    for (const record of legacy) {
      await documentClient().send(
        new PutCommand({ TableName: tableName('digests'), Item: { user_id: userId, ...record } }),
      );
    }
    // A retried join of a notification the previous code put into a batch: already in.
    expect(await joinDigest(member, userId, choice, undefined)).toBe('already');
    expect(await close(userId, opener.id)).toBe('delivered');
    const [batch] = await digestRecords(userId, `batch#${choice.scope}#`);
    expect(batch).toMatchObject({ state: 'closed', count: 2 });
    expect(await digestRecords(userId, 'open#')).toEqual([]);
    expect(await digestRecords(userId, 'window#')).toEqual([]);
    expect(await feedItems(userId)).toBe(1);
  });
});

describe('a batch whose close was lost', () => {
  /**
   * The closes of `userId`'s batches that reach `fanout` within 4 s (they go out with a second's delay); each is
   * left there, invisible for a minute.
   */
  const closesOnFanout = async (userId: string) => {
    const closes: FanoutMessage[] = [];
    for (const until = Date.now() + 4000; Date.now() < until; ) {
      const { Messages = [] } = await queues.client().send(
        new ReceiveMessageCommand({
          QueueUrl: queues.sqs().queueUrl('fanout'),
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: 60,
        }),
      );
      for (const received of Messages) {
        const message = messageOf(fanoutQueue, received.Body);
        if (message.kind === 'digest-close' && message.user_id === userId) closes.push(message);
      }
    }
    return closes;
  };

  it('is closed again by a member that joins it long after its close time, and then closes once', async () => {
    const userId = `close-lost-${Date.now()}`;
    // Its close time 20 minutes ago: the opener's close went out at once and is taken here, as if a worker of
    // the previous release had dropped it.
    const overdue: DigestChoice = {
      scope: 'key:post-lost',
      spec: { key: 'post-lost', closes_at: Date.now() - 20 * 60_000, max_items: 10 },
    };
    const opener = notification(userId);
    expect(await joinDigest(opener, userId, overdue, undefined)).toBe('opened');
    expect(await closesOnFanout(userId)).toHaveLength(1);
    const late = notification(userId);
    expect(await joinDigest(late, userId, overdue, undefined)).toBe('joined');
    expect(await closesOnFanout(userId)).toEqual([
      { kind: 'digest-close', user_id: userId, scope: overdue.scope, batch_id: opener.id },
    ]);
    const closeOverdue = (attempt: string) =>
      sendDigest(userId, overdue.scope, opener.id, handlingOf(`close-lost-${attempt}`));
    expect(await closeOverdue('sent-again')).toBe('delivered');
    await closeOverdue('the-first-after-all');
    expect((await digestRecords(userId, 'window#')).map((batch) => [batch.state, batch.members])).toEqual([
      ['closed', [opener.id, late.id]],
    ]);
    expect(await feedItems(userId)).toBe(1);
  });
});
