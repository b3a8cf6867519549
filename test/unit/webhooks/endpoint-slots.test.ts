import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import type { MessageHandling } from '../../../lambdas/core/message-handling';
import { deliverFirstAttempt } from '../../../lambdas/domain/webhooks/deliver';
import { type EventSnapshot, getDelivery, newDeliveryRef } from '../../../lambdas/domain/webhooks/deliveries';
import { leaseSlot, SLOT_RETENTION_SECS } from '../../../lambdas/domain/webhooks/endpoint-slots';
import { LOCAL_KEY_ENV } from '../../../lambdas/domain/webhooks/secret-box';
import { createWebhook } from '../../../lambdas/domain/webhooks/webhooks';
import { wiring } from '../../../lib/wiring';
import { WebhookReceiver } from '../../e2e/webhook-receiver';
import { useDynamoDbLocal, useDynamoDbOutage } from '../../support/dynamodb';

/**
 * The first attempt asks for the webhook and a slot of its endpoint at once (the lease needs only the id), and
 * gives the slot back as soon as the POST is over. These tests hold it to never leaving a slot leased: not for
 * a webhook disabled (or deleted) meanwhile, which gets no POST, and not after a delivered attempt.
 */
useDynamoDbLocal();
const outage = useDynamoDbOutage();
const receiver = new WebhookReceiver();
const LIMIT = 2;
const saved = { ...process.env };

beforeAll(async () => {
  process.env[LOCAL_KEY_ENV] = randomBytes(32).toString('base64');
  process.env.NOTIFY_WEBHOOK_ENDPOINT_CONCURRENCY = String(LIMIT);
  process.env.NOTIFY_WEBHOOK_ALLOW_LOOPBACK = 'true';
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  process.env = saved;
});

const handling = (): MessageHandling => ({
  messageId: `req-${randomBytes(6).toString('hex')}`,
  receive: 'r1',
  deadline: new Date(Date.now() + 30_000),
  redeliveredBy: 'lambda',
});

const event = (): EventSnapshot => ({
  id: `evt-${randomBytes(8).toString('hex')}`,
  event_type: 'slot.test',
  source: 'shop',
  version: 1,
  data: {},
  priority: 'normal',
  time: new Date().toISOString(),
});

const newWebhook = async () => {
  const path = `/slots/${randomBytes(6).toString('hex')}`;
  const secret = 'slot-secret-0123456789';
  const view = await createWebhook({
    url: receiver.endpoint(path, secret, [{ status: 200 }]),
    secret,
    event_filters: ['slot.test'],
    name: 'slots',
  });
  return { id: view.id, path };
};

/** The holders of the webhook's endpoint slots that are leased now. */
const leasedSlots = async (webhookId: string) => {
  const holders: unknown[] = [];
  for (let slot = 0; slot < LIMIT; slot += 1) {
    const { Item } = await documentClient().send(
      new GetCommand({
        TableName: tableName('webhooks'),
        Key: { id: `${webhookId}#slot#${slot}` },
        ConsistentRead: true,
      }),
    );
    if (Item?.holder !== undefined) holders.push(Item.holder);
  }
  return holders;
};

/** Whether a request is the slot's release (the REMOVE of its holder). */
const isRelease = (operation: string, request: Readonly<Record<string, unknown>>) =>
  operation === 'UpdateItem' &&
  request.TableName === tableName('webhooks') &&
  String(request.UpdateExpression).startsWith('REMOVE holder');

