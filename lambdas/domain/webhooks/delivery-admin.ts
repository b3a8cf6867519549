import { tableName } from '../../core/clients';
import { conflict, invalidCursor, notFound } from '../../core/errors';
import { queryPageAcross } from '../../core/paging';
import type * as z from '../../core/zod';
import {
  type DeliveryRecord,
  deliveryKey,
  deliveryPartition,
  deliveryShards,
  findDelivery,
  queueAttempts,
  ttlFrom,
  updateDelivery,
} from './deliveries';
import type { deliveryPageSchema, deliverySchema } from './responses';
import { requireWebhook } from './webhooks';

/** One delivery of GET /webhooks/{id}/deliveries (the schema is the API documents' too). */
export type DeliveryView = z.output<typeof deliverySchema>;

export const toDeliveryView = (record: DeliveryRecord): DeliveryView => ({
  id: record.delivery_id,
  event_id: record.event.id,
  event_type: record.event.event_type,
  status: record.status,
  attempts: [...record.attempts],
  next_attempt_at: record.next_attempt_at ?? null,
  last_error: record.last_error ?? null,
  created_at: record.created_at,
  updated_at: record.updated_at,
});

const encodeCursor = (webhookId: string, after: string) =>
  Buffer.from(JSON.stringify({ w: webhookId, d: after })).toString('base64url');

/** The delivery id a page starts after (cursors from before sharding read the same). */
const decodeCursor = (webhookId: string, cursor: string): string => {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      w?: unknown;
      d?: unknown;
    };
    if (parsed.w === webhookId && typeof parsed.d === 'string' && parsed.d.length <= 256) return parsed.d;
  } catch {
    // fall through
  }
  throw invalidCursor();
};

/**
 * A webhook's deliveries, newest first (delivery ids are time-ordered event ids), each with its attempts.
 * `status=dead_letter` lists the dead-letter store. One Query per shard of the webhook's deliveries (write
 * sharding, `deliveryShards`), merged by delivery id; never a Scan.
 */
export const listDeliveries = async (
  webhookId: string,
  query: { limit: number; cursor?: string | undefined; status?: DeliveryRecord['status'] | undefined },
): Promise<z.output<typeof deliveryPageSchema>> => {
  await requireWebhook(webhookId);
  const partitions = Array.from({ length: deliveryShards() }, (_, shard) =>
    deliveryPartition(webhookId, shard),
  );
  const { items, after } = await queryPageAcross<DeliveryRecord & Record<string, unknown>>(
    partitions.map((partition) => ({
      TableName: tableName('webhookDeliveries'),
      KeyConditionExpression: 'webhook_id = :partition',
      ...(query.status
        ? { FilterExpression: '#status = :status', ExpressionAttributeNames: { '#status': 'status' } }
        : {}),
      ExpressionAttributeValues: {
        ':partition': partition,
        ...(query.status ? { ':status': query.status } : {}),
      },
    })),
    {
      limit: query.limit,
      after: query.cursor ? decodeCursor(webhookId, query.cursor) : undefined,
      startKeyAt: (shard, deliveryId) => ({ webhook_id: partitions[shard], delivery_id: deliveryId }),
      positionOf: (item) => String(item.delivery_id),
      keyOf: (item) => ({ webhook_id: item.webhook_id, delivery_id: item.delivery_id }),
      order: 'descending',
      // With a status filter a page may hold few matches: read on, a bounded number of times.
      maxReads: 10,
    },
  );
  return {
    items: items.map(toDeliveryView),
    next_cursor: after === undefined ? null : encodeCursor(webhookId, after),
  };
};

/**
 * Re-sends a dead-lettered delivery: a new run of the whole retry schedule with the same `webhook-id`, so a
 * receiver that did get it after all can drop the repeat.
 */
export const retryDelivery = async (webhookId: string, deliveryId: string, now = new Date()) => {
  const webhook = await requireWebhook(webhookId);
  if (!webhook.enabled) throw conflict('The webhook is disabled; create it again to receive deliveries');
  const found = await findDelivery(webhookId, deliveryId);
  if (!found) throw notFound('No such delivery');
  const { ref, record } = found;
  if (record.status === 'pending' && record.attempt_count === 0) {
    // A re-send accepted before whose message may have been lost: sending it again is harmless.
    await queueAttempts([{ ...ref, run: record.run, attempt: 1 }]);
    return { id: deliveryId, status: 'pending' as const };
  }
  if (record.status !== 'dead_letter') throw conflict('Only a dead-lettered delivery can be re-sent');
  const run = record.run + 1;
  const moved = await updateDelivery(deliveryKey(ref), {
    set: {
      status: 'pending',
      run,
      attempt_count: 0,
      next_attempt_at: null,
      updated_at: now.toISOString(),
      ttl: ttlFrom(now),
    },
    condition: '#status = :dead AND #run = :run',
    names: { '#status': 'status', '#run': 'run' },
    values: { ':dead': 'dead_letter', ':run': record.run },
  });
  if (!moved) throw conflict('The delivery changed meanwhile; list it again');
  await queueAttempts([{ ...ref, run, attempt: 1 }]);
  return { id: deliveryId, status: 'pending' as const };
};
