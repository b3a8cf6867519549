import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { ServiceError } from '../../../lambdas/core/errors';
import type { Principal } from '../../../lambdas/core/principal';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { createSubscriptionSchema, createTopicSchema } from '../../../lambdas/domain/topics/schema';
import {
  listSubscriptions,
  parseSubscriptionId,
  subscribe,
  subscribersPage,
  subscriptionIdFor,
  unsubscribe,
} from '../../../lambdas/domain/topics/subscriptions';
import { createTopic, getTopic, subscriberCounts } from '../../../lambdas/domain/topics/topics';
import { useDynamoDbLocal } from '../../support/dynamodb';

useDynamoDbLocal();

const user = (id: string): Principal => ({
  kind: 'user',
  id,
  roles: [],
  isAdmin: false,
  expiresAt: 0,
  acceptedUntil: 0,
});
const service = (scopes: string[] = ['notifications:write']): Principal => ({
  kind: 'service',
  id: 'crm',
  scopes,
  expiresAt: 0,
});

let seq = 0;
const unique = (prefix: string) => {
  seq += 1;
  return `${prefix}-${Date.now()}-${seq}`;
};

const newTopic = async () => (await createTopic(service(), { name: unique('topic') })).name;

const errorOf = async (promise: Promise<unknown>): Promise<ServiceError> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return error;
    throw error;
  }
  throw new Error('expected a ServiceError');
};

