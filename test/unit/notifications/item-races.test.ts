/**
 * Races of one feed item's states with the messages that change it later (a snooze's wake-up), made certain by
 * landing the other side between a request's read and its write (the DynamoDB proxy's `interpose`). DynamoDB
 * Local and the SQS stand-in, with the test playing the fan-out worker.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { newId } from '../../../lambdas/core/ids';
import { HeldByOtherReceive } from '../../../lambdas/core/message-handling';
import { bulkChange } from '../../../lambdas/domain/notifications/bulk';
import { type FanoutOutcome, processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { feedState, listFeed, readAll, unreadCount } from '../../../lambdas/domain/notifications/feed';
import { interactWithItem } from '../../../lambdas/domain/notifications/interact';
import {
  applyTransition,
  archiveItem,
  loadReceiver,
  snoozeUntil,
  unarchiveItem,
} from '../../../lambdas/domain/notifications/item-states';
import { type ReceiverRecord, receiverIdFor } from '../../../lambdas/domain/notifications/model';
import { snoozeItem } from '../../../lambdas/domain/notifications/snooze';
import { envNames } from '../../../lib/wiring';
import { LocalEventBridge } from '../../../local/eventbridge/local-eventbridge';
import { useDynamoDbLocal, useDynamoDbOutage } from '../../support/dynamodb';
import { storeNotification } from '../../support/feed-records';
import { handlingOf, messageOf, useQueuesWithoutWorkers } from '../../support/queues';

useDynamoDbLocal();
const outage = useDynamoDbOutage();
const queues = useQueuesWithoutWorkers();

let users = 0;
const newUser = () => {
  users += 1;
  return `racer-${Date.now()}-${users}`;
};

/** One unread feed item of the user, delivered by the fan-out worker; its receiver id. */
const feedItem = async (userId: string): Promise<string> => {
  const notification = await storeNotification([userId]);
  await processFanoutMessage(
    { kind: 'chunk', notification_id: notification.id, recipients: [userId] },
    handlingOf(`chunk-${notification.id}`),
  );
  return receiverIdFor(notification.id, userId, notification.deliver_at);
};

const receiverOf = async (userId: string, receiverId: string): Promise<ReceiverRecord> => {
  const read = await documentClient().send(
    new GetCommand({
      TableName: tableName('receivers'),
      Key: { user_id: userId, receiver_id: receiverId },
      ConsistentRead: true,
    }),
  );
  return read.Item as ReceiverRecord;
};

/**
 * Plays the fan-out worker: receives the next message of `fanout` (waiting up to `waitSecs`), handles it and
 * deletes it; undefined when none came.
 */
const handleNextFanoutMessage = async (waitSecs: number): Promise<FanoutOutcome | undefined> => {
  const queueUrl = process.env[envNames.queueUrl('fanout')];
  const received = await queues
    .client()
    .send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: waitSecs }),
    );
  const [message] = received.Messages ?? [];
  if (!message) return undefined;
  const outcome = await processFanoutMessage(
    messageOf(fanoutQueue, message.Body),
    handlingOf(message.MessageId ?? 'message'),
  );
  await queues
    .client()
    .send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }));
  return outcome;
};

describe('snooze and its wake-up', () => {
  it('wakes a sub-second snooze whose write lands after its wake-up was handled', async () => {
    const user = newUser();
    const receiverId = await feedItem(user);
    const receivers = tableName('receivers');
    const until = new Date(Date.now() + 300).toISOString();
    // The snooze's write is slow (a loaded machine, a retried call): its wake-up message (1 s delay) is handled
    // by the worker before the write reaches the table.
    let wakeUp: Promise<FanoutOutcome | undefined> | undefined;
    outage.interpose(async (operation, request) => {
      if (wakeUp || operation !== 'UpdateItem' || request.TableName !== receivers) return;
      wakeUp = handleNextFanoutMessage(5);
      await wakeUp;
    });
    const snoozed = await snoozeItem(user, receiverId, until);
    expect(snoozed.snoozed_until).toBe(until);
    expect(await wakeUp).toBeDefined();
    // Whatever the worker did with it, the item wakes up: the worker handles what follows on the queue.
    for (;;) {
      if ((await receiverOf(user, receiverId)).snoozed_until === undefined) break;
      const outcome = await handleNextFanoutMessage(20);
      expect(outcome, 'the item is still snoozed and nothing on the queue will wake it').toBeDefined();
    }
    expect(await receiverOf(user, receiverId)).toMatchObject({ woken_from: until });
  }, 90_000);
});