/** Whether a request is the outcome's write of an attempt (an UpdateItem of the deliveries table). */
const isOutcome = (operation: string, request: Readonly<Record<string, unknown>>) =>
  operation === 'UpdateItem' && request.TableName === tableName('webhookDeliveries');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('endpoint slots of a first attempt', () => {
  it('are all free again once the attempt is delivered', async () => {
    const webhook = await newWebhook();
    const snapshot = event();
    expect(await deliverFirstAttempt(webhook.id, snapshot.id, snapshot, handling())).toBe(true);
    expect(receiver.at(webhook.path)).toHaveLength(1);
    expect((await getDelivery(newDeliveryRef(webhook.id, snapshot.id)))?.status).toBe('succeeded');
    expect(await leasedSlots(webhook.id)).toEqual([]);
  });

  it('are given back once the POST is over, before the outcome is recorded', async () => {
    const webhook = await newWebhook();
    let freeBeforeOutcome: boolean | undefined;
    // The outcome's write waits (up to 10 s) until the slot is free: given back only after the outcome, it never is.
    outage.interpose(async (operation, request) => {
      if (!isOutcome(operation, request) || freeBeforeOutcome !== undefined) return;
      const until = Date.now() + 10_000;
      while ((await leasedSlots(webhook.id)).length > 0 && Date.now() < until) await sleep(50);
      freeBeforeOutcome = (await leasedSlots(webhook.id)).length === 0;
    });
    const snapshot = event();
    expect(await deliverFirstAttempt(webhook.id, snapshot.id, snapshot, handling())).toBe(true);
    expect(receiver.at(webhook.path)).toHaveLength(1);
    expect(freeBeforeOutcome).toBe(true);
    expect((await getDelivery(newDeliveryRef(webhook.id, snapshot.id)))?.status).toBe('succeeded');
  });

  it('are given back when reading the webhook fails, and the failure is the attempt’s', async () => {
    const webhook = await newWebhook();
    const webhooksTable = tableName('webhooks');
    const isWebhookRead = (operation: string, request: Readonly<Record<string, unknown>>) =>
      operation === 'GetItem' &&
      request.TableName === webhooksTable &&
      (request.Key as { id?: { S?: string } }).id?.S === webhook.id;
    // The read fails only once the lease asked for beside it has landed (up to 5 s), then fails every retry.
    outage.interpose(async (operation, request) => {
      if (!isWebhookRead(operation, request)) return;
      const until = Date.now() + 5_000;
      while ((await leasedSlots(webhook.id)).length === 0 && Date.now() < until) await sleep(50);
    });
    outage.fail(isWebhookRead);
    const snapshot = event();
    await expect(deliverFirstAttempt(webhook.id, snapshot.id, snapshot, handling())).rejects.toThrow();
    outage.heal();
    expect(receiver.at(webhook.path)).toHaveLength(0);
    expect(await leasedSlots(webhook.id)).toEqual([]);
  });

  it('do not fail a delivered attempt when the slot cannot be given back (its lease expires by itself)', async () => {
    const webhook = await newWebhook();
    outage.fail(isRelease);
    const snapshot = event();
    expect(await deliverFirstAttempt(webhook.id, snapshot.id, snapshot, handling())).toBe(true);
    outage.heal();
    expect(receiver.at(webhook.path)).toHaveLength(1);
    expect((await getDelivery(newDeliveryRef(webhook.id, snapshot.id)))?.status).toBe('succeeded');
  });

  it('are given back when the webhook is found disabled, and it gets no POST', async () => {
    const webhook = await newWebhook();
    const webhooksTable = tableName('webhooks');
    let disabled = false;
    // Disabled just before the attempt's read of the webhook reaches the store (its lease is asked for beside it).
    outage.interpose(async (operation, request) => {
      if (operation !== 'GetItem' || request.TableName !== webhooksTable || disabled) return;
      disabled = true;
      await documentClient().send(
        new UpdateCommand({
          TableName: webhooksTable,
          Key: { id: webhook.id },
          UpdateExpression: 'SET enabled = :off',
          ExpressionAttributeValues: { ':off': false },
        }),
      );
    });
    const snapshot = event();
    expect(await deliverFirstAttempt(webhook.id, snapshot.id, snapshot, handling())).toBe(true);
    expect(disabled).toBe(true);
    expect(receiver.at(webhook.path)).toHaveLength(0);
    expect((await getDelivery(newDeliveryRef(webhook.id, snapshot.id)))?.status).toBe('dead_letter');
    expect(await leasedSlots(webhook.id)).toEqual([]);
  });
});

describe('endpoint slot items', () => {
  it('expire by TTL a while after their last lease, so a deleted webhook’s slots do not stay for good', async () => {
    const { id } = await newWebhook();
    const until = new Date(Date.now() + 30_000);
    const lease = await leaseSlot(id, 1, 'holder-1', until, new Date());
    expect(lease).toBeDefined();
    const { Item } = await documentClient().send(
      new GetCommand({ TableName: tableName('webhooks'), Key: lease?.key, ConsistentRead: true }),
    );
    // Epoch seconds (DynamoDB TTL), past the lease by the retention: never removed while it may be held.
    expect(Item?.ttl).toBe(Math.ceil(until.getTime() / 1000) + SLOT_RETENTION_SECS);
    expect(SLOT_RETENTION_SECS).toBeGreaterThanOrEqual(3600);
    expect(wiring.tables.find((table) => table.id === 'webhooks')?.ttlAttribute).toBe('ttl');
  });
});
