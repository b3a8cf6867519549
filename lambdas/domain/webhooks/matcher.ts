import { tableName } from '../../core/clients';
import { logger } from '../../core/logger';
import { queryAll } from '../../core/paging';
import { parseBusEnvelope } from '../events/envelope';
import { createDelivery, type DeliveryMessage, type EventSnapshot, enqueueAttempts } from './deliveries';
import { filterKeysFor } from './filters';

export const eventFromEnvelope = (body: string): { event: EventSnapshot; replayName?: string } => {
  const envelope = parseBusEnvelope(body);
  const detail = envelope.detail;
  return {
    event: {
      id: detail.id,
      event_type: envelope['detail-type'],
      source: envelope.source,
      version: detail.version,
      data: detail.data,
      priority: detail.priority ?? 'normal',
      time: envelope.time,
    },
    ...(envelope['replay-name'] ? { replayName: envelope['replay-name'] } : {}),
  };
};

/** Ids of the enabled webhooks whose filters match the event type: one Query per filter key, never a Scan. */
export const matchingWebhookIds = async (eventType: string): Promise<string[]> => {
  const ids = new Set<string>();
  await Promise.all(
    filterKeysFor(eventType).map(async (filter) => {
      const items = await queryAll<{ webhook_id: unknown }>({
        TableName: tableName('webhookFilters'),
        KeyConditionExpression: '#filter = :filter',
        ExpressionAttributeNames: { '#filter': 'filter' },
        ExpressionAttributeValues: { ':filter': filter },
      });
      for (const item of items) ids.add(String(item.webhook_id));
    }),
  );
  return [...ids];
};

/**
 * One delivery per matching webhook, created once per (event, webhook) and handed to the delivery queue.
 * The delivery id is the event id, so a receiver sees one `webhook-id` per event; an archive replay is a
 * new delivery (`<event id>~<replay name>`), as replaying means sending again.
 */
export const matchEvent = async (body: string, now = new Date()): Promise<number> => {
  const { event, replayName } = eventFromEnvelope(body);
  const deliveryId = replayName ? `${event.id}~${replayName}` : event.id;
  const webhookIds = await matchingWebhookIds(event.event_type);
  const messages: DeliveryMessage[] = [];
  await Promise.all(
    webhookIds.map(async (webhookId) => {
      if (await createDelivery(webhookId, deliveryId, event, now)) {
        messages.push({ webhook_id: webhookId, delivery_id: deliveryId, run: 0, attempt: 1 });
      }
    }),
  );
  await enqueueAttempts(messages);
  logger.info('event matched', {
    event_id: event.id,
    event_type: event.event_type,
    webhooks: messages.length,
  });
  return messages.length;
};
