import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchDeleteAll } from '../../core/batch-write';
import { documentClient, queueUrl, tableName } from '../../core/clients';
import { notFound } from '../../core/errors';
import { sendAll } from '../../core/sqs-send';
import { TOPIC_NAME } from './names';
import { SUBSCRIBERS_PAGE, subscribersPage } from './subscriptions';

/**
 * A deleted topic's purge: its subscriptions a page at a time, then the topic. It travels on the `fanout` queue,
 * whose worker already pages topics' subscriptions, rather than on a queue of its own: a queue costs its DLQ
 * alarm (the development stage's alarms are exactly CloudWatch's 10 free metrics), its poller's idle cost and
 * about 8 CloudFormation resources, for work that is rare.
 */
export interface TopicPurgeMessage {
  readonly kind: 'topic-purge';
  readonly topic: string;
}

/** The purge a `fanout` message asks for, or undefined for the notification fan-out's own messages. */
export const topicPurgeOf = (body: string): TopicPurgeMessage | undefined => {
  const message = JSON.parse(body) as { kind?: unknown; topic?: unknown };
  if (message.kind !== 'topic-purge') return undefined;
  if (typeof message.topic !== 'string' || !TOPIC_NAME.test(message.topic)) {
    throw new Error('topic-purge message without a topic name');
  }
  return { kind: 'topic-purge', topic: message.topic };
};

const queuePurge = (topic: string): Promise<void> =>
  sendAll(queueUrl('fanout'), [JSON.stringify({ kind: 'topic-purge', topic } satisfies TopicPurgeMessage)]);

/**
 * DELETE /topics/{name}: marks the topic deleting (from then on it is a 404 to every route, and nobody can
 * subscribe to it) and queues its purge; 202 once both are durable. A repeat while the purge runs marks nothing
 * new and queues the purge again (a lost send is made good by the client's retry); once it is gone, 404.
 */
export const deleteTopic = async (name: string): Promise<{ name: string; status: 'deleting' }> => {
  if (!TOPIC_NAME.test(name)) throw notFound(`Topic ${name} does not exist`);
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('topics'),
        Key: { name },
        UpdateExpression: 'SET deleting_since = if_not_exists(deleting_since, :now)',
        ConditionExpression: 'attribute_exists(#name)',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw notFound(`Topic ${name} does not exist`);
    throw error;
  }
  await queuePurge(name);
  return { name, status: 'deleting' };
};

/**
 * One step of the purge: deletes up to a page (1,000) of the topic's subscriptions and queues the next step, or,
 * when none is left, deletes the topic. Safe to run twice and in any order: every delete is of what is there,
 * each step reads from the start of the partition (what an earlier step listed is gone), and a topic that is gone
 * or not marked deleting (a new topic of the same name) is left alone.
 */
export const purgeTopicPage = async ({ topic }: TopicPurgeMessage): Promise<void> => {
  const found = await documentClient().send(
    new GetCommand({ TableName: tableName('topics'), Key: { name: topic }, ConsistentRead: true }),
  );
  if (found.Item?.deleting_since === undefined) return;
  const page = await subscribersPage(topic, undefined, SUBSCRIBERS_PAGE);
  if (page.userIds.length > 0) {
    await batchDeleteAll(
      tableName('subscriptions'),
      page.userIds.map((userId) => ({ topic, user_id: userId })),
    );
    await queuePurge(topic);
    return;
  }
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableName('topics'),
        Key: { name: topic },
        ConditionExpression: 'attribute_exists(deleting_since)',
      }),
    );
  } catch (error) {
    // Gone already: another copy of this message finished first.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};
