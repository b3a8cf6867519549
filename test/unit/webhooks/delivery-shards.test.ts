import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { ServiceError } from '../../../lambdas/core/errors';
import { newIdAt } from '../../../lambdas/core/ids';
import { queryPageAcross } from '../../../lambdas/core/paging';
import {
  createDelivery,
  deliveryKey,
  deliveryPartition,
  type EventSnapshot,
  findDelivery,
  newDeliveryRef,
} from '../../../lambdas/domain/webhooks/deliveries';
import { listDeliveries } from '../../../lambdas/domain/webhooks/delivery-admin';
import { envNames } from '../../../lib/wiring';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { storeWebhook } from '../../support/webhooks';

/**
 * Write sharding of one webhook's deliveries (docs/scale.md, "one busy webhook endpoint"): a webhook's
 * deliveries spread over `NOTIFY_WEBHOOK_DELIVERY_SHARDS` partitions, and the listing and the lookup by id
 * still see each of them once, newest first — on DynamoDB Local, through the service's own code.
 */
useDynamoDbLocal();

const SHARDS = envNames.webhookDeliveryShards;
afterEach(() => {
  delete process.env[SHARDS];
});

let clock = Date.UTC(2026, 10, 1);
const eventAt = (): EventSnapshot => {
  clock += 1000;
  return {
    id: newIdAt(clock),
    event_type: 'shop.order',
    source: 'shop',
    version: 1,
    data: {},
    priority: 'normal',
    time: new Date(clock).toISOString(),
  };
};

const newWebhook = (): Promise<string> =>
  storeWebhook({ id: newIdAt(Date.now()), url: 'https://example.com/', filter: 'shop.*' });

/** `count` deliveries to the webhook, created as the matcher creates them; their ids, oldest first. */
const deliver = async (webhookId: string, count: number): Promise<string[]> => {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const event = eventAt();
    await createDelivery(newDeliveryRef(webhookId, event.id), event, new Date(clock));
    ids.push(event.id);
  }
  return ids;
};

const partitionSizes = async (webhookId: string, shards: number): Promise<number[]> =>
  Promise.all(
    Array.from({ length: shards }, async (_, shard) => {
      const out = await documentClient().send(
        new QueryCommand({
          TableName: tableName('webhookDeliveries'),
          KeyConditionExpression: 'webhook_id = :partition',
          ExpressionAttributeValues: { ':partition': deliveryPartition(webhookId, shard) },
          Select: 'COUNT',
        }),
      );
      return out.Count ?? 0;
    }),
  );

/** Every page of the listing, with the page size; the ids in the order listed. */
const listAll = async (webhookId: string, limit: number, status?: 'dead_letter') => {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await listDeliveries(webhookId, { limit, cursor, status });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((item) => item.id));
    if (page.next_cursor === null) return ids;
    cursor = page.next_cursor;
  }
  throw new Error('the listing does not end');
};

const markDeadLetter = (webhookId: string, deliveryId: string, shard: number) =>
  documentClient().send(
    new UpdateCommand({
      TableName: tableName('webhookDeliveries'),
      Key: deliveryKey({ webhook_id: webhookId, delivery_id: deliveryId, shard }),
      UpdateExpression: 'SET #status = :dead',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':dead': 'dead_letter' },
    }),
  );

