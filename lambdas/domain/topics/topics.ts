import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, type BatchGetCommandOutput, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
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
 * The current subscriber counts of the named topics (one BatchGetItem of at most 100 keys); throws 404
 * naming the first that does not exist.
 */
export const subscriberCounts = async (names: readonly string[]): Promise<Map<string, number>> => {
  const counts = new Map<string, number>();
  if (names.length === 0) return counts;
  const table = tableName('topics');
  let keys: Record<string, unknown>[] | undefined = names.map((name) => ({ name }));
  for (let attempt = 0; keys && keys.length > 0; attempt += 1) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** Math.min(attempt, 5)));
    const result: BatchGetCommandOutput = await documentClient().send(
      new BatchGetCommand({
        RequestItems: {
          [table]: {
            Keys: keys,
            ProjectionExpression: '#name, subscriber_count',
            ExpressionAttributeNames: { '#name': 'name' },
          },
        },
      }),
    );
    for (const item of result.Responses?.[table] ?? []) {
      counts.set(item.name as string, Number(item.subscriber_count ?? 0));
    }
    keys = result.UnprocessedKeys?.[table]?.Keys;
  }
  const missing = names.find((name) => !counts.has(name));
  if (missing !== undefined) throw notFound(`Topic ${missing} does not exist`);
  return counts;
};
