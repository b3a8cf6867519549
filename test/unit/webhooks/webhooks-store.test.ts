import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { newId } from '../../../lambdas/core/ids';
import { webhookBody } from '../../../lambdas/domain/webhooks/deliver';
import { createDelivery, type EventSnapshot, getDelivery } from '../../../lambdas/domain/webhooks/deliveries';
import { matchingWebhookIds } from '../../../lambdas/domain/webhooks/matcher';
import { LOCAL_KEY_ENV, openSecret, sealSecret } from '../../../lambdas/domain/webhooks/secret-box';
import { useDynamoDbLocal } from '../../support/dynamodb';

useDynamoDbLocal();

beforeAll(() => {
  process.env[LOCAL_KEY_ENV] = randomBytes(32).toString('base64');
});

describe('secret sealing', () => {
  it('round-trips, and the sealed form reveals nothing of the secret', async () => {
    const secret = 'a-webhook-secret-of-some-length';
    const sealed = await sealSecret(secret, 'wh-1');
    const dump = JSON.stringify(sealed);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
    expect(await openSecret(sealed, 'wh-1')).toBe(secret);
  });

  it('cannot be opened under another webhook id or with a tampered ciphertext', async () => {
    const sealed = await sealSecret('another-secret-0123456', 'wh-2');
    await expect(openSecret(sealed, 'wh-3')).rejects.toThrow();
    const bytes = Buffer.from(sealed.ct, 'base64');
    bytes[14] = (bytes[14] ?? 0) ^ 1;
    await expect(openSecret({ ...sealed, ct: bytes.toString('base64') }, 'wh-2')).rejects.toThrow();
  });

  it('seals each secret under a fresh data key', async () => {
    const first = await sealSecret('same-secret-0123456789', 'wh-4');
    const second = await sealSecret('same-secret-0123456789', 'wh-4');
    expect(first.dk).not.toBe(second.dk);
    expect(first.ct).not.toBe(second.ct);
  });
});

describe('matching by key lookups', () => {
  it('finds the webhooks indexed under the type, its prefixes and *, each once', async () => {
    const tag = randomBytes(4).toString('hex');
    const put = (filter: string, webhookId: string) =>
      documentClient().send(
        new PutCommand({ TableName: tableName('webhookFilters'), Item: { filter, webhook_id: webhookId } }),
      );
    await put(`${tag}.created`, 'exact');
    await put(`${tag}.*`, 'prefix');
    await put(`${tag}.*`, 'both');
    await put(`${tag}.created`, 'both');
    await put(`${tag}.other`, 'other');
    await put(`${tag}.created.*`, 'deeper');
    const ids = await matchingWebhookIds(`${tag}.created`);
    expect(ids.sort()).toEqual(['both', 'exact', 'prefix']);
  });
});

describe('deliveries', () => {
  const event: EventSnapshot = {
    id: newId(),
    event_type: 'x.y',
    source: 's',
    version: 1,
    data: {},
    priority: 'normal',
    time: new Date().toISOString(),
  };
  /** The delivery in its webhook's first partition (where these tests write raw items). */
  const shard0 = (webhookId: string) => ({ webhook_id: webhookId, delivery_id: event.id, shard: 0 });

  it('creates one delivery per (webhook, event), however often asked', async () => {
    const webhookId = newId();
    const now = new Date();
    const results = await Promise.all([1, 2, 3].map(() => createDelivery(shard0(webhookId), event, now)));
    // Every call may enqueue the first attempt while none was made; only one item exists.
    expect(results.every((fresh) => fresh)).toBe(true);
    const stored = await documentClient().send(
      new GetCommand({
        TableName: tableName('webhookDeliveries'),
        Key: { webhook_id: webhookId, delivery_id: event.id },
      }),
    );
    expect(stored.Item).toMatchObject({ status: 'pending', attempt_count: 0, run: 0, attempts: [] });
  });

  it('does not hand out the first attempt again once it was made', async () => {
    const webhookId = newId();
    const now = new Date();
    expect(await createDelivery(shard0(webhookId), event, now)).toHaveProperty('created');
    await documentClient().send(
      new PutCommand({
        TableName: tableName('webhookDeliveries'),
        Item: {
          webhook_id: webhookId,
          delivery_id: event.id,
          event,
          status: 'succeeded',
          attempt_count: 1,
          run: 0,
          attempts: [],
        },
      }),
    );
    expect(await createDelivery(shard0(webhookId), event, now)).toBeUndefined();
  });

  it('sends the same body on every attempt: the first, from the record just created, and later ones, read back', async () => {
    // The matcher's first attempt signs the record it wrote; a retry signs the record DynamoDB gives back, whose
    // maps need not keep the keys' order. Found by test/reliability/bus-invoke-crash.test.ts (two bodies).
    const webhookId = newId();
    const withData: EventSnapshot = {
      ...event,
      id: `evt-${newId()}`,
      data: { zeta: 1, alpha: { y: [{ b: 2, a: 1 }], x: 'x' }, mid: null, beta: true },
    };
    const ref = { ...shard0(webhookId), delivery_id: withData.id };
    const created = await createDelivery(ref, withData, new Date());
    if (typeof created !== 'object') throw new Error('not created');
    const readBack = await getDelivery(ref);
    if (!readBack) throw new Error('not found');
    expect(webhookBody(readBack)).toBe(webhookBody(created.created));
    expect(JSON.parse(webhookBody(readBack))).toEqual({
      type: event.event_type,
      timestamp: event.time,
      data: withData,
    });
  });

  it('creates a delivery already claimed for its first attempt when given the claim (the matcher)', async () => {
    const webhookId = newId();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 35_000);
    const claim = { messageId: 'm-1', receive: '1', expiresAt };
    const created = await createDelivery(shard0(webhookId), event, now, claim);
    const stored = await documentClient().send(
      new GetCommand({
        TableName: tableName('webhookDeliveries'),
        Key: { webhook_id: webhookId, delivery_id: event.id },
        ConsistentRead: true,
      }),
    );
    expect(created).toEqual({ created: stored.Item });
    expect(stored.Item).toMatchObject({
      status: 'sending',
      attempt_count: 1,
      run: 0,
      claimed_by: 'm-1',
      claim_receive: '1',
      claim_expires_at: expiresAt.toISOString(),
    });
    // A second receive of the bus message (claimed or not) creates nothing and finds attempt 1 still at it.
    expect(await createDelivery(shard0(webhookId), event, now, { ...claim, messageId: 'm-2' })).toBe('due');
  });

  it('hands the first attempt out again while it may be unfinished: claimed, or failed with its retry perhaps not queued', async () => {
    const stored = (fields: Record<string, unknown>) => async () => {
      const webhookId = newId();
      await documentClient().send(
        new PutCommand({
          TableName: tableName('webhookDeliveries'),
          Item: { webhook_id: webhookId, delivery_id: event.id, event, attempts: [], run: 0, ...fields },
        }),
      );
      return createDelivery(shard0(webhookId), event, new Date());
    };
    // The matcher's receive that claimed it may have died: its bus message comes back to take the claim over.
    expect(await stored({ status: 'sending', attempt_count: 1 })()).toBe('due');
    expect(await stored({ status: 'retrying', attempt_count: 1 })()).toBe('due');
    // Past the first attempt, or a re-send: the delivery queue has it.
    expect(await stored({ status: 'retrying', attempt_count: 2 })()).toBeUndefined();
    expect(await stored({ status: 'dead_letter', attempt_count: 1 })()).toBeUndefined();
    expect(await stored({ status: 'pending', attempt_count: 0, run: 1 })()).toBeUndefined();
  });
});
