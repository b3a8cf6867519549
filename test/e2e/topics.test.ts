import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchWriteCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { countQuery } from '../../lambdas/core/paging';
import { SUBSCRIBERS_PAGE } from '../../lambdas/domain/topics/subscriptions';
import { envNames } from '../../lib/wiring';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
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

/**
 * Subscriptions seeded straight into the table for speed (25 per BatchWriteItem, a few batches in flight); the
 * topic's subscriber_count is not touched.
 */
const seedSubscribers = async (topic: string, users: readonly string[]) => {
  const batches: string[][] = [];
  for (let start = 0; start < users.length; start += 25) batches.push(users.slice(start, start + 25));
  const seedBatch = async (batch: string[]) => {
    let requests: Record<string, unknown>[] | undefined = batch.map((user) => ({
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
};

/** Subscriptions stored for the topic (a Query of its partition, every page counted). */
const storedSubscriptions = (topic: string): Promise<number> =>
  countQuery({
    TableName: tableName('subscriptions'),
    KeyConditionExpression: 'topic = :topic',
    ExpressionAttributeValues: { ':topic': topic },
    ConsistentRead: true,
  });

/** Waits until the purge has removed every subscription of the topic. */
const purged = async (topic: string) =>
  expect(
    await eventually(
      () => storedSubscriptions(topic),
      (count) => count === 0,
      60_000,
    ),
  ).toBe(0);

/** Creates the topic again once its purge has deleted it (409 until then). */
const createdAgain = (topic: string) =>
  eventually(
    () => api('POST', '/topics', service, { name: topic }),
    (answer) => answer.status === 201,
    30_000,
  );

describe('listing and deleting topics', () => {
  it('lists every topic with its subscriber count, a page at a time, to a service or an admin only', async () => {
    const names = [await newTopic(), await newTopic(), await newTopic()];
    const alice = await tokenOf('alice');
    expect((await api('POST', '/subscriptions', alice, { topic: names[1] })).status).toBe(201);
    const listed = new Map<string, number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await api('GET', `/topics?limit=2${cursor ? `&cursor=${cursor}` : ''}`, service);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      for (const topic of page.body.items) {
        expect(listed.has(topic.name)).toBe(false);
        listed.set(topic.name, topic.subscriber_count);
      }
      cursor = page.body.next_cursor;
      pages += 1;
    } while (cursor);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(names.map((name) => listed.get(name))).toEqual([0, 1, 0]);
    const admin = await runtime.mintUserToken(userId('boss'), { roles: ['admin'] });
    expect((await api('GET', '/topics', admin)).status).toBe(200);
    expect((await api('GET', '/topics', alice)).status).toBe(403);
    expect((await api('GET', '/topics?cursor=Not%20A%20Topic', service)).status).toBe(400);
  });

  it('deletes a topic with its 1,200 subscriptions in the background: 404 at once, then gone, then free to reuse', async () => {
    const topic = await newTopic();
    const alice = await tokenOf('alice');
    const own = await api('POST', '/subscriptions', alice, { topic });
    expect(own.status).toBe(201);
    // More than one page (1,000) of the purge.
    await seedSubscribers(
      topic,
      Array.from({ length: 1200 }, (_, index) => `gone-${run}-${String(index).padStart(4, '0')}`),
    );
    expect((await api('DELETE', `/topics/${topic}`, alice)).status).toBe(403);
    const deleted = await api('DELETE', `/topics/${topic}`, service);
    expect(deleted).toEqual({ status: 202, body: { name: topic, status: 'deleting' } });
    // Gone for every route from the 202 on.
    expect((await api('GET', `/topics/${topic}`, service)).status).toBe(404);
    expect((await api('POST', '/subscriptions', alice, { topic })).status).toBe(404);
    const notify = { event_type: 'gone.topic', title: 'Anyone?', topics: [topic] };
    expect((await api('POST', '/notifications', notifier, notify)).status).toBe(404);
    const listed = await api('GET', '/topics?limit=100', service);
    expect(listed.body.items.map((item: { name: string }) => item.name)).not.toContain(topic);
    // A repeat while the purge runs is accepted again; once it is done, 404.
    expect([202, 404]).toContain((await api('DELETE', `/topics/${topic}`, service)).status);
    await purged(topic);
    const recreated = await createdAgain(topic);
    expect(recreated.body).toMatchObject({ name: topic, subscriber_count: 0 });
    expect((await api('GET', '/subscriptions', alice)).body.items).not.toContainEqual(own.body);
    expect((await api('DELETE', `/subscriptions/${own.body.id}`, alice)).status).toBe(404);
  }, 120_000);

  it('leaves a new topic of the same name alone when a purge message comes again', async () => {
    const topic = await newTopic();
    expect((await api('DELETE', `/topics/${topic}`, service)).status).toBe(202);
    await createdAgain(topic);
    const bob = await tokenOf('bob');
    expect((await api('POST', '/subscriptions', bob, { topic })).status).toBe(201);
    // The purge's message again, as SQS may deliver it late: the new topic keeps its subscriber.
    const sqs = new SQSClient({});
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: process.env[envNames.queueUrl('fanout')],
        MessageBody: JSON.stringify({ kind: 'topic-purge', topic }),
      }),
    );
    sqs.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      await eventually(
        () => queueIdle('fanout'),
        (idle) => idle,
        30_000,
      ),
    ).toBe(true);
    expect(await storedSubscriptions(topic)).toBe(1);
    expect(await subscriberCount(topic)).toBe(1);
    expect((await api('DELETE', `/topics/${topic}`, service)).status).toBe(202);
    await purged(topic);
  });
});

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
    await seedSubscribers(topic, subscribers);
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
