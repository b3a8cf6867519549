import { randomBytes } from 'node:crypto';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { type DeliveryRecord, deliveryKey, newDeliveryRef } from '../../lambdas/domain/webhooks/deliveries';
import { envNames } from '../../lib/wiring';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';

/**
 * A delivery attempt interrupted by a crash (its claim left in `sending`) must still complete: a redelivered
 * message is never acknowledged while another receive may hold the claim, and takes the claim over once the
 * holder's invocation is past its deadline (not before, even when it is the holder's own message again).
 * SQS time runs 100× faster here (visibility timeout 1.8 s).
 */
let runtime: Runtime;
let admin: string;
let sqs: SQSClient;
const receiver = new WebhookReceiver();
const savedScale = process.env[TIME_SCALE_ENV];

beforeAll(async () => {
  process.env[TIME_SCALE_ENV] = '0.01';
  await receiver.start();
  runtime = await startTestRuntime();
  admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
  sqs = new SQSClient({});
});
afterAll(async () => {
  sqs?.destroy();
  await runtime?.stop();
  await receiver.stop();
  if (savedScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = savedScale;
});

const api = apiClient(() => runtime.httpUrl);

/** A webhook and a delivery left `sending` for attempt 1 by a receive that then died. */
const interruptedDelivery = async (claim: Partial<DeliveryRecord>) => {
  const path = `/claims/${randomBytes(6).toString('hex')}`;
  const created = await api('POST', '/webhooks', admin, {
    url: receiver.endpoint(path, 'claim-secret-0123456789', [{ status: 200 }]),
    secret: 'claim-secret-0123456789',
    event_filters: ['claim.test'],
    name: 'claims',
  });
  expect(created.status).toBe(201);
  const now = new Date();
  const deliveryId = `evt-${randomBytes(8).toString('hex')}`;
  // In the shard the matcher puts it in (the test process and the runtime share the default shard count).
  const ref = newDeliveryRef(created.body.id as string, deliveryId);
  const record: DeliveryRecord = {
    ...deliveryKey(ref),
    event: {
      id: deliveryId,
      event_type: 'claim.test',
      source: 'shop',
      version: 1,
      data: {},
      priority: 'normal',
      time: now.toISOString(),
    },
    status: 'sending',
    attempt_count: 1,
    run: 0,
    attempts: [],
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    claimed_at: now.toISOString(),
    ttl: Math.floor(now.getTime() / 1000) + 3600,
    ...claim,
  };
  await documentClient().send(new PutCommand({ TableName: tableName('webhookDeliveries'), Item: record }));
  const message = { ...ref, run: 0, attempt: 1 };
  return { record, ref, path, message: JSON.stringify(message) };
};

const send = async (body: string, delaySeconds = 0) =>
  (
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.env[envNames.queueUrl('webhookDeliveries')],
        MessageBody: body,
        DelaySeconds: delaySeconds,
      }),
    )
  ).MessageId as string;

/** The event (as the bus rule invokes the matcher with it) a delivery is for. */
const busMessageOf = (record: DeliveryRecord) =>
  JSON.stringify({
    version: '0',
    id: randomBytes(8).toString('hex'),
    'detail-type': record.event.event_type,
    source: record.event.source,
    account: '000000000000',
    time: record.event.time,
    region: 'us-east-1',
    resources: [],
    detail: { id: record.event.id, version: 1, data: {}, priority: 'normal', archive: false },
  });

/** A message's delay (scaled: 3 s; real ms ×10 for an event) long enough to put the claim before the first receive. */
const CLAIM_FIRST_DELAY_SECS = 300;

/**
 * The claim its first receive took, before that receive happens. Conditional on the delivery being untouched, so
 * a set-up that lost the race to a receive fails here, not as a delivery stuck in `sending`.
 */
const claimBy = (record: DeliveryRecord, messageId: string, expiresInMs: number) =>
  documentClient().send(
    new PutCommand({
      TableName: tableName('webhookDeliveries'),
      Item: {
        ...record,
        claimed_by: messageId,
        claim_receive: 1,
        claim_expires_at: new Date(Date.now() + expiresInMs).toISOString(),
      },
      ConditionExpression: 'attribute_not_exists(claim_expires_at) AND updated_at = :untouched',
      ExpressionAttributeValues: { ':untouched': record.updated_at },
    }),
  );

