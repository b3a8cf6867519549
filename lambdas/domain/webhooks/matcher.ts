import { tableName } from '../../core/clients';
import { logger } from '../../core/logger';
import type { MessageHandling } from '../../core/message-handling';
import { queryAll } from '../../core/paging';
import type { BusEnvelope } from '../events/envelope';
import { deliverFirstAttempt } from './deliver';
import type { EventSnapshot } from './deliveries';
import { filterKeysFor } from './filters';

export const eventFromEnvelope = (envelope: BusEnvelope): { event: EventSnapshot; replayName?: string } => {
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
 * One delivery per matching webhook, created once per (event, webhook), and its first attempt made here, by the
 * delivery code the queue's worker runs (claims, endpoint slots, retries; `deliverFirstAttempt` creates the
 * delivery already claimed): only what follows — a retry, or an attempt deferred while its endpoint is busy —
 * goes through the delivery queue, which saves a queue hop per delivered event. The invocation succeeds (this
 * returns) only once each first attempt has reached what `deliverAttempt` promises: a final state, or the next
 * attempt queued or scheduled. An event handled again (Lambda's retry, a duplicate) makes the first attempt of
 * each delivery still at it again; the attempt's claim lets one invocation make it. The delivery id is the event id, so
 * a receiver sees one `webhook-id` per event; an archive replay is a new delivery (`<event id>~<replay name>`),
 * as replaying means sending again.
 */
export const matchEvent = async (
  envelope: BusEnvelope,
  handling: MessageHandling,
  now = new Date(),
): Promise<number> => {
  const { event, replayName } = eventFromEnvelope(envelope);
  const deliveryId = replayName ? `${event.id}~${replayName}` : event.id;
  const webhookIds = await matchingWebhookIds(event.event_type);
  // Every webhook gets its attempt even when another one's fails: the message then comes back for the rest.
  const outcomes = await Promise.allSettled(
    webhookIds.map((webhookId) => deliverFirstAttempt(webhookId, deliveryId, event, handling, now)),
  );
  const attempts = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value).length;
  logger.info('event matched', {
    event_id: event.id,
    event_type: event.event_type,
    webhooks: webhookIds.length,
    first_attempts: attempts,
  });
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return attempts;
};