/** The number of subscription items of a topic, read from the table itself. */
const storedSubscribers = async (topic: string) => {
  const result = await documentClient().send(
    new QueryCommand({
      TableName: tableName('subscriptions'),
      KeyConditionExpression: 'topic = :topic',
      ExpressionAttributeValues: { ':topic': topic },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return result.Count ?? 0;
};

describe('topic bodies', () => {
  it('enforces the name rule and refuses unknown fields', () => {
    expect(parseOrThrow(createTopicSchema, { name: 'orders.eu-1_x' })).toEqual({ name: 'orders.eu-1_x' });
    for (const name of ['', 'Orders', '-orders', '.x', 'a b', 'a'.repeat(129), 'a/b']) {
      expect(() => parseOrThrow(createTopicSchema, { name })).toThrow(ServiceError);
    }
    expect(() => parseOrThrow(createTopicSchema, { name: 'a'.repeat(128) })).not.toThrow();
    expect(() => parseOrThrow(createTopicSchema, { name: 'x', colour: 'red' })).toThrow(ServiceError);
    expect(() => parseOrThrow(createSubscriptionSchema, { topic: 'x', user: 'a' })).toThrow(ServiceError);
  });
});

describe('topics', () => {
  it('creates a topic with zero subscribers and refuses a second one of the same name (409)', async () => {
    const name = unique('news');
    const created = await createTopic(service(), { name, description: 'News' });
    expect(created).toEqual({
      name,
      description: 'News',
      created_at: expect.any(String),
      subscriber_count: 0,
    });
    expect(await getTopic(name)).toEqual(created);
    expect((await errorOf(createTopic(user('admin'), { name }))).status).toBe(409);
  });

  it('answers 404 for an unknown topic and for a name that cannot exist', async () => {
    expect((await errorOf(getTopic(unique('missing')))).status).toBe(404);
    expect((await errorOf(getTopic('Not A Topic'))).status).toBe(404);
  });

  it('lets exactly one of two racing creators win', async () => {
    const name = unique('race');
    const outcomes = await Promise.allSettled([
      createTopic(service(), { name }),
      createTopic(service(), { name }),
      createTopic(service(), { name }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
  });

  it('reports subscriber counts of several topics and 404 for an unknown one', async () => {
    const [a, b] = [await newTopic(), await newTopic()];
    await subscribe(user('u1'), { topic: a });
    await subscribe(user('u2'), { topic: a });
    await subscribe(user('u1'), { topic: b });
    expect(Object.fromEntries(await subscriberCounts([a, b]))).toEqual({ [a]: 2, [b]: 1 });
    expect((await errorOf(subscriberCounts([a, unique('nope')]))).status).toBe(404);
  });
});

describe('subscriptions', () => {
  it('subscribes a user, counts it, and returns the existing subscription the second time', async () => {
    const topic = await newTopic();
    const first = await subscribe(user('alice'), { topic });
    expect(first.created).toBe(true);
    expect(first.subscription).toEqual({
      id: subscriptionIdFor(topic, 'alice'),
      topic,
      user_id: 'alice',
      created_at: expect.any(String),
    });
    const again = await subscribe(user('alice'), { topic, user_id: 'alice' });
    expect(again).toEqual({ subscription: first.subscription, created: false });
    expect((await getTopic(topic)).subscriber_count).toBe(1);
  });

  it('refuses a user subscribing someone else (403), a service without user_id (400), an unknown topic (404)', async () => {
    const topic = await newTopic();
    expect((await errorOf(subscribe(user('alice'), { topic, user_id: 'bob' }))).status).toBe(403);
    expect((await errorOf(subscribe(service(), { topic }))).status).toBe(400);
    expect((await errorOf(subscribe(user('alice'), { topic: unique('none') }))).status).toBe(404);
    expect((await getTopic(topic)).subscriber_count).toBe(0);
  });

  it('lets a service subscribe any user', async () => {
    const topic = await newTopic();
    const { subscription } = await subscribe(service(), { topic, user_id: 'carol' });
    expect(subscription.user_id).toBe('carol');
    expect((await listSubscriptions('carol')).map((item) => item.topic)).toContain(topic);
  });

  it('lists only the user’s own subscriptions', async () => {
    const [a, b] = [await newTopic(), await newTopic()];
    const dave = unique('dave');
    const erin = unique('erin');
    await subscribe(user(dave), { topic: a });
    await subscribe(user(dave), { topic: b });
    await subscribe(user(erin), { topic: a });
    const own = await listSubscriptions(dave);
    expect(own.map((item) => item.topic).sort()).toEqual([a, b].sort());
    expect(own.every((item) => item.user_id === dave)).toBe(true);
  });

  it('deletes one’s own subscription and decrements the count; another’s or an unknown id is 404', async () => {
    const topic = await newTopic();
    const { subscription } = await subscribe(user('frank'), { topic });
    expect((await errorOf(unsubscribe(user('grace'), subscription.id))).status).toBe(404);
    expect((await errorOf(unsubscribe(user('frank'), 'not-an-id'))).status).toBe(404);
    await unsubscribe(user('frank'), subscription.id);
    expect((await getTopic(topic)).subscriber_count).toBe(0);
    expect((await errorOf(unsubscribe(user('frank'), subscription.id))).status).toBe(404);
    expect((await getTopic(topic)).subscriber_count).toBe(0);
  });

  it('parses only ids it issued', () => {
    const id = subscriptionIdFor('news', 'user\nwith newline');
    expect(parseSubscriptionId(id)).toEqual({ topic: 'news', userId: 'user\nwith newline' });
    expect(parseSubscriptionId(`${id}=`)).toBeUndefined();
    expect(parseSubscriptionId(Buffer.from('no-newline').toString('base64url'))).toBeUndefined();
    expect(parseSubscriptionId('')).toBeUndefined();
  });

  it('keeps subscriber_count exact under concurrent subscribes, repeats and unsubscribes', async () => {
    const topic = await newTopic();
    const users = Array.from({ length: 30 }, (_, index) => `c-${index}`);
    // Everyone subscribes twice at once; then half unsubscribe while the other half subscribe again.
    await Promise.all(
      users.flatMap((id) => [subscribe(user(id), { topic }), subscribe(user(id), { topic })]),
    );
    expect((await getTopic(topic)).subscriber_count).toBe(30);
    const leaving = users.slice(0, 15);
    const staying = users.slice(15);
    const outcomes = await Promise.allSettled([
      ...leaving.flatMap((id) => [
        unsubscribe(user(id), subscriptionIdFor(topic, id)),
        unsubscribe(user(id), subscriptionIdFor(topic, id)),
      ]),
      ...staying.map((id) => subscribe(user(id), { topic })),
    ]);
    // Of each leaving user's two unsubscribes exactly one succeeds; the other is a 404.
    const failures = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(failures).toHaveLength(15);
    for (const failure of failures) {
      expect(((failure as PromiseRejectedResult).reason as ServiceError).status).toBe(404);
    }
    expect((await getTopic(topic)).subscriber_count).toBe(15);
    expect(await storedSubscribers(topic)).toBe(15);
  });

  it('pages a topic’s subscribers by key, in user order', async () => {
    const topic = await newTopic();
    const users = Array.from({ length: 7 }, (_, index) => `p-${index}`);
    for (const id of users) await subscribe(user(id), { topic });
    const first = await subscribersPage(topic, undefined, 3);
    const second = await subscribersPage(topic, first.lastUserId, 3);
    const third = await subscribersPage(topic, second.lastUserId, 3);
    expect([...first.userIds, ...second.userIds, ...third.userIds]).toEqual(users);
    expect(third.lastUserId).toBeUndefined();
  });
});
