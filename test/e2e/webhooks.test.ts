import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { metering } from '../../local/lambda/runner';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { storeWebhook } from '../support/webhooks';
import { type Answer, WebhookReceiver } from './webhook-receiver';

/**
 * Webhooks on the local runtime, end to end: POST /events → bus → matcher → delivery worker → a real receiver
 * on 127.0.0.1 that checks every signature with the `standardwebhooks` package. The retry schedule is
 * shortened by configuration (1 s, 1 s, 4 s: four attempts; SQS's longest delay is set to 1.5 s, so the last
 * wait is queued for 1 s with its rest, which the delivery worker waits out through a one-time schedule).
 */
let runtime: Runtime;
let admin: string;
let publisher: string;
const receiver = new WebhookReceiver();
let endpointCount = 0;

// Each test may wait up to a minute for a delivery to settle (settled above).
vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  await receiver.start();
  runtime = await startTestRuntime({
    env: {
      NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s,1s,4s',
      NOTIFY_WEBHOOK_MAX_QUEUE_DELAY_SECS: '1.5',
      // Well under the slow receiver's 8 s below, well over a loaded machine's stall (the receiver runs in this
      // process: a 1.5 s timeout turned a stall into a timeout and a retry, breaking exact request counts).
      NOTIFY_WEBHOOK_TIMEOUT_MS: '5000',
    },
  });
  admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
  publisher = await runtime.mintServiceToken('shop', ['events:publish']);
});
afterAll(async () => {
  await runtime?.stop();
  await receiver.stop();
});

const api = apiClient(() => runtime.httpUrl);

/** What crosses the bus and queues gets a minute on a loaded machine (a ceiling, not a wait). */
const settled = <T>(read: () => Promise<T> | T, done: (value: T) => boolean) =>
  eventually(read, done, 60_000);

/** A fresh endpoint path on the receiver and a webhook pointing at it. */
const webhookFor = async (
  filters: string[],
  answers: Answer[] = [{ status: 200 }],
  secret = `s3cret-${randomBytes(8).toString('hex')}`,
) => {
  endpointCount += 1;
  const path = `/hook/${endpointCount}`;
  const url = receiver.endpoint(path, secret, answers);
  const created = await api('POST', '/webhooks', admin, {
    url,
    secret,
    event_filters: filters,
    name: `hook ${endpointCount}`,
  });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, path, secret, url, view: created.body };
};

const publish = async (eventType: string, data: Record<string, unknown> = { n: 1 }) => {
  const published = await api('POST', '/events', publisher, {
    event_type: eventType,
    source: 'shop',
    version: 2,
    data,
  });
  expect(published.status).toBe(202);
  return published.body.id as string;
};

const deliveries = async (webhookId: string, query = '') =>
  (await api('GET', `/webhooks/${webhookId}/deliveries${query}`, admin)).body;