const finalStatus = async (record: DeliveryRecord, webhookId: string) =>
  eventually(
    async () => {
      const listed = await api('GET', `/webhooks/${webhookId}/deliveries`, admin);
      return (listed.body.items as { id: string; status: string }[]).find(
        (item) => item.id === record.delivery_id,
      )?.status;
    },
    (status) => status === 'succeeded' || status === 'dead_letter',
    60_000,
  );

describe('an attempt whose claim was left by a crashed invocation', () => {
  it('completes once the claim has expired; a duplicate message meanwhile changes nothing', async () => {
    const { record, ref, path, message } = await interruptedDelivery({});
    // The holder's message comes back after the claim expired (500 s × 0.01); a duplicate comes at once.
    await claimBy(record, await send(message, 500), 2000);
    await send(message);
    expect(await finalStatus(record, ref.webhook_id)).toBe('succeeded');
    expect(receiver.at(path)).toHaveLength(1);
  }, 90_000);

  it('is not taken over while live, even by another receive of the holder’s own message (an SQS duplicate copy), and sends once', async () => {
    const { record, ref, path, message } = await interruptedDelivery({});
    // SQS may hand a message out again while its first receive still runs (a copy on a server that missed the
    // receive): a higher receive count does not prove the holder died, so only the claim's expiry does.
    // Delayed so the claim below is in place before the first receive (300 s × 0.01): a loaded machine took over
    // a second between the send and the claim's put once, so the first receive found no claim, sent, and the put
    // then wrote the finished delivery back to `sending`. Receives at ≈ 3, 4.8 and 6.6 s: two while the claim
    // is live, and the third takes it over, well inside the queue's 5 receives (the fifth at ≈ 10.2 s).
    const claimedFor = 6_000;
    const claimedAt = Date.now();
    await claimBy(record, await send(message, CLAIM_FIRST_DELAY_SECS), claimedFor);
    expect(await finalStatus(record, ref.webhook_id)).toBe('succeeded');
    expect(receiver.at(path)).toHaveLength(1);
    // Sent after the claim expired (webhook-timestamp: the attempt's Unix seconds).
    const sentAtSecs = Number(receiver.at(path)[0]?.headers['webhook-timestamp']);
    expect(sentAtSecs * 1000).toBeGreaterThanOrEqual(claimedAt + claimedFor - 1000);
  }, 90_000);

  it('is taken over when the matcher that made the first attempt died and Lambda retries its event', async () => {
    const { record, ref, path } = await interruptedDelivery({});
    // The matcher makes attempt 1 itself: here its invocation holds the claim (under its request id, the same
    // across Lambda's retries of the event) and died. The invocation seen next (a copy from Lambda's queue, at
    // once) fails while the claim is live; Lambda's retry, after the failed invocation's deadline (a minute on
    // AWS; the matcher's 30 s timeout + 6 s here, whatever the time scale), takes it over.
    const claimedFor = 6_000;
    const claimedAt = Date.now();
    const requestId = await runtime.standIns.lambda.invokeAsync(
      'webhooks.match',
      JSON.parse(busMessageOf(record)),
      CLAIM_FIRST_DELAY_SECS * 10,
    );
    await claimBy(record, requestId, claimedFor);
    expect(await finalStatus(record, ref.webhook_id)).toBe('succeeded');
    expect(receiver.at(path)).toHaveLength(1);
    const sentAtSecs = Number(receiver.at(path)[0]?.headers['webhook-timestamp']);
    expect(sentAtSecs * 1000).toBeGreaterThanOrEqual(claimedAt + claimedFor - 1000);
  }, 120_000);

  it('is completed through the delivery queue when a bus invocation finds it claimed by a holder that never comes back', async () => {
    const { record, ref, path } = await interruptedDelivery({});
    // Held by a request id whose invocation died and whose work never returns (were Lambda to retry it under
    // another id): a bus invocation of the event finds the claim live and must not leave it to that holder.
    const claimedFor = 3_000;
    const claimedAt = Date.now();
    await claimBy(record, 'a-request-that-never-comes-back', claimedFor);
    await runtime.standIns.lambda.invokeAsync('webhooks.match', JSON.parse(busMessageOf(record)), 0);
    expect(await finalStatus(record, ref.webhook_id)).toBe('succeeded');
    expect(receiver.at(path)).toHaveLength(1);
    const sentAtSecs = Number(receiver.at(path)[0]?.headers['webhook-timestamp']);
    expect(sentAtSecs * 1000).toBeGreaterThanOrEqual(claimedAt + claimedFor - 1000);
  }, 120_000);
});
