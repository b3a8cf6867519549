import { randomBytes } from 'node:crypto';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redriveDeadLetters } from '../../lib/ops/redrive';
import { wiring as declaredWiring, envNames, type Wiring } from '../../lib/wiring';
import type { InvocationRecord } from '../../local/lambda/async-invocation';
import { apiClient, eventually } from '../support/api';
import { recordedEvents } from '../support/fixtures/recorder';
import { recordFunctionLogs } from '../support/function-logs';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { WebhookReceiver } from './webhook-receiver';

/**
 * `npm run redrive` of a bus function's dead letters on the local runtime (lib/ops/redrive.ts,
 * docs/operations.md): the matcher really fails a replayed event (its webhook filters' table is down) and
 * Lambda's record lands in `busFunctions-dlq`; once the table is back, the redrive invokes the matcher again
 * with the very event — same EventBridge id and time, the replay's `replay-name` — so the webhook gets the
 * replay's own delivery (`<event id>~<replay name>`) stamped with the event's time, and the bus sees nothing:
 * no PutEvents, no archive write, no second replay.
 */
const DLQ = 'busFunctions-dlq';
const REPLAY = 'redrive-e2e';
/** Only this test's events match it, so the outage below hits this test's matcher invocations alone. */
const eventType = `redrive.e2e${randomBytes(4).toString('hex')}`;
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * The matcher without Lambda's two retries (one and two minutes apart), so its first failure is dead-lettered, and
 * recording the events it is invoked with.
 */
const wiring: Wiring = {
  ...declaredWiring,
  busFunctions: (declaredWiring.busFunctions ?? []).map((fn) =>
    fn.id === 'webhooks.match'
      ? { ...fn, retryAttempts: 0, handler: 'test/support/fixtures/handlers/recording-matcher.ts' }
      : fn,
  ),
};

let runtime: Runtime;
let outage = false;
const receiver = new WebhookReceiver();
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  await receiver.start();
  runtime = await startTestRuntime({
    wiring,
    // While on, the matcher's Query of the webhook filters of this test's event type fails (DynamoDB's 500).
    dynamoDbOutage: (operation, request) =>
      outage &&
      operation === 'Query' &&
      request.TableName === runtime.env[envNames.tableName('webhookFilters')] &&
      JSON.stringify(request).includes(eventType),
  });
});
afterAll(async () => {
  await runtime?.stop();
  await receiver.stop();
});

const settled = <T>(read: () => Promise<T> | T, done: (value: T) => boolean) =>
  eventually(read, done, 60_000);

