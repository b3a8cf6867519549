import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { forbidden, notFound, unavailable, validationError } from '../../core/errors';
import { queryAll, queryOnce } from '../../core/paging';
import type { Principal } from '../../core/principal';
import { transactRetryingConflicts } from '../../core/transactions';
import type * as z from '../../core/zod';
import type { subscriptionSchema } from './responses';
import type { CreateSubscriptionInput } from './schema';

/** One item per (topic, user) in the `subscriptions` table. */
export interface SubscriptionRecord {
  readonly topic: string;
  readonly user_id: string;
  readonly id: string;
  readonly created_at: string;
  readonly created_by: string;
}

/** What the subscription routes answer (the schema is the API documents' too). */
export type Subscription = z.output<typeof subscriptionSchema>;

/**
 * The subscription id is derived from (topic, user): subscribing twice finds the same item, and DELETE finds
 * the item from the id alone (topic names hold no newline). Opaque to clients.
 */
export const subscriptionIdFor = (topic: string, userId: string): string =>
  Buffer.from(`${topic}\n${userId}`, 'utf8').toString('base64url');

export const parseSubscriptionId = (id: string): { topic: string; userId: string } | undefined => {
  const decoded = Buffer.from(id, 'base64url').toString('utf8');
  const newline = decoded.indexOf('\n');
  if (newline <= 0 || newline === decoded.length - 1) return undefined;
  const parsed = { topic: decoded.slice(0, newline), userId: decoded.slice(newline + 1) };
  return subscriptionIdFor(parsed.topic, parsed.userId) === id ? parsed : undefined;
};

const toSubscription = (record: SubscriptionRecord): Subscription => ({
  id: record.id,
  topic: record.topic,
  user_id: record.user_id,
  created_at: record.created_at,
});

/** Whose subscription this request makes: a user only its own; a service (notifications:write) names the user. */
const subscriberOf = (principal: Principal, input: CreateSubscriptionInput): string => {
  if (principal.kind === 'user') {
    if (input.user_id !== undefined && input.user_id !== principal.id) {
      throw forbidden('A user may subscribe only itself');
    }
    return principal.id;
  }
  if (input.user_id === undefined) {
    throw validationError('A service must name the subscriber', [{ field: 'user_id', issue: 'required' }]);
  }
  return input.user_id;
};

/** A topic's counter changed by too many subscribers at once: the caller may try again. */
const topicTooBusy = () => unavailable('The topic is too busy right now, try again later');

export interface SubscribeResult {
  readonly subscription: Subscription;
  /** False when the subscription existed already (answered 200 instead of 201). */
  readonly created: boolean;
}

/**
 * Adds the subscription and increments the topic's subscriber_count in one transaction, so the count is
 * exact whatever runs concurrently. An existing subscription is returned as it is (and counted once).
 */
export const subscribe = async (
  principal: Principal,
  input: CreateSubscriptionInput,
): Promise<SubscribeResult> => {
  const userId = subscriberOf(principal, input);
  const record: SubscriptionRecord = {
    topic: input.topic,
    user_id: userId,
    id: subscriptionIdFor(input.topic, userId),
    created_at: new Date().toISOString(),
    created_by: `${principal.kind}:${principal.id}`,
  };
  const command = new TransactWriteCommand({
    TransactItems: [
      {
        Put: {
          TableName: tableName('subscriptions'),
          Item: record,
          ConditionExpression: 'attribute_not_exists(user_id)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
      {
        Update: {
          TableName: tableName('topics'),
          Key: { name: input.topic },
          UpdateExpression: 'ADD subscriber_count :one',
          // A topic being deleted takes no subscriber: one added after the purge's last page would outlive it.
          ConditionExpression: 'attribute_exists(#name) AND attribute_not_exists(deleting_since)',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':one': 1 },
        },
      },
    ],
  });
  return transactRetryingConflicts<SubscribeResult>(
    command,
    () => ({ subscription: toSubscription(record), created: true }),
    async (codes, error) => {
      if (codes[1] === 'ConditionalCheckFailed') throw notFound(`Topic ${input.topic} does not exist`);
      const old = error.CancellationReasons?.[0]?.Item;
      const existing = old
        ? (unmarshall(old) as SubscriptionRecord)
        : await readSubscription(input.topic, userId);
      if (!existing) throw unavailable('The subscription changed concurrently, try again');
      return { subscription: toSubscription(existing), created: false };
    },
    topicTooBusy,
  );
};

const readSubscription = async (topic: string, userId: string) => {
  const result = await documentClient().send(
    new GetCommand({
      TableName: tableName('subscriptions'),
      Key: { topic, user_id: userId },
      ConsistentRead: true,
    }),
  );
  return result.Item as SubscriptionRecord | undefined;
};

/**
 * Removes the subscription and decrements the count in one transaction. Someone else's subscription is a
 * 404 for a user (never leak existence); a service with notifications:write may remove any.
 */
export const unsubscribe = async (principal: Principal, id: string): Promise<void> => {
  const parsed = parseSubscriptionId(id);
  const missing = () => notFound('Subscription not found');
  if (!parsed || (principal.kind === 'user' && parsed.userId !== principal.id)) throw missing();
  const command = new TransactWriteCommand({
    TransactItems: [
      {
        Delete: {
          TableName: tableName('subscriptions'),
          Key: { topic: parsed.topic, user_id: parsed.userId },
          ConditionExpression: 'attribute_exists(user_id)',
        },
      },
      {
        Update: {
          TableName: tableName('topics'),
          Key: { name: parsed.topic },
          UpdateExpression: 'ADD subscriber_count :minusOne',
          ConditionExpression: 'attribute_exists(#name)',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':minusOne': -1 },
        },
      },
    ],
  });
  await transactRetryingConflicts(
    command,
    () => undefined,
    () => Promise.reject(missing()),
    topicTooBusy,
  );
};

/** The user's own subscriptions: a Query on the byUser index, every page (a user has few). */
export const listSubscriptions = async (userId: string): Promise<Subscription[]> => {
  const items = await queryAll<SubscriptionRecord>({
    TableName: tableName('subscriptions'),
    IndexName: 'byUser',
    KeyConditionExpression: 'user_id = :user',
    ExpressionAttributeValues: { ':user': userId },
  });
  return items.map(toSubscription);
};

/** Subscribers of a topic read per fan-out page: a strongly consistent Query on the topic's partition. */
export const SUBSCRIBERS_PAGE = 1000;

export const subscribersPage = async (
  topic: string,
  afterUserId?: string,
  limit = SUBSCRIBERS_PAGE,
): Promise<{ userIds: string[]; lastUserId?: string }> => {
  const page = await queryOnce<{ user_id: string }>(
    {
      TableName: tableName('subscriptions'),
      KeyConditionExpression: 'topic = :topic',
      ExpressionAttributeValues: { ':topic': topic },
      ProjectionExpression: 'user_id',
      Limit: limit,
      ConsistentRead: true,
    },
    afterUserId === undefined ? undefined : { topic, user_id: afterUserId },
  );
  const userIds = page.items.map((item) => item.user_id);
  return page.nextKey ? { userIds, lastUserId: page.nextKey.user_id as string } : { userIds };
};
