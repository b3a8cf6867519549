import { BatchWriteCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { SUBSCRIBERS_PAGE } from '../../lambdas/domain/topics/subscriptions';
import { apiClient, eventually } from '../support/api';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * Subscribers of the big topic: in `npm test` 2,500, which still crosses two boundaries of the fan-out's
 * subscriber pages (SUBSCRIBERS_PAGE, 1,000); the full 10,000 in the long form (`npm run test:reliability`).
 */
const BIG_TOPIC_SUBSCRIBERS = LONG ? 10_000 : 2.5 * SUBSCRIBERS_PAGE;

let runtime: Runtime;
let service: string;
let notifier: string;
let run = 0;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = await runtime.mintServiceToken('catalog', []);
  notifier = await runtime.mintServiceToken('crm', ['notifications:write']);
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

let seq = 0;
const topicName = (name: string) => {
  seq += 1;
  return `${name}-${run}-${seq}`;
};
const userId = (name: string) => `${name}-${run}`;
const tokenOf = (name: string) => runtime.mintUserToken(userId(name));

const newTopic = async (name = topicName('t')) => {
  expect((await api('POST', '/topics', service, { name })).status).toBe(201);
  return name;
};

const subscriberCount = async (topic: string) =>
  (await api('GET', `/topics/${topic}`, service)).body.subscriber_count as number;

/** Counts the receivers of a notification (test-only Scan; the service never scans). */
const receiversOfNotification = async (notificationId: string): Promise<number> => {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new ScanCommand({
        TableName: tableName('receivers'),
        FilterExpression: 'notification_id = :id',
        ExpressionAttributeValues: { ':id': notificationId },
        Select: 'COUNT',
        ExclusiveStartKey: startKey,
      }),
    );
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
};

const receiversOf = async (user: string, notificationId: string) => {
  const result = await documentClient().send(
    new QueryCommand({
      TableName: tableName('receivers'),
      KeyConditionExpression: 'user_id = :user',
      FilterExpression: 'notification_id = :id',
      ExpressionAttributeValues: { ':user': user, ':id': notificationId },
    }),
  );
  return result.Count ?? 0;
};

describe('topics', () => {
  it('a user may not create a topic (403); an admin and any service may (201)', async () => {
    const user = await tokenOf('plain');
    expect((await api('POST', '/topics', user, { name: topicName('x') })).status).toBe(403);
    const admin = await runtime.mintUserToken(userId('boss'), { roles: ['admin'] });
    const name = topicName('admin');
    const created = await api('POST', '/topics', admin, { name, description: 'By an admin' });
    expect(created).toEqual({
      status: 201,
      body: { name, description: 'By an admin', created_at: expect.any(String), subscriber_count: 0 },
    });
    const bare = await api('POST', '/topics', service, { name: topicName('svc') });
    expect(bare.status).toBe(201);
    expect(bare.body.description).toBeNull();
    // What GET returns can be sent back: a null description is no description.
    const copied = await api('POST', '/topics', service, { name: topicName('copy'), description: null });
    expect(copied.status).toBe(201);
    expect(copied.body.description).toBeNull();
    expect((await api('POST', '/topics', undefined, { name: topicName('anon') })).status).toBe(401);
  });

  it('refuses a duplicate name (409), a bad name and unknown fields (400)', async () => {
    const name = await newTopic();
    expect((await api('POST', '/topics', service, { name })).body.code).toBe('conflict');
    expect((await api('POST', '/topics', service, { name: 'Upper' })).status).toBe(400);
    expect((await api('POST', '/topics', service, { name: '.dot' })).status).toBe(400);
    expect((await api('POST', '/topics', service, { name: topicName('y'), x: 1 })).status).toBe(400);
  });

  it('GET /topics/{name} answers the topic to users and services, 404 for an unknown one', async () => {
    const name = await newTopic();
    const user = await tokenOf('reader');
    expect((await api('GET', `/topics/${name}`, user)).body).toMatchObject({ name, subscriber_count: 0 });
    expect((await api('GET', `/topics/${topicName('none')}`, user)).status).toBe(404);
  });
});

