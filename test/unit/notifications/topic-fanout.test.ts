import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { ServiceError } from '../../../lambdas/core/errors';
import type { Principal } from '../../../lambdas/core/principal';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { createNotification } from '../../../lambdas/domain/notifications/create';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { fanoutQueue, planMessages } from '../../../lambdas/domain/notifications/fanout-messages';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import { subscribe } from '../../../lambdas/domain/topics/subscriptions';
import { createTopic } from '../../../lambdas/domain/topics/topics';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { handlingOf, useQueuesWithoutWorkers } from '../../support/queues';

useDynamoDbLocal();

const service: Principal = { kind: 'service', id: 'crm', scopes: ['notifications:write'], expiresAt: 0 };
const user = (id: string): Principal => ({
  kind: 'user',
  id,
  roles: [],
  isAdmin: false,
  expiresAt: 0,
  acceptedUntil: 0,
});
const queues = useQueuesWithoutWorkers();

/** Runs the fan-out worker's logic on every message until the queue is empty; returns the kinds seen. */
const drainFanout = async (): Promise<string[]> => {
  const kinds: string[] = [];
  for (;;) {
    const taken = await queues.take(fanoutQueue);
    if (taken.length === 0) return kinds;
    await Promise.all(
      taken.map(({ message, messageId }) => {
        kinds.push(message.kind);
        return processFanoutMessage(message, handlingOf(messageId));
      }),
    );
  }
};

const receiversOf = async (userId: string, notificationId: string) => {
  const result = await documentClient().send(
    new QueryCommand({
      TableName: tableName('receivers'),
      KeyConditionExpression: 'user_id = :user',
      FilterExpression: 'notification_id = :id',
      ExpressionAttributeValues: { ':user': userId, ':id': notificationId },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
};

let seq = 0;
const unique = (prefix: string) => {
  seq += 1;
  return `${prefix}-${Date.now()}-${seq}`;
};

const body = (extra: Record<string, unknown>) =>
  parseOrThrow(createNotificationSchema, { event_type: 'digest.ready', title: 'Digest', ...extra });

describe('notification bodies with topics', () => {
  it('accepts topics with or without recipients, and still needs one of them', () => {
    expect(body({ topics: ['news'] })).toMatchObject({ topics: ['news'], recipient_ids: [] });
    expect(body({ topics: ['news'], recipient_ids: [] }).recipient_ids).toEqual([]);
    expect(() => body({ recipient_ids: [] })).toThrow(ServiceError);
    // Neither: the schema lets it through (a user token means itself); a service's is refused in createNotification.
    expect(body({})).toMatchObject({ recipient_ids: [], topics: [] });
    expect(() => body({ topics: [] })).toThrow(ServiceError);
    expect(() => body({ topics: ['news', 'news'] })).toThrow(ServiceError);
    expect(() => body({ topics: ['Not A Topic'] })).toThrow(ServiceError);
  });
});

describe('topic fan-out', () => {
  it('refuses topics from a user (403) and unknown topics (404)', async () => {
    const topic = (await createTopic(service, { name: unique('t') })).name;
    const forbidden = await createNotification(user('u'), body({ topics: [topic] }), unique('n')).catch(
      (error: ServiceError) => error.status,
    );
    expect(forbidden).toBe(403);
    const missing = await createNotification(service, body({ topics: [unique('none')] }), unique('n')).catch(
      (error: ServiceError) => error.status,
    );
    expect(missing).toBe(404);
  });

  it('plans recipient lists as chunks of 100 plus a first page per topic', () => {
    expect(planMessages({ id: 'n', recipient_ids: ['a'], topics: ['x', 'y'] })).toEqual([
      { kind: 'chunk', notification_id: 'n', recipients: ['a'] },
      { kind: 'topic-page', notification_id: 'n', topic: 'x' },
      { kind: 'topic-page', notification_id: 'n', topic: 'y' },
    ]);
    expect(planMessages({ id: 'n', recipient_ids: [], topics: ['x'] })).toEqual([
      { kind: 'topic-page', notification_id: 'n', topic: 'x' },
    ]);
  });

  it('reaches every subscriber of every topic exactly once, recipients and overlaps included', async () => {
    const [news, sports] = [unique('news'), unique('sports')];
    await createTopic(service, { name: news });
    await createTopic(service, { name: sports });
    // 2,500 subscribers of news (several pages of 1,000), 300 of sports, 100 of them in both.
    const newsUsers = Array.from({ length: 2500 }, (_, index) => `fan-${String(index).padStart(5, '0')}`);
    const sportsUsers = [...newsUsers.slice(0, 100), ...Array.from({ length: 200 }, (_, i) => `sport-${i}`)];
    const seed = async (topic: string, users: readonly string[]) => {
      for (let start = 0; start < users.length; start += 25) {
        await documentClient().send(
          new BatchWriteCommand({
            RequestItems: {
              [tableName('subscriptions')]: users.slice(start, start + 25).map((userId) => ({
                PutRequest: { Item: { topic, user_id: userId, id: `${topic}/${userId}`, created_at: '' } },
              })),
            },
          }),
        );
      }
    };
    await seed(news, newsUsers);
    await seed(sports, sportsUsers);
    await subscribe(user('direct-and-subscriber'), { topic: news });

    const id = unique('n');
    const recipients = ['direct-and-subscriber', 'fan-00007', 'only-direct'];
    const created = await createNotification(
      service,
      body({ recipient_ids: recipients, topics: [news, sports] }),
      id,
    );
    // The seeded rows bypassed the counter; the one real subscription counts: 3 + 1 + 0.
    expect(created.body).toMatchObject({ id, status: 'accepted', recipient_count: 4 });

    const kinds = await drainFanout();
    // news: pages of 1,000, 1,000 and 501 (the last page may be followed by an empty one); sports: one page.
    expect(kinds.filter((kind) => kind === 'topic-page').length).toBeGreaterThanOrEqual(4);

    const everyone = new Set([...recipients, ...newsUsers, ...sportsUsers, 'direct-and-subscriber']);
    const sample = [
      ...recipients,
      'fan-00000',
      'fan-00999',
      'fan-01000',
      'fan-02499',
      'sport-0',
      'sport-199',
    ];
    for (const userId of sample) expect(await receiversOf(userId, id)).toHaveLength(1);
    const counts = await Promise.all(
      [...everyone].map(async (userId) => (await receiversOf(userId, id)).length),
    );
    expect(counts.filter((count) => count !== 1)).toEqual([]);
    expect(counts).toHaveLength(everyone.size);
    expect(await receiversOf('not-subscribed', id)).toHaveLength(0);
  }, 120_000);
});
