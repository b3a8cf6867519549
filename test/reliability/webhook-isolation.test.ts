import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient, eventually } from '../support/api';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * One slow webhook endpoint must not starve the others: at most NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY attempts
 * to one endpoint are in flight (here 4), the rest wait their turn in the queue without taking the worker's
 * invocations, and an unrelated webhook's delivery goes out while the slow backlog is still being worked off.
 *
 * Short form in `npm test`: 13 slow events, four rounds of the limit (the unrelated delivery still has three
 * rounds, 9 s, to overtake the backlog); the long form (`npm run test:reliability`) 25, seven rounds.
 */
const SLOW_EVENTS = LONG ? 25 : 13;
const LIMIT = 4;
let runtime: Runtime;
let admin: string;
let publisher: string;
const receiver = new WebhookReceiver();

/**
 * The waits of the queued backlog (deferrals of 1, 2, 4… s while the endpoint is busy) at half their length: the
 * slow endpoint's answers (3 s each, real time) still set the rounds the unrelated delivery has to overtake.
 */
const SCALE = 0.5;
const previousScale = process.env[TIME_SCALE_ENV];

beforeAll(async () => {
  await receiver.start();
  process.env[TIME_SCALE_ENV] = String(SCALE);
  runtime = await startTestRuntime({
    env: { NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY: String(LIMIT), NOTIFY_WEBHOOK_TIMEOUT_MS: '20000' },
  });
  admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
  publisher = await runtime.mintServiceToken('shop', ['events:publish']);
});
afterAll(async () => {
  await runtime?.stop();
  await receiver.stop();
  if (previousScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = previousScale;
});

const api = apiClient(() => runtime.httpUrl);

const webhook = async (path: string, filter: string, delayMs: number) => {
  const secret = `isolation-${randomBytes(8).toString('hex')}`;
  const created = await api('POST', '/webhooks', admin, {
    url: receiver.endpoint(path, secret, [{ status: 200, delayMs }]),
    secret,
    event_filters: [filter],
    name: path,
  });
  expect(created.status).toBe(201);
};

const publish = async (eventType: string) => {
  const published = await api('POST', '/events', publisher, {
    event_type: eventType,
    source: 'shop',
    version: 1,
    data: {},
  });
  expect(published.status).toBe(202);
};

describe('a slow webhook endpoint', () => {
  it('gets at most its concurrency limit of attempts at once and does not hold up another webhook', async () => {
    await webhook('/slow', 'slow.event', 3000);
    await webhook('/fast', 'fast.event', 0);
    await Promise.all(Array.from({ length: SLOW_EVENTS }, () => publish('slow.event')));
    // The slow endpoint is saturated before the unrelated event is published.
    await eventually(
      () => receiver.maxConcurrent('/slow'),
      (max) => max >= LIMIT,
    );
    await publish('fast.event');

    await eventually(
      () => receiver.answeredAt.get('/slow')?.length ?? 0,
      (answered) => answered === SLOW_EVENTS,
      180_000,
    );
    expect(receiver.at('/slow')).toHaveLength(SLOW_EVENTS);
    expect(receiver.maxConcurrent('/slow')).toBeLessThanOrEqual(LIMIT);
    // The fast webhook was answered before the slow backlog was worked off.
    const fastAt = receiver.answeredAt.get('/fast')?.[0];
    const slowLast = receiver.answeredAt.get('/slow')?.at(-1);
    expect(fastAt).toBeDefined();
    expect(fastAt as number).toBeLessThan(slowLast as number);
  }, 240_000);
});
