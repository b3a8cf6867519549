import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchDeleteAll } from '../../core/batch-write';
import { documentClient, tableName } from '../../core/clients';
import { notFound } from '../../core/errors';
import { enqueue } from '../../core/sqs-send';
import { fanoutQueue, type TopicPurgeMessage } from '../notifications/fanout-messages';
import { TOPIC_NAME } from './names';
import { SUBSCRIBERS_PAGE, subscribersPage } from './subscriptions';

const queuePurge = (topic: string): Promise<void> => enqueue(fanoutQueue, [{ kind: 'topic-purge', topic }]);

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