describe('subscriptions', () => {
  it('subscribes oneself (201), returns the existing one again (200) and counts it once', async () => {
    const topic = await newTopic();
    const alice = await tokenOf('alice');
    const first = await api('POST', '/subscriptions', alice, { topic });
    expect(first).toEqual({
      status: 201,
      body: { id: expect.any(String), topic, user_id: userId('alice'), created_at: expect.any(String) },
    });
    const again = await api('POST', '/subscriptions', alice, { topic });
    expect(again).toEqual({ status: 200, body: first.body });
    expect(await subscriberCount(topic)).toBe(1);
    const own = await api('GET', '/subscriptions', alice);
    expect(own.body.items).toContainEqual(first.body);
  });

  it('refuses another user’s id from a user (403) and from a service without notifications:write (403)', async () => {
    const topic = await newTopic();
    const alice = await tokenOf('alice');
    expect((await api('POST', '/subscriptions', alice, { topic, user_id: userId('bob') })).status).toBe(403);
    expect((await api('POST', '/subscriptions', service, { topic, user_id: userId('bob') })).status).toBe(
      403,
    );
    const byService = await api('POST', '/subscriptions', notifier, { topic, user_id: userId('bob') });
    expect(byService.status).toBe(201);
    expect(byService.body.user_id).toBe(userId('bob'));
    expect(await subscriberCount(topic)).toBe(1);
  });

  it('answers 404 for an unknown topic', async () => {
    const alice = await tokenOf('alice');
    expect((await api('POST', '/subscriptions', alice, { topic: topicName('nope') })).status).toBe(404);
  });

  it('lists only one’s own, deletes one’s own (204) and answers 404 for another’s', async () => {
    const topic = await newTopic();
    const [carol, dave] = [await tokenOf('carol'), await tokenOf('dave')];
    const mine = (await api('POST', '/subscriptions', carol, { topic })).body;
    const theirs = (await api('POST', '/subscriptions', dave, { topic })).body;
    const carolsList = (await api('GET', '/subscriptions', carol)).body.items as { user_id: string }[];
    expect(carolsList.every((item) => item.user_id === userId('carol'))).toBe(true);
    expect(carolsList).not.toContainEqual(theirs);
    expect((await api('DELETE', `/subscriptions/${theirs.id}`, carol)).status).toBe(404);
    expect((await api('DELETE', '/subscriptions/garbage', carol)).status).toBe(404);
    expect(await subscriberCount(topic)).toBe(2);
    const deleted = await api('DELETE', `/subscriptions/${mine.id}`, carol);
    expect(deleted).toEqual({ status: 204, body: undefined });
    expect(await subscriberCount(topic)).toBe(1);
    expect((await api('DELETE', `/subscriptions/${mine.id}`, carol)).status).toBe(404);
    expect((await api('GET', '/subscriptions', carol)).body.items).not.toContainEqual(mine);
  });

  it('keeps subscriber_count exact under concurrent subscribe and unsubscribe requests', async () => {
    const topic = await newTopic();
    const users = await Promise.all(Array.from({ length: 12 }, (_, index) => tokenOf(`conc-${index}`)));
    const subscribed = await Promise.all(
      users.flatMap((token) => [
        api('POST', '/subscriptions', token, { topic }),
        api('POST', '/subscriptions', token, { topic }),
      ]),
    );
    expect(subscribed.every((response) => response.status === 201 || response.status === 200)).toBe(true);
    expect(await subscriberCount(topic)).toBe(12);
    const ids = subscribed
      .filter((_, index) => index % 2 === 0)
      .map((response) => response.body.id as string);
    await Promise.all([
      ...users
        .slice(0, 6)
        .flatMap((token, index) => [
          api('DELETE', `/subscriptions/${ids[index]}`, token),
          api('DELETE', `/subscriptions/${ids[index]}`, token),
        ]),
      ...users.slice(6).map((token) => api('POST', '/subscriptions', token, { topic })),
    ]);
    expect(await subscriberCount(topic)).toBe(6);
  });
});

