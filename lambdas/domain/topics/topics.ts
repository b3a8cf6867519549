import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { conflict, notFound } from '../../core/errors';
import { type ItemKey, scanPage } from '../../core/paging';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import { TOPIC_NAME } from './names';
import type { topicListSchema, topicSchema } from './responses';
import type { CreateTopicInput, ListTopicsQuery } from './schema';

/** A topic as stored (and answered: `created_by` is not part of the answer). */
export interface TopicRecord {
  readonly name: string;
  readonly description: string | null;
  readonly created_at: string;
  /** Exact: changed only in the transactions that add or remove a subscription. */
  readonly subscriber_count: number;
  readonly created_by: string;
  /** Set by DELETE /topics/{name}: the topic is gone for every route while its purge runs (deletion.ts). */
  readonly deleting_since?: string;
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
  if (!result.Item || result.Item.deleting_since !== undefined)
    throw notFound(`Topic ${name} does not exist`);
  return toTopic(result.Item as TopicRecord);
};

/**
 * GET /topics: a page of the topics with their subscriber counts (a Scan of the table, which is keyed by name
 * alone: a page costs what it returns), in the table's order, stable from page to page. Topics being deleted are
 * left out.
 */
export const listTopics = async (query: ListTopicsQuery): Promise<z.output<typeof topicListSchema>> => {
  const page = await scanPage<TopicRecord & ItemKey>(
    {
      TableName: tableName('topics'),
      FilterExpression: 'attribute_not_exists(deleting_since)',
      ConsistentRead: true,
    },
    {
      limit: query.limit,
      startKey: query.cursor === undefined ? undefined : { name: query.cursor },
      keyOf: (item) => ({ name: item.name }),
      // Topics being deleted are few: a page needs more reads only while many are.
      maxReads: 5,
    },
  );
  return {
    items: page.items.map(toTopic),
    next_cursor: page.nextKey ? (page.nextKey.name as string) : null,
  };
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
    { projection: '#name, subscriber_count, deleting_since', names: { '#name': 'name' } },
  );
  for (const item of items) {
    if (item.deleting_since === undefined)
      counts.set(item.name as string, Number(item.subscriber_count ?? 0));
  }
  const missing = names.find((name) => !counts.has(name));
  if (missing !== undefined) throw notFound(`Topic ${missing} does not exist`);
  return counts;
};
