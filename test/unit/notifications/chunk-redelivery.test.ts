import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { type FanoutMessage, fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { wiring } from '../../../lib/wiring';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { storeNotification } from '../../support/feed-records';
import { handlingOf, messageOf, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * A fan-out chunk whose receives keep dying before they finish (crashes, an invocation timing out on a slow table)
 * makes progress each time, but one that needs more time than its receives get would reach the DLQ after the
 * queue's maxReceiveCount. A redelivered chunk goes back to the queue as two halves instead: new messages with less
 * to do, which keep the frames' owner and lease holder of the message they come from.
 */

useDynamoDbLocal();
const queues = useQueuesWithoutWorkers();

const maxReceiveCount = wiring.queues.find((queue) => queue.id === 'fanout')?.maxReceiveCount ?? 0;

const fanoutMessages = async () => {
  const found: { message: FanoutMessage; messageId: string; receiveCount: number }[] = [];
  for (;;) {
    const { Messages = [] } = await queues.client().send(
      new ReceiveMessageCommand({
        QueueUrl: queues.sqs().queueUrl('fanout'),
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    if (Messages.length === 0) return found;
    for (const message of Messages) {
      found.push({
        message: messageOf(fanoutQueue, message.Body),
        messageId: message.MessageId ?? '',
        receiveCount: Number(message.Attributes?.ApproximateReceiveCount),
      });
      await queues.client().send(
        new DeleteMessageCommand({
          QueueUrl: queues.sqs().queueUrl('fanout'),
          ReceiptHandle: message.ReceiptHandle,
        }),
      );
    }
  }
};

const feedOwners = async (users: readonly string[], notificationId: string) => {
  const owners: string[] = [];
  for (const user of users) {
    const { Items = [] } = await documentClient().send(
      new QueryCommand({
        TableName: tableName('receivers'),
        KeyConditionExpression: 'user_id = :user',
        FilterExpression: 'notification_id = :id',
        ExpressionAttributeValues: { ':user': user, ':id': notificationId },
        ConsistentRead: true,
      }),
    );
    if (Items.length > 0) owners.push(user);
  }
  return owners;
};

describe('a fan-out chunk received again', () => {
  it('goes back to the queue as two halves, new messages under its frames owner and holder, which deliver', async () => {
    const users = Array.from({ length: 5 }, (_, index) => `again-${Date.now()}-${index}`);
    const notification = await storeNotification(users);
    const chunk: FanoutMessage = { kind: 'chunk', notification_id: notification.id, recipients: users };
    // Its second receive: the first died or failed, having done part of it at most.
    expect(await processFanoutMessage(chunk, { ...handlingOf('chunk-1'), receive: '2' })).toBe('split');
    expect(await feedOwners(users, notification.id)).toEqual([]);
    const halves = await fanoutMessages();
    expect(halves.map(({ message }) => message)).toEqual([
      { ...chunk, recipients: users.slice(0, 3), delivery_id: 'chunk-1', lease_holder: 'chunk-1' },
      { ...chunk, recipients: users.slice(3), delivery_id: 'chunk-1', lease_holder: 'chunk-1' },
    ]);
    // New messages: their receives count from one, so a chunk cut off again and again gets smaller instead of
    // reaching the DLQ after maxReceiveCount receives of the whole.
    expect(halves.map(({ receiveCount }) => receiveCount)).toEqual([1, 1]);
    expect(maxReceiveCount).toBeGreaterThan(1);
    for (const { message, messageId } of halves) {
      expect(await processFanoutMessage(message, handlingOf(messageId))).toBe('delivered');
    }
    expect(await feedOwners(users, notification.id)).toEqual(users);
  });

  it('of one recipient is delivered: there is nothing to split', async () => {
    const user = `again-one-${Date.now()}`;
    const notification = await storeNotification([user]);
    const chunk: FanoutMessage = { kind: 'chunk', notification_id: notification.id, recipients: [user] };
    expect(await processFanoutMessage(chunk, { ...handlingOf('chunk-2'), receive: '4' })).toBe('delivered');
    expect(await feedOwners([user], notification.id)).toEqual([user]);
    expect(await fanoutMessages()).toEqual([]);
  });

  it('halves of a chunk the accepting request queued keep that request as the frames owner', async () => {
    const users = Array.from({ length: 2 }, (_, index) => `again-request-${Date.now()}-${index}`);
    const notification = await storeNotification(users);
    const owner = `request:${notification.id}`;
    const chunk: FanoutMessage = {
      kind: 'chunk',
      notification_id: notification.id,
      recipients: users,
      delivery_id: owner,
    };
    expect(await processFanoutMessage(chunk, { ...handlingOf('chunk-3'), receive: '2' })).toBe('split');
    expect((await fanoutMessages()).map(({ message }) => message)).toEqual(
      users.map((user) => ({ ...chunk, recipients: [user], delivery_id: owner, lease_holder: 'chunk-3' })),
    );
  });
});
