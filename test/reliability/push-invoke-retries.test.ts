import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pushSettingName } from '../../common/env';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import { pushIdFor, pushRecordKey } from '../../lambdas/domain/push/records';
import type { InvocationRecord } from '../../local/lambda/async-invocation';
import { type ExpoStandIn, startExpoStandIn } from '../../local/push/expo-stand-in';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { apiClient, eventually } from '../support/api';
import { recordFunctionLogs } from '../support/function-logs';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * The first attempts of a notification's pushes reach the push worker by an asynchronous Lambda invocation, not a
 * queue message: Lambda keeps the event, retries a failed invocation under the same request id (after at least
 * the failed one's deadline), and sends what fails every time to `push-dlq` as its invocation record. Here the
 * worker's invocations are made to fail at the DynamoDB call after the push's claim (the runtime's
 * `dynamoDbOutage`): once for the lifetime of the invocation (the retry pushes once, taking its own claim over),
 * or on every invocation (the event ends in the DLQ, the reason logged under its request id).
 */

/**
 * The push worker's timeout, shortened from its 30 s here (the runtime's `functionTimeouts`): Lambda retries an
 * invocation only after its deadline, so the cases wait it out three times.
 */
const PUSH_TIMEOUT_SECS = 10;
/** The push worker's timeout, and a second more: an invocation that hit the outage has ended by then. */
const INVOCATION_LIFETIME_MS = PUSH_TIMEOUT_SECS * 1000 + 1000;

let runtime: Runtime;
let expo: ExpoStandIn;
const savedScale = process.env[TIME_SCALE_ENV];
const run = Date.now();
/** The DynamoDB calls failed, by a predicate per test, with when the first was failed. */
const outages: { matches: (operation: string, body: Record<string, unknown>) => boolean; until: number }[] =
  [];

beforeAll(async () => {
  // Lambda's retry waits (1 and 2 minutes) scaled down; a retry still comes after the failed invocation's deadline.
  process.env[TIME_SCALE_ENV] = '0.1';
  expo = await startExpoStandIn();
  runtime = await startTestRuntime({
    env: { [pushSettingName('EXPO_URL')]: expo.url },
    functionTimeouts: { 'push.deliver': PUSH_TIMEOUT_SECS },
    dynamoDbOutage: (operation, body) =>
      outages.some((outage) => Date.now() < outage.until && outage.matches(operation, body)),
  });
});
afterAll(async () => {
  await runtime?.stop();
  await expo?.close();
  if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = savedScale;
});

vi.setConfig({ testTimeout: 240_000 });

const api = apiClient(() => runtime.httpUrl);

/** A user with one registered Expo device (its push reads the badge after the claim, before the send). */
const userWithDevice = async (name: string) => {
  const id = `${name}-${process.pid}-${run}`;
  const token = await runtime.mintUserToken(id);
  const pushToken = `ExponentPushToken[${id}]`;
  expect((await api('POST', '/devices', token, { token: pushToken, platform: 'ios' })).status).toBe(201);
  return { id, pushToken, tokenHash: tokenHashOf(pushToken) };
};

/** The badge's read of the user's read-all watermark: after the claim, before the send. */
const badgeReadOf =
  (userId: string) =>
  (operation: string, body: Record<string, unknown>): boolean =>
    operation === 'GetItem' &&
    String(body.TableName).endsWith('feedState') &&
    (body.Key as { user_id?: { S?: string } } | undefined)?.user_id?.S === userId;

const notify = async (recipient: string): Promise<string> => {
  const service = await runtime.mintServiceToken('billing', ['notifications:write']);
  const answer = await api('POST', '/notifications', service, {
    event_type: 'billing.invoice_ready',
    title: 'Invoice ready',
    recipient_ids: [recipient],
    channels: ['in_app', 'push'],
  });
  expect(answer.status).toBe(202);
  return answer.body.id as string;
};

/** Messages sent to the push queue so far (its first attempts never go there). */
const pushQueueSends = () => runtime.standIns.sqs.counters().push?.sent ?? 0;

/** The push worker's failure records of the invocations for `notificationId`. */
const failuresLogged = (logs: ReturnType<typeof recordFunctionLogs>, notificationId: string) =>
  logs
    .at('ERROR')
    .filter(
      (record) =>
        record.message === 'message failed' &&
        record.worker === 'push.deliver' &&
        record.notification_id === notificationId,
    );

/** The push worker's warnings of invocations for `notificationId` that found the push claimed under their own id. */
const heldLogged = (logs: ReturnType<typeof recordFunctionLogs>, notificationId: string) =>
  logs
    .at('WARN')
    .filter(
      (record) =>
        record.message === 'message held by another receive; retried later' &&
        record.worker === 'push.deliver' &&
        record.notification_id === notificationId,
    );

describe.concurrent('the push worker’s asynchronous invocations', () => {
  it('a first invocation that fails after its claim is retried by Lambda under its request id: pushed once', async () => {
    const logs = recordFunctionLogs();
    const user = await userWithDevice('invoke-retried');
    const sendsBefore = pushQueueSends();
    const outage = { matches: badgeReadOf(user.id), until: Number.POSITIVE_INFINITY };
    outages.push(outage);
    const id = await notify(user.id);
    const [failure] = await eventually(
      async () => failuresLogged(logs, id),
      (records) => records.length > 0,
      60_000,
    );
    // That invocation is over: the retry comes later still, as on AWS (a minute at least).
    outage.until = Date.now() + INVOCATION_LIFETIME_MS;
    const service = await runtime.mintServiceToken('billing', ['notifications:write']);
    const [push] = await eventually(
      async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items,
      (items: { status: string }[]) => items.length === 1 && items[0]?.status !== 'sending',
      180_000,
    );
    expect(push).toMatchObject({ status: 'delivered', attempts: 1 });
    const received = expo.received().filter((sent) => sent.token === user.pushToken);
    expect(received.map((sent) => sent.push_id)).toEqual([pushIdFor(id, user.tokenHash)]);
    // The claim of the push is the failed invocation's request id, taken over by Lambda's retry of it.
    const { Item } = await documentClient().send(
      new GetCommand({
        TableName: tableName('pushes'),
        Key: pushRecordKey(id, user.id),
        ConsistentRead: true,
      }),
    );
    expect(failure?.function_request_id).toEqual(expect.any(String));
    expect(Item?.claimed_by).toBe(failure?.function_request_id);
    expect(failuresLogged(logs, id)).toHaveLength(1);
    // No SQS request on the way: nothing was sent to the push queue.
    expect(pushQueueSends()).toBe(sendsBefore);
  });

  it('an event that fails every invocation ends in push-dlq as Lambda’s record, its reason logged', async () => {
    const logs = recordFunctionLogs();
    const user = await userWithDevice('invoke-exhausted');
    outages.push({ matches: badgeReadOf(user.id), until: Number.POSITIVE_INFINITY });
    const id = await notify(user.id);
    const sqs = new SQSClient({ endpoint: runtime.standIns.sqs.endpoint });
    // The event's records in the DLQ by message id: a receive may return only some of the messages there.
    const records = new Map<string, InvocationRecord>();
    const readRecords = async () => {
      // Whether no event waited or ran before this read: then every record of one is already in the DLQ.
      const settled = runtime.standIns.lambda.asyncBacklog() === 0;
      const { Messages } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: runtime.standIns.sqs.queueUrl('push-dlq'),
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
        }),
      );
      for (const message of Messages ?? []) {
        if (message.MessageId && message.Body?.includes(id)) {
          records.set(message.MessageId, JSON.parse(message.Body) as InvocationRecord);
        }
      }
      return { settled, records: [...records.values()] };
    };
    const isOutage = (record: InvocationRecord) => /outage/i.test(record.responsePayload?.errorMessage ?? '');
    try {
      // Lambda's queue may invoke the event twice at once (AWS-like delivery): the copy that finds the push claimed
      // by the other under their request id fails as held by another receive, is retried on its own and can end in
      // the DLQ too, with that reason, before or after the outage's record. Done once both are settled.
      const { records: found } = await eventually(
        readRecords,
        (read) => read.settled && read.records.some(isOutage),
        200_000,
      );
      const [record] = found.filter(isOutage);
      expect(found.filter(isOutage)).toHaveLength(1);
      for (const each of found) {
        expect(each.requestContext).toMatchObject({
          requestId: record?.requestContext.requestId,
          condition: 'RetriesExhausted',
          approximateInvokeCount: 3,
          functionArn: expect.stringContaining('push-deliver'),
        });
        expect(each.requestPayload).toEqual({
          kind: 'recipients',
          notification_id: id,
          recipients: [user.id],
        });
        if (each !== record) {
          expect(each.responsePayload?.errorMessage).toMatch(
            /is claimed by another receive until .*retried later/,
          );
          expect(heldLogged(logs, id).map((warning) => warning.reason)).toContain(
            each.responsePayload?.errorMessage,
          );
        }
      }
      // Each of the three invocations that held the push's claim logged why it failed, under the request id the
      // record names; a copy that found the claim held logged that as a warning, not a failure.
      const failures = failuresLogged(logs, id);
      expect(failures).toHaveLength(3);
      for (const failure of failures) {
        expect(failure.function_request_id).toBe(record?.requestContext.requestId);
        expect(failure.kind).toBe('recipients');
        expect((failure.error as { message?: string }).message).toBe(record?.responsePayload?.errorMessage);
      }
      expect(expo.received().filter((sent) => sent.token === user.pushToken)).toEqual([]);
    } finally {
      sqs.destroy();
    }
  });
});