describe('redriving the matcher’s dead letters', () => {
  it('invokes the matcher again with the same replayed event, and puts nothing on the bus', async () => {
    const admin = await runtime.mintServiceToken('ops', ['webhooks:admin', 'events:publish']);
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    const hook = await api('POST', '/webhooks', admin, {
      url: receiver.endpoint('/redrive', secret, [{ status: 200 }]),
      secret,
      event_filters: [eventType],
      name: 'redrive',
    });
    expect(hook.status).toBe(201);
    const deliveries = async () =>
      ((await api('GET', `/webhooks/${hook.body.id}/deliveries`, admin)).body.items ?? []) as {
        id: string;
        status: string;
      }[];

    // An archived event, delivered once (before the outage: the set-up cannot race the matcher).
    const published = await api('POST', '/events', admin, {
      event_type: eventType,
      source: 'ops',
      version: 1,
      data: { n: 1 },
      archive: true,
    });
    expect(published.status).toBe(202);
    const eventId = published.body.id as string;
    const delivered = (items: { id: string; status: string }[], id: string) =>
      items.some((item) => item.id === id && item.status === 'succeeded');
    expect(delivered(await settled(deliveries, (items) => delivered(items, eventId)), eventId)).toBe(true);
    const { eventBridge, sqs, lambda } = runtime.standIns;
    const [archived, ...others] = eventBridge.archivedEvents();
    expect(others).toEqual([]);

    // The replay's matcher invocation fails: Lambda's record of it, with the replayed event, is in the DLQ. Every
    // copy of the event (AWS-like delivery may invoke it twice) is done before the table comes back.
    const logs = recordFunctionLogs();
    outage = true;
    await eventBridge.replay({ name: REPLAY });
    const deadLettered = () => sqs.stats(DLQ).ApproximateNumberOfMessages > 0 && lambda.asyncBacklog() === 0;
    expect(await settled(deadLettered, (done) => done)).toBe(true);
    outage = false;
    // Each failed invocation is logged with the event and the store's error.
    expect(logs.at('ERROR')).toContainEqual(
      expect.objectContaining({
        message: 'event failed',
        event_id: expect.any(String),
        error: expect.objectContaining({ message: 'Injected outage (test)' }),
      }),
    );
    const sqsClient = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials });
    const lambdaClient = new LambdaClient({
      endpoint: runtime.standIns.lambda.endpoint,
      region: 'us-east-1',
      credentials,
    });
    try {
      const peek = await sqsClient.send(
        new ReceiveMessageCommand({
          QueueUrl: sqs.queueUrl(DLQ),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
        }),
      );
      expect(peek.Messages?.length).toBeGreaterThanOrEqual(1);
      for (const message of peek.Messages ?? []) {
        const record = JSON.parse(message.Body ?? '') as InvocationRecord;
        expect(record.requestContext.functionArn).toMatch(/:function:notify-local-webhooks-match:\$LATEST$/);
        expect(record.requestPayload).toEqual({ ...archived, 'replay-name': REPLAY });
      }
      expect(await deliveries()).toHaveLength(1);

      // A re-published event would carry a later time: make sure the clock has moved past the event's second.
      const secondsLater = () => Math.floor(Date.now() / 1000) > Date.parse(archived?.time ?? '') / 1000;
      expect(await settled(secondsLater, (done) => done)).toBe(true);
      const busBefore = eventBridge.counters();
      const invokedBefore = recordedEvents('webhooks.match').length;
      const summary = await redriveDeadLetters({
        sqs: sqsClient,
        lambda: lambdaClient,
        queueUrl: sqs.queueUrl(DLQ),
        visibilityTimeoutSecs: 30,
      });
      expect(summary.left).toEqual([]);
      expect(summary.reinvoked).toBeGreaterThanOrEqual(1);

      // The replay's own delivery, made now, with the event's time.
      const replayDelivery = `${eventId}~${REPLAY}`;
      expect(
        delivered(await settled(deliveries, (items) => delivered(items, replayDelivery)), replayDelivery),
      ).toBe(true);
      // The matcher (which made that delivery) got the very event again: EventBridge's id and time, the replay's name.
      const redriven = recordedEvents('webhooks.match').slice(invokedBefore);
      expect(redriven.length).toBeGreaterThanOrEqual(1);
      for (const event of redriven) expect(event).toEqual({ ...archived, 'replay-name': REPLAY });
      const posted = receiver
        .at('/redrive')
        .filter((request) => request.headers['webhook-id'] === replayDelivery);
      expect(posted.length).toBeGreaterThanOrEqual(1);
      for (const request of posted) {
        expect(request.verifyError).toBeUndefined();
        expect(JSON.parse(request.body)).toMatchObject({ timestamp: archived?.time, data: { id: eventId } });
      }
      // Nothing went through the bus: no PutEvents, nothing archived again, no replay.
      expect(eventBridge.counters()).toEqual(busBefore);
      expect(eventBridge.archivedEvents()).toEqual([archived]);
      expect(sqs.stats(DLQ)).toMatchObject({
        ApproximateNumberOfMessages: 0,
        ApproximateNumberOfMessagesNotVisible: 0,
      });
    } finally {
      sqsClient.destroy();
      lambdaClient.destroy();
    }
  }, 90_000);
});