describe('bulk changes and items coming back to the feed', () => {
  /** Snoozed as the route does after scheduling its wake-up (the schedule is the scheduler's, not here). */
  const snoozed = async (userId: string, receiverId: string, until: string) => {
    await applyTransition(
      await loadReceiver(userId, receiverId),
      await feedState(userId),
      snoozeUntil(until),
    );
  };

  it('leaves alone an item that wakes up or is unarchived during the call, though delivered before it', async () => {
    const receivers = tableName('receivers');
    for (const action of ['archive', 'mark_seen', 'mark_read'] as const) {
      const user = newUser();
      const [sleeper, archived, present] = [await feedItem(user), await feedItem(user), await feedItem(user)];
      const newest = await feedItem(user);
      const until = new Date(Date.now() + 3_600_000).toISOString();
      await snoozed(user, sleeper, until);
      await archiveItem(user, archived);
      let cameBack = false;
      outage.interpose(async (operation, request) => {
        // The sweep's Query of the matching items: both come back to the default feed just before it reads.
        if (cameBack || operation !== 'Query' || request.TableName !== receivers || request.IndexName) return;
        cameBack = true;
        expect(
          await processFanoutMessage(
            { kind: 'wake', user_id: user, receiver_id: sleeper, until },
            handlingOf(`wake-${sleeper}`),
            Date.parse(until),
          ),
        ).toBe('woken');
        await unarchiveItem(user, archived);
      });
      // `before` makes mark_read go item by item (without it, it is read-all's watermark).
      expect(await bulkChange(user, action, { before: newest }), action).toEqual({ updated: 1 });
      expect(cameBack).toBe(true);
      const changed = (receiver: ReceiverRecord) =>
        action === 'archive'
          ? receiver.archived_at !== undefined
          : action === 'mark_seen'
            ? receiver.seen_at !== undefined
            : receiver.read_at !== undefined;
      expect(changed(await receiverOf(user, present)), action).toBe(true);
      expect(changed(await receiverOf(user, sleeper)), `${action}: the woken item`).toBe(false);
      expect(changed(await receiverOf(user, archived)), `${action}: the unarchived item`).toBe(false);
    }
  }, 90_000);
});

describe('read-all and items coming back to the feed', () => {
  it('leaves unread an item that wakes up or is unarchived between the read-all’s read and its write', async () => {
    const user = newUser();
    const [sleeper, archived] = [await feedItem(user), await feedItem(user)];
    const present = await feedItem(user);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    await applyTransition(await loadReceiver(user, sleeper), await feedState(user), snoozeUntil(until));
    await archiveItem(user, archived);
    const feedStates = tableName('feedState');
    let cameBack = false;
    outage.interpose(async (operation, request) => {
      // The read-all has read the newest unread key; the items come back before it moves the watermark.
      if (cameBack || operation !== 'UpdateItem' || request.TableName !== feedStates) return;
      cameBack = true;
      await processFanoutMessage(
        { kind: 'wake', user_id: user, receiver_id: sleeper, until },
        handlingOf(`wake-${sleeper}`),
        Date.parse(until),
      );
      await unarchiveItem(user, archived);
    });
    expect(await readAll(user)).toEqual({ updated: 1 });
    expect(cameBack).toBe(true);
    const unread = (await listFeed(user, { limit: 10, state: 'unread' })).items.map((item) => item.id);
    expect(unread.sort()).toEqual([sleeper, archived].sort());
    expect(await unreadCount(user)).toBe(2);
    expect((await listFeed(user, { limit: 10, state: 'read' })).items.map((item) => item.id)).toEqual([
      present,
    ]);
  }, 60_000);
});