describe('webhook management', () => {
  it('creates a webhook without ever returning or storing the secret in clear', async () => {
    const hook = await webhookFor(['orders.*']);
    expect(hook.view).toEqual({
      id: hook.id,
      name: `hook ${endpointCount}`,
      url: hook.url,
      event_filters: ['orders.*'],
      created_at: expect.any(String),
      enabled: true,
    });
    const listed = await api('GET', '/webhooks', admin);
    expect(listed.status).toBe(200);
    const item = listed.body.items.find((entry: { id: string }) => entry.id === hook.id);
    expect(item).toEqual(hook.view);
    expect(JSON.stringify(listed.body)).not.toContain(hook.secret);
    // A dump of the table holds only the sealed secret.
    const stored = await documentClient().send(
      new GetCommand({ TableName: tableName('webhooks'), Key: { id: hook.id } }),
    );
    expect(JSON.stringify(stored.Item)).not.toContain(hook.secret);
    expect(JSON.stringify(stored.Item)).not.toContain(Buffer.from(hook.secret).toString('base64'));
  });

  it('refuses bad bodies with field details', async () => {
    const url = receiver.endpoint('/hook/invalid', 'x'.repeat(16));
    const short = await api('POST', '/webhooks', admin, {
      url,
      secret: 'short',
      event_filters: ['*'],
      name: 'x',
    });
    expect(short.status).toBe(400);
    expect(short.body.details).toContainEqual({ field: 'secret', issue: expect.any(String) });
    // Node's lax base64 would drop the bad characters and sign with an empty key.
    const notBase64 = await api('POST', '/webhooks', admin, {
      url,
      secret: `whsec_${'!'.repeat(24)}`,
      event_filters: ['*'],
      name: 'x',
    });
    expect(notBase64.status).toBe(400);
    expect(notBase64.body.details).toContainEqual({
      field: 'secret',
      issue: expect.stringContaining('base64'),
    });
    const filters = await api('POST', '/webhooks', admin, {
      url,
      secret: 'x'.repeat(16),
      event_filters: ['orders.*.created'],
      name: 'x',
    });
    expect(filters.status).toBe(400);
    expect(filters.body.details).toContainEqual({ field: 'event_filters[0]', issue: expect.any(String) });
    const empty = await api('POST', '/webhooks', admin, {
      url,
      secret: 'x'.repeat(16),
      event_filters: [],
      name: 'x',
    });
    expect(empty.status).toBe(400);
    const unknown = await api('POST', '/webhooks', admin, {
      url,
      secret: 'x'.repeat(16),
      event_filters: ['*'],
      name: 'x',
      extra: 1,
    });
    expect(unknown.body.details).toContainEqual({ field: 'extra', issue: 'unknown field' });
  });

  it.each([
    'http://93.184.216.34/hook', // plain http off loopback
    'ftp://127.0.0.1/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[fd00:ec2::254]/hook',
    'https://[fe80::1]/hook',
    'https://[fc00::1]/hook',
    'https://[::ffff:169.254.169.254]/hook',
    'https://user:pw@127.0.0.1/hook',
  ])('refuses %s even with loopback allowed', async (url) => {
    const refused = await api('POST', '/webhooks', admin, {
      url,
      secret: 'x'.repeat(16),
      event_filters: ['*'],
      name: 'x',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('validation');
    expect(refused.body.details).toEqual([{ field: 'url', issue: expect.any(String) }]);
  });

  it('needs the webhooks:admin scope', async () => {
    const other = await runtime.mintServiceToken('shop', ['events:publish']);
    expect((await api('GET', '/webhooks', other)).status).toBe(403);
    const user = await runtime.mintUserToken('alice');
    expect((await api('GET', '/webhooks', user)).status).toBe(403);
  });

  it('deletes a webhook: gone from the list, 404 afterwards', async () => {
    const hook = await webhookFor(['deleted.thing']);
    expect((await api('DELETE', `/webhooks/${hook.id}`, admin)).status).toBe(204);
    const listed = await api('GET', '/webhooks', admin);
    expect(listed.body.items.map((entry: { id: string }) => entry.id)).not.toContain(hook.id);
    expect((await api('DELETE', `/webhooks/${hook.id}`, admin)).status).toBe(404);
    expect((await api('GET', `/webhooks/${hook.id}/deliveries`, admin)).status).toBe(404);
    await publish('deleted.thing');
    const other = await webhookFor(['deleted.thing']);
    const later = await publish('deleted.thing');
    await settled(
      () => receiver.at(other.path).map((request) => request.headers['webhook-id']),
      (ids) => ids.includes(later),
    );
    expect(receiver.at(hook.path)).toHaveLength(0);
  });
});

describe('delivery', () => {
  it('makes the first attempt where the event is matched, and queues only what follows a failure', async () => {
    const deliveryQueue = (counter: 'sent' | 'received') =>
      Object.entries(runtime.standIns.sqs.counters())
        .filter(([name]) => name.includes('webhookDeliveries') && !name.includes('dlq'))
        .reduce((total, [, counters]) => total + counters[counter], 0);
    const sentToDeliveryQueue = () => deliveryQueue('sent');
    const matcherRuns = () => metering.snapshot()['webhooks.match']?.invocations ?? 0;
    const before = sentToDeliveryQueue();
    const first = await webhookFor(['inline.ok']);
    await publish('inline.ok');
    await settled(
      async () => (await deliveries(first.id)).items,
      (items) => items[0]?.status === 'succeeded',
    );
    expect(receiver.at(first.path)).toHaveLength(1);
    // Delivered without a message on the delivery queue: the matcher made the attempt itself.
    expect(sentToDeliveryQueue()).toBe(before);

    const retried = await webhookFor(['inline.retry'], [{ status: 503 }, { status: 200 }]);
    const [sentBefore, receivedBefore, runsBefore] = [
      sentToDeliveryQueue(),
      deliveryQueue('received'),
      matcherRuns(),
    ];
    await publish('inline.retry');
    await settled(
      async () => (await deliveries(retried.id)).items,
      (items) => items[0]?.status === 'succeeded',
    );
    expect(receiver.at(retried.path).map((request) => request.headers['webhook-id'])).toEqual([
      receiver.at(retried.path)[0]?.headers['webhook-id'],
      receiver.at(retried.path)[0]?.headers['webhook-id'],
    ]);
    // The retry went through the queue; the successful first attempt above queued nothing. Each handling that did
    // not deliver queues at most one message: the matcher's run, and any copy of the event (the bus delivers at
    // least once) or of the queued attempt (SQS), which the attempt's claim makes harmless. So what was queued is
    // at most one less than the handlings: the matcher's runs and the queue's receives.
    const queued = sentToDeliveryQueue() - sentBefore;
    expect(queued).toBeGreaterThanOrEqual(1);
    expect(queued).toBeLessThanOrEqual(
      matcherRuns() - runsBefore + (deliveryQueue('received') - receivedBefore) - 1,
    );
  });

  it('delivers an event whose data has keys named like the properties of every object', async () => {
    const hook = await webhookFor(['odd.keys']);
    const data = JSON.parse('{"constructor": {"prototype": 1}, "toString": "x", "a": {"constructor": 1}}');
    await publish('odd.keys', data);
    const [delivered] = await settled(
      () => receiver.at(hook.path),
      (list) => list.length >= 1,
    );
    expect(JSON.parse(delivered?.body ?? '{}').data.data).toEqual(data);
  });

  it('delivers a matching event once per webhook, signed and shaped as the contract states', async () => {
    const prefix = await webhookFor(['orders.*']);
    const exact = await webhookFor(['orders.created', 'invoices.paid']);
    const other = await webhookFor(['invoices.paid']);
    const nested = await webhookFor(['orders.created.*']);
    const eventId = await publish('orders.created', { order: 42 });

    const got = await settled(
      () => [receiver.at(prefix.path), receiver.at(exact.path)],
      (lists) => lists.every((list) => list.length >= 1),
    );
    for (const list of got) {
      expect(list).toHaveLength(1);
      const [request] = list;
      expect(request?.verifyError).toBeUndefined();
      expect(request?.headers['webhook-id']).toBe(eventId);
      expect(request?.headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(request?.headers['content-type']).toBe('application/json');
      expect(request?.verified).toEqual({
        type: 'orders.created',
        timestamp: expect.any(String),
        data: {
          id: eventId,
          event_type: 'orders.created',
          source: 'shop',
          version: 2,
          data: { order: 42 },
          priority: 'normal',
          time: expect.any(String),
        },
      });
    }
    // The matcher created every delivery before the first was sent: the others have none.
    expect((await deliveries(other.id)).items).toEqual([]);
    expect((await deliveries(nested.id)).items).toEqual([]);
    const listed = await settled(
      () => deliveries(exact.id),
      (body) => body.items[0]?.status === 'succeeded',
    );
    expect(listed.items).toEqual([
      expect.objectContaining({
        id: eventId,
        event_id: eventId,
        event_type: 'orders.created',
        status: 'succeeded',
        attempts: [
          {
            attempt: 1,
            at: expect.any(String),
            status_code: 200,
            duration_ms: expect.any(Number),
            error: null,
          },
        ],
      }),
    ]);
  });

  it('matches `prefix.*` at any depth but not the prefix itself, and `*` everything', async () => {
    const prefix = await webhookFor(['billing.*']);
    const all = await webhookFor(['*']);
    const bare = await publish('billing');
    const deep = await publish('billing.invoice.paid');
    await settled(
      () => receiver.at(all.path).map((request) => request.headers['webhook-id']),
      (ids) => ids.includes(bare) && ids.includes(deep),
    );
    await settled(
      () => receiver.at(prefix.path),
      (list) => list.length >= 1,
    );
    expect(receiver.at(prefix.path).map((request) => request.headers['webhook-id'])).toEqual([deep]);
  });

  it('signs with the base64-decoded key of a whsec_ secret', async () => {
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const hook = await webhookFor(['keys.rotated'], [{ status: 204 }], secret);
    await publish('keys.rotated');
    const [request] = await settled(
      () => receiver.at(hook.path),
      (list) => list.length === 1,
    );
    expect(request?.verifyError).toBeUndefined();
    expect(request?.verified).toMatchObject({ type: 'keys.rotated' });
  });

  it('never signs with the empty key of a stored whsec_ secret that is not base64 (created before it was refused)', async () => {
    endpointCount += 1;
    const path = `/hook/${endpointCount}`;
    // The receiver's own verifier refuses such a secret: it checks nothing here, nothing may arrive.
    const id = await storeWebhook({
      url: receiver.endpoint(path, 'x'.repeat(16)),
      filter: 'legacy.secret',
      secret: `whsec_${'!'.repeat(24)}`,
    });
    await publish('legacy.secret');
    const body = await settled(
      () => deliveries(id),
      (page) => (page.items[0]?.attempts.length ?? 0) >= 1,
    );
    expect(body.items[0].attempts[0]).toMatchObject({
      status_code: null,
      error: expect.stringMatching(/^refused: a whsec_ secret must be standard base64/),
    });
    expect(receiver.at(path)).toEqual([]);
  });

  it('pages deliveries without a cursor to an empty page after a full last page (one paging helper)', async () => {
    const hook = await webhookFor(['paged.event']);
    for (let index = 0; index < 4; index += 1) await publish('paged.event', { index });
    await settled(
      () => deliveries(hook.id),
      (body) => body.items.length === 4,
    );
    const whole = await deliveries(hook.id, '?limit=4');
    expect(whole.items).toHaveLength(4);
    expect(whole.next_cursor).toBeNull();
    const first = await deliveries(hook.id, '?limit=2');
    expect(first.items).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await deliveries(hook.id, `?limit=2&cursor=${first.next_cursor}`);
    expect(second.items).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    expect([...first.items, ...second.items].map((item: { id: string }) => item.id)).toEqual(
      whole.items.map((item: { id: string }) => item.id),
    );
    // With a status filter too: every delivery succeeded, so the filter keeps all four.
    const filtered = await deliveries(hook.id, '?limit=4&status=succeeded');
    expect(filtered.next_cursor).toBeNull();
  });

  it('delivers once however often the bus invokes the matcher with the event', async () => {
    const hook = await webhookFor(['dup.event']);
    const envelope = {
      version: '0',
      id: randomBytes(8).toString('hex'),
      'detail-type': 'dup.event',
      source: 'shop',
      account: '000000000000',
      time: new Date().toISOString(),
      region: 'us-east-1',
      resources: [],
      detail: {
        id: `evt-${randomBytes(6).toString('hex')}`,
        version: 1,
        data: {},
        priority: 'normal',
        archive: false,
      },
    };
    // EventBridge delivers at least once, and Lambda's asynchronous queue may hand an event out twice: three
    // invocations of the matcher with one event, as the bus rule makes them.
    const { sqs, lambda } = runtime.standIns;
    for (let copy = 0; copy < 3; copy += 1) await lambda.invokeAsync('webhooks.match', envelope);
    // Once the matcher's queue and the delivery queue are drained, every copy has been matched and every attempt made.
    const inFlight = async () => {
      const stats = sqs.stats('webhookDeliveries');
      return (
        lambda.asyncBacklog() +
        stats.ApproximateNumberOfMessages +
        stats.ApproximateNumberOfMessagesNotVisible +
        stats.ApproximateNumberOfMessagesDelayed
      );
    };
    await settled(
      () => receiver.at(hook.path),
      (list) => list.length >= 1,
    );
    await settled(inFlight, (count) => count === 0);
    expect(receiver.at(hook.path)).toHaveLength(1);
    expect((await deliveries(hook.id)).items).toHaveLength(1);
  });
});

describe('retries, disabling and dead letters', () => {
  it('retries after 500s with the same webhook-id until a success', async () => {
    const hook = await webhookFor(['retry.me'], [{ status: 500 }, { status: 500 }, { status: 200 }]);
    const eventId = await publish('retry.me');
    const got = await settled(
      () => receiver.at(hook.path),
      (list) => list.length >= 3,
    );
    expect(got.map((request) => request.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    expect(got.every((request) => request.verifyError === undefined)).toBe(true);
    const listed = await settled(
      () => deliveries(hook.id),
      (body) => body.items[0]?.status === 'succeeded',
    );
    expect(listed.items[0].attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([
      500, 500, 200,
    ]);
    expect(listed.items[0].attempts[0].error).toBe('HTTP 500');
  });

  it('counts a timeout as a failure and tries again', async () => {
    const hook = await webhookFor(['slow.receiver'], [{ status: 200, delayMs: 8000 }, { status: 200 }]);
    await publish('slow.receiver');
    const listed = await settled(
      () => deliveries(hook.id),
      (body) => body.items[0]?.status === 'succeeded',
    );
    const attempts = listed.items[0].attempts;
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ status_code: null, error: expect.stringContaining('timed out') });
    expect(attempts[1]).toMatchObject({ status_code: 200, error: null });
  });

  it('disables a webhook that answers 410 and sends it nothing more', async () => {
    const hook = await webhookFor(['gone.endpoint'], [{ status: 410 }]);
    const first = await publish('gone.endpoint');
    const listed = await settled(
      () => deliveries(hook.id),
      (body) => body.items[0]?.status === 'dead_letter',
    );
    expect(listed.items[0]).toMatchObject({
      id: first,
      status: 'dead_letter',
      last_error: expect.stringContaining('410'),
    });
    const webhooks = await api('GET', '/webhooks', admin);
    expect(webhooks.body.items.find((entry: { id: string }) => entry.id === hook.id)).toMatchObject({
      enabled: false,
      disabled_reason: expect.stringContaining('410'),
    });
    const marker = await webhookFor(['gone.endpoint']);
    await publish('gone.endpoint');
    await settled(
      () => receiver.at(marker.path),
      (list) => list.length === 1,
    );
    expect(receiver.at(hook.path)).toHaveLength(1);
    expect((await deliveries(hook.id)).items).toHaveLength(1);
    expect((await api('POST', `/webhooks/${hook.id}/deliveries/${first}/retry`, admin)).status).toBe(409);
  });

  it('dead-letters after the last attempt (the long wait through a schedule) and re-sends on request', async () => {
    const hook = await webhookFor(['always.failing'], [{ status: 503 }]);
    const schedulesBefore = runtime.standIns.scheduler.counters().created;
    const eventId = await publish('always.failing');
    const dead = await settled(
      () => deliveries(hook.id, '?status=dead_letter'),
      (body) => body.items.length === 1,
    );
    expect(dead.items[0]).toMatchObject({
      id: eventId,
      status: 'dead_letter',
      last_error: expect.stringContaining('503'),
    });
    expect(dead.items[0].attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([
      503, 503, 503, 503,
    ]);
    expect(receiver.at(hook.path)).toHaveLength(4);
    // The last wait (4 s ± 20 %) is longer than SQS's longest delay here: queued, then scheduled, never cut short.
    const [, , third, fourth] = dead.items[0].attempts as { at: string }[];
    expect(Date.parse(fourth?.at ?? '') - Date.parse(third?.at ?? '')).toBeGreaterThanOrEqual(3200);
    expect(runtime.standIns.scheduler.counters().created).toBeGreaterThan(schedulesBefore);

    receiver.answer(hook.path, [{ status: 200 }]);
    const retried = await api('POST', `/webhooks/${hook.id}/deliveries/${eventId}/retry`, admin);
    expect(retried).toEqual({ status: 202, body: { id: eventId, status: 'pending' } });
    const done = await settled(
      () => deliveries(hook.id),
      (body) => body.items[0]?.status === 'succeeded',
    );
    expect(
      done.items[0].attempts.map((attempt: { attempt: number; status_code: number }) => [
        attempt.attempt,
        attempt.status_code,
      ]),
    ).toEqual([
      [1, 503],
      [2, 503],
      [3, 503],
      [4, 503],
      [5, 200],
    ]);
    const requests = receiver.at(hook.path);
    expect(requests).toHaveLength(5);
    expect(requests.at(-1)?.headers['webhook-id']).toBe(eventId);
    expect(requests.at(-1)?.verifyError).toBeUndefined();
    // Only dead letters can be re-sent; unknown ones are 404.
    expect((await api('POST', `/webhooks/${hook.id}/deliveries/${eventId}/retry`, admin)).status).toBe(409);
    expect((await api('POST', `/webhooks/${hook.id}/deliveries/nope/retry`, admin)).status).toBe(404);
  }, 60_000);

  // The schedule's next wait is ~1 s; Retry-After asks for more, longer than SQS's longest delay here (1.5 s), so
  // the matcher queues 1 s of it with the rest, which the delivery worker waits out: 2 s on the queue again, 1 s;
  // 3 s through a one-time schedule, 2 s.
  it.each([
    { retryAfter: 3, eventType: 'busy.receiver', restBy: 'a schedule' },
    { retryAfter: 2, eventType: 'busy.briefly', restBy: 'the queue' },
  ])(
    'waits at least as long as Retry-After asks ($retryAfter s, the rest by $restBy)',
    async ({ retryAfter, eventType }) => {
      const hook = await webhookFor(
        [eventType],
        [{ status: 429, headers: { 'retry-after': String(retryAfter) } }, { status: 200 }],
      );
      await publish(eventType);
      const listed = await settled(
        () => deliveries(hook.id),
        (body) => body.items[0]?.status === 'succeeded',
      );
      const [first, second] = listed.items[0].attempts as { at: string; status_code: number }[];
      expect(first?.status_code).toBe(429);
      expect(Date.parse(second?.at ?? '') - Date.parse(first?.at ?? '')).toBeGreaterThanOrEqual(
        retryAfter * 1000 - 100,
      );
    },
  );
});
