import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { conflict, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import { TOPIC_NAME } from './names';
import type { topicSchema } from './responses';
import type { CreateTopicInput } from './schema';

/** A topic as stored (and answered: `created_by` is not part of the answer). */
export interface TopicRecord {
  readonly name: string;
  readonly description: string | null;
  readonly created_at: string;
  /** Exact: changed only in the transactions that add or remove a subscription. */
  readonly subscriber_count: number;
  readonly created_by: string;
}

/** What the topic routes answer (the schema is the API documents' too). */
export type Topic = z.output<typeof topicSchema>;

const toTopic = (record: TopicRecord): Topic => ({
  name: record.name,
  description: record.description,
  created_at: record.created_at,
  subscriber_count: record.subscriber_count,
});

/** Creates a topic; a name that exists is a 409 (a conditional put, so two racing creators cannot both win). */
export const createTopic = async (principal: Principal, input: CreateTopicInput): Promise<Topic> => {
  const record: TopicRecord = {
    name: input.name,
    description: input.description ?? null,
    created_at: new Date().toISOString(),
    subscriber_count: 0,
    created_by: `${principal.kind}:${principal.id}`,
  };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('topics'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(#name)',
        ExpressionAttributeNames: { '#name': 'name' },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      throw conflict(`Topic ${input.name} already exists`);
    throw error;
  }
  return toTopic(record);
};

/** One GetItem; a name outside the naming rule cannot exist, so it is a 404 without a read. */
export const getTopic = async (name: string): Promise<Topic> => {
  if (!TOPIC_NAME.test(name)) throw notFound(`Topic ${name} does not exist`);
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('topics'), Key: { name }, ConsistentRead: true }),
  );
  if (!result.Item) throw notFound(`Topic ${name} does not exist`);
  return toTopic(result.Item as TopicRecord);
};

/**
 * The current subscriber counts of the named topics (BatchGetItem, 100 keys a request); throws 404
 * naming the first that does not exist.
 */
export const subscriberCounts = async (names: readonly string[]): Promise<Map<string, number>> => {
  const counts = new Map<string, number>();
  if (names.length === 0) return counts;
  const items = await batchGetAll(
    tableName('topics'),
    names.map((name) => ({ name })),
    { projection: '#name, subscriber_count', names: { '#name': 'name' } },
  );
  for (const item of items) counts.set(item.name as string, Number(item.subscriber_count ?? 0));
  const missing = names.find((name) => !counts.has(name));
  if (missing !== undefined) throw notFound(`Topic ${missing} does not exist`);
  return counts;
};