describe('notifications to topics', () => {
  it('a user may not name topics (403)', async () => {
    const topic = await newTopic();
    const alice = await tokenOf('alice');
    const response = await api('POST', '/notifications', alice, {
      event_type: 'digest.ready',
      title: 'Digest',
      recipient_ids: [userId('alice')],
      topics: [topic],
    });
    expect(response.status).toBe(403);
  });

  it('reaches a user who is both a recipient and a subscriber exactly once', async () => {
    const topic = await newTopic();
    const [erin, frank] = [await tokenOf('erin'), await tokenOf('frank')];
    await api('POST', '/subscriptions', erin, { topic });
    await api('POST', '/subscriptions', frank, { topic });
    const before = (await api('GET', '/notifications/unread-count', erin)).body.count as number;
    const created = await api('POST', '/notifications', notifier, {
      event_type: 'digest.ready',
      title: 'Weekly digest',
      recipient_ids: [userId('erin')],
      topics: [topic],
    });
    // recipient_count: the recipient plus the topic's subscribers at request time (an upper bound).
    expect(created).toEqual({
      status: 202,
      body: { id: expect.any(String), status: 'accepted', recipient_count: 3, scheduled_at: null },
    });
    // Frank through the topic's page on the `fanout` queue: a generous ceiling for a loaded machine.
    await eventually(
      () => receiversOfNotification(created.body.id),
      (count) => count >= 2,
      60_000,
    );
    expect(await receiversOf(userId('erin'), created.body.id)).toBe(1);
    expect(await receiversOf(userId('frank'), created.body.id)).toBe(1);
    expect((await api('GET', '/notifications/unread-count', erin)).body.count).toBe(before + 1);
    const feed = (await api('GET', '/notifications?limit=100', erin)).body.items as {
      notification_id: string;
    }[];
    expect(feed.filter((item) => item.notification_id === created.body.id)).toHaveLength(1);
  }, 90_000);

  it(`fans out to a topic with ${BIG_TOPIC_SUBSCRIBERS.toLocaleString('en')} subscribers, one receiver each`, async () => {
    const topic = await newTopic();
    const subscribers = Array.from(
      { length: BIG_TOPIC_SUBSCRIBERS },
      (_, index) => `big-${run}-${String(index).padStart(5, '0')}`,
    );
    // Seeded straight into the table for speed (25 per BatchWriteItem, a few batches in flight).
    const batches: string[][] = [];
    for (let start = 0; start < subscribers.length; start += 25)
      batches.push(subscribers.slice(start, start + 25));
    const seedBatch = async (users: string[]) => {
      let requests: Record<string, unknown>[] | undefined = users.map((user) => ({
        PutRequest: {
          Item: { topic, user_id: user, id: `${topic}/${user}`, created_at: new Date().toISOString() },
        },
      }));
      while (requests && requests.length > 0) {
        const result = await documentClient().send(
          new BatchWriteCommand({ RequestItems: { [tableName('subscriptions')]: requests as never } }),
        );
        requests = result.UnprocessedItems?.[tableName('subscriptions')] as
          | Record<string, unknown>[]
          | undefined;
      }
    };
    for (let index = 0; index < batches.length; index += 8) {
      await Promise.all(batches.slice(index, index + 8).map(seedBatch));
    }
    const created = await api('POST', '/notifications', notifier, {
      event_type: 'announcement',
      title: 'Hello, everyone',
      topics: [topic],
    });
    expect(created.status).toBe(202);
    const count = await eventually(
      () => receiversOfNotification(created.body.id),
      (value) => value >= BIG_TOPIC_SUBSCRIBERS,
      90_000,
    );
    expect(count).toBe(BIG_TOPIC_SUBSCRIBERS);
    const last = BIG_TOPIC_SUBSCRIBERS - 1;
    const page = SUBSCRIBERS_PAGE;
    const sample = [0, 1, page - 1, page, 2 * page - 1, 2 * page, last - 1, last].map(
      (index) => subscribers[index] as string,
    );
    for (const user of sample) expect(await receiversOf(user, created.body.id)).toBe(1);
  }, 150_000);
});