describe('a click and its bus event', () => {
  let bus: LocalEventBridge | undefined;
  beforeAll(async () => {
    bus = new LocalEventBridge({ busName: 'notify-test-bus', rules: [], sqs: queues.sqs(), log: () => {} });
    await bus.start();
    process.env[envNames.busName] = 'notify-test-bus';
    process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = bus.endpoint;
  });
  afterAll(() => bus?.stop());
  const published = () => bus?.counters().putEvents ?? 0;

  it('publishes once when its message comes before the click is written, and nothing for a losing click', async () => {
    const user = newUser();
    const receiverId = await feedItem(user);
    const receivers = tableName('receivers');
    const before = published();
    const outcomes: (FanoutOutcome | undefined)[] = [];
    let raced = false;
    outage.interpose(async (operation, request) => {
      if (raced || operation !== 'UpdateItem' || request.TableName !== receivers) return;
      raced = true;
      // The worker takes the click's message before the click's write lands; a second click, from another
      // device, lands first.
      outcomes.push(await handleNextFanoutMessage(5));
      const other = await interactWithItem(user, receiverId, undefined);
      expect(other.interacted_action).toBeNull();
    });
    const state = await interactWithItem(user, receiverId, undefined);
    expect(state.interacted_at).toEqual(expect.any(String));
    expect(outcomes).toEqual(['postponed']);
    // The queue now holds the first message (put back) and the winner's: one publishes, one finds another id.
    for (;;) {
      const outcome = await handleNextFanoutMessage(5);
      if (outcome === undefined) break;
      outcomes.push(outcome);
    }
    expect(outcomes.filter((outcome) => outcome === 'published')).toHaveLength(1);
    expect(published() - before).toBe(1);
  }, 60_000);

  it('publishes once when SQS hands its message to two receives at once', async () => {
    const user = newUser();
    const receiverId = await feedItem(user);
    const state = await interactWithItem(user, receiverId, undefined);
    expect(state.interacted_at).toEqual(expect.any(String));
    const queueUrl = process.env[envNames.queueUrl('fanout')];
    const received = await queues
      .client()
      .send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 5 }));
    const [copy] = received.Messages ?? [];
    const message = messageOf(fanoutQueue, copy?.Body);
    expect(message).toMatchObject({ kind: 'interaction', receiver_id: receiverId });
    const messageId = copy?.MessageId ?? 'interaction';
    const before = published();
    const receivers = tableName('receivers');
    let second: Promise<FanoutOutcome> | undefined;
    outage.interpose(async (operation, request) => {
      if (second || operation !== 'UpdateItem' || request.TableName !== receivers) return;
      if (!String(request.UpdateExpression).includes('interaction_published')) return;
      // The first receive has published and is about to record it: the copy runs in full meanwhile.
      second = processFanoutMessage(message, { ...handlingOf(messageId), receive: '2' });
      await second.catch(() => undefined);
    });
    expect(await processFanoutMessage(message, handlingOf(messageId))).toBe('published');
    // The copy leaves the event to the receive that holds it, and fails back to the queue instead of being
    // acknowledged (which would delete the message that receive depends on if it dies).
    await expect(second).rejects.toBeInstanceOf(HeldByOtherReceive);
    expect(published() - before).toBe(1);
    // The copy, back from the queue later, finds the event published.
    expect(await processFanoutMessage(message, { ...handlingOf(messageId), receive: '3' })).toBe('skipped');
    expect(published() - before).toBe(1);
  }, 60_000);

  it('gives up on a click whose request never wrote it, once that request cannot be writing any more', async () => {
    const user = newUser();
    const receiverId = await feedItem(user);
    const before = published();
    const sentAt = new Date(Date.now() - 60_000).toISOString();
    expect(
      await processFanoutMessage(
        {
          kind: 'interaction',
          user_id: user,
          receiver_id: receiverId,
          interaction_id: newId(),
          sent_at: sentAt,
        },
        handlingOf('interaction-1'),
      ),
    ).toBe('skipped');
    expect(published()).toBe(before);
    expect((await receiverOf(user, receiverId)).interacted_at).toBeUndefined();
  });
});