describe('one webhook’s deliveries over several partitions', () => {
  it('spreads them evenly over the shards and lists each once, newest first, page after page', async () => {
    process.env[SHARDS] = '4';
    const webhookId = await newWebhook();
    const ids = await deliver(webhookId, 80);
    const sizes = await partitionSizes(webhookId, 4);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(80);
    // 80 time-ordered ids hashed over 4 shards: each holds a share (20 on average), none most of them.
    for (const size of sizes) {
      expect(size).toBeGreaterThanOrEqual(8);
      expect(size).toBeLessThanOrEqual(32);
    }
    const newestFirst = [...ids].reverse();
    expect(await listAll(webhookId, 7)).toEqual(newestFirst);
    expect(await listAll(webhookId, 100)).toEqual(newestFirst);
    expect(await listAll(webhookId, 1)).toEqual(newestFirst);
  });

  it('lists the dead letters of every shard, in order, through the status filter', async () => {
    process.env[SHARDS] = '4';
    const webhookId = await newWebhook();
    const ids = await deliver(webhookId, 40);
    const dead = ids.filter((_, index) => index % 6 === 0);
    for (const id of dead) await markDeadLetter(webhookId, id, newDeliveryRef(webhookId, id).shard ?? 0);
    expect(new Set(dead.map((id) => newDeliveryRef(webhookId, id).shard)).size).toBeGreaterThan(1);
    expect(await listAll(webhookId, 3, 'dead_letter')).toEqual([...dead].reverse());
  });

  it('skips no dead letter when a shard’s reading stops short (few matches far down the partitions)', async () => {
    process.env[SHARDS] = '4';
    const webhookId = await newWebhook();
    const ids = await deliver(webhookId, 120);
    // A few, far apart: with a page of 1 each shard reads at most 10 × 2 items per page (≈ 30 per shard here),
    // so the shards stop at different places and a page may end with none.
    const dead = ids.filter((_, index) => index % 25 === 7);
    for (const id of dead) await markDeadLetter(webhookId, id, newDeliveryRef(webhookId, id).shard ?? 0);
    expect(await listAll(webhookId, 1, 'dead_letter')).toEqual([...dead].reverse());
  });

  it('still lists and finds every delivery after the shard count is raised, and those from before sharding', async () => {
    const webhookId = await newWebhook();
    // Written before deliveries were sharded: the partition is the webhook id itself (shard 0).
    const unsharded = eventAt();
    await createDelivery({ webhook_id: webhookId, delivery_id: unsharded.id }, unsharded, new Date(clock));
    process.env[SHARDS] = '2';
    const before = await deliver(webhookId, 12);
    process.env[SHARDS] = '8';
    const after = await deliver(webhookId, 30);
    expect((await partitionSizes(webhookId, 8)).filter((size) => size > 0).length).toBeGreaterThan(2);
    const all = [unsharded.id, ...before, ...after];
    expect(await listAll(webhookId, 5)).toEqual([...all].reverse());
    for (const id of [unsharded.id, ...before.slice(0, 4), ...after.slice(0, 4)]) {
      const found = await findDelivery(webhookId, id);
      expect(found?.record.delivery_id).toBe(id);
      expect(found && deliveryKey(found.ref)).toEqual({
        webhook_id: found?.record.webhook_id,
        delivery_id: id,
      });
    }
    expect(await findDelivery(webhookId, eventAt().id)).toBeUndefined();
  });

  it('refuses a cursor of another webhook’s listing', async () => {
    process.env[SHARDS] = '4';
    const [first, second] = [await newWebhook(), await newWebhook()];
    await deliver(first, 3);
    const page = await listDeliveries(first, { limit: 1 });
    expect(page.next_cursor).not.toBeNull();
    const refused = await listDeliveries(second, { limit: 1, cursor: page.next_cursor ?? '' }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ServiceError);
  });
});

describe('a page across partitions whose readings stop at different places', () => {
  it('ends where the first partition stopped, so the next page skips nothing', async () => {
    // A dense partition (every position 100 … 1) and a sparse one (every third), one match in each below where
    // the first page's reading stops: 10 reads of 2 items reach position 81 in the dense one, 42 in the other.
    const position = (n: number) => String(n).padStart(3, '0');
    const put = (partition: string, n: number, match: boolean) =>
      documentClient().send(
        new PutCommand({
          TableName: tableName('webhookDeliveries'),
          Item: {
            webhook_id: partition,
            delivery_id: position(n),
            status: match ? 'dead_letter' : 'succeeded',
          },
        }),
      );
    const [dense, sparse] = [`dense-${clock}`, `sparse-${clock}`];
    for (let n = 100; n >= 1; n--) await put(dense, n, n === 75);
    for (let n = 99; n >= 3; n -= 3) await put(sparse, n, n === 30);
    const listed: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const page = await queryPageAcross<Record<string, unknown>>(
        [dense, sparse].map((partition) => ({
          TableName: tableName('webhookDeliveries'),
          KeyConditionExpression: 'webhook_id = :partition',
          FilterExpression: '#status = :dead',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':partition': partition, ':dead': 'dead_letter' },
        })),
        {
          limit: 1,
          after,
          startKeyAt: (index, at) => ({ webhook_id: [dense, sparse][index], delivery_id: at }),
          positionOf: (item) => String(item.delivery_id),
          keyOf: (item) => ({ webhook_id: item.webhook_id, delivery_id: item.delivery_id }),
          order: 'descending',
          maxReads: 10,
        },
      );
      listed.push(...page.items.map((item) => String(item.delivery_id)));
      if (page.after === undefined) break;
      after = page.after;
    }
    expect(listed).toEqual([position(75), position(30)]);
  });
});
