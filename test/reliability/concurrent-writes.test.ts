/**
 * Writes that race on one thing end with one winner and clear answers for the rest, never a 5xx: ten users
 * registering one device token, ten creations of one topic, subscribes and unsubscribes of one subscription in
 * any mix, one Idempotency-Key with ten different bodies, ten deletes of one webhook. Over real HTTP on the local
 * runtime, every request of a round sent at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/api';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

const RACERS = LONG ? 30 : 10;

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime();
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
});

const times = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));

/** How many answers had each status, e.g. `{ 201: 1, 409: 9 }`. */
const statuses = (answers: readonly { status: number }[]) => {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

describe('concurrent writes to one thing', () => {
  it('one device token registered by many users at once has exactly one owner', async () => {
    const users = await times(RACERS, (index) => runtime.mintUserToken(`racer-${index}`));
    const answers = await times(RACERS, (index) =>
      api('POST', '/devices', users[index], { token: 'raced-device', platform: 'android' }),
    );
    expect(statuses(answers)).toEqual({ 201: RACERS });
    const lists = await Promise.all(users.map((user) => api('GET', '/devices', user)));
    const owners = lists.filter((list) =>
      list.body.items.some((item: { token: string }) => item.token === 'raced-device'),
    );
    expect(owners).toHaveLength(1);
  });

  it('one topic created many times at once: one 201, the rest 409', async () => {
    const admin = await runtime.mintServiceToken('racer', ['topics:admin']);
    const answers = await times(RACERS, () => api('POST', '/topics', admin, { name: 'raced-topic' }));
    expect(statuses(answers)).toEqual({ 201: 1, 409: RACERS - 1 });
  });

  it('subscribes and unsubscribes of one subscription in any mix leave the count equal to what is stored', async () => {
    const writer = await runtime.mintServiceToken('racer', ['topics:admin', 'notifications:write']);
    await api('POST', '/topics', writer, { name: 'raced-subscription' });
    const subscribe = () =>
      api('POST', '/subscriptions', writer, { topic: 'raced-subscription', user_id: 'racer' });
    const { body } = await subscribe();
    for (let round = 0; round < 3; round++) {
      const answers = await times(RACERS * 2, (index) =>
        index % 2 ? api('DELETE', `/subscriptions/${body.id}`, writer) : subscribe(),
      );
      expect(
        answers.every(({ status }) => [200, 201, 204, 404].includes(status)),
        JSON.stringify(statuses(answers)),
      ).toBe(true);
      const count = (await api('GET', '/topics/raced-subscription', writer)).body.subscriber_count;
      const removed = await api('DELETE', `/subscriptions/${body.id}`, writer);
      expect({ count, removed: removed.status }).toEqual(
        count === 1 ? { count, removed: 204 } : { count: 0, removed: 404 },
      );
      expect((await api('GET', '/topics/raced-subscription', writer)).body.subscriber_count).toBe(0);
    }
  });

  it('one Idempotency-Key with different bodies at once: one 202, the rest 409', async () => {
    const writer = await runtime.mintServiceToken('racer', ['notifications:write']);
    const answers = await times(RACERS, (index) =>
      api(
        'POST',
        '/notifications',
        writer,
        { event_type: 'race.test', title: `body ${index}`, recipient_ids: ['racer'] },
        { 'idempotency-key': 'raced-key' },
      ),
    );
    expect(statuses(answers)).toEqual({ 202: 1, 409: RACERS - 1 });
  });

  it('one webhook deleted many times at once: one 204, the rest 404', async () => {
    const admin = await runtime.mintServiceToken('racer', ['webhooks:admin']);
    const created = await api('POST', '/webhooks', admin, {
      url: 'http://127.0.0.1:9/raced',
      secret: 'a-raced-webhook-secret',
      event_filters: ['race.test'],
      name: 'raced',
    });
    expect(created.status).toBe(201);
    const answers = await times(RACERS, () => api('DELETE', `/webhooks/${created.body.id}`, admin));
    expect(statuses(answers)).toEqual({ 204: 1, 404: RACERS - 1 });
  });
});
