import { PutEventsCommand, type PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { envNames } from '../../../common/env';
import { requiredEnv } from '../../core/clients';
import { eventBridge } from '../../core/clients-eventbridge';
import { unavailable } from '../../core/errors';
import { logger } from '../../core/logger';
import type { StoredResponse } from '../idempotency';
import type { EventDetail, PublishEventInput } from './schema';

/**
 * Puts one event on the service's bus (source = `source`, detail-type = `event_type`). Only an entry the bus
 * accepted is answered 202: a failed entry (FailedEntryCount > 0) or an unreachable bus is a 503, and the
 * client's retry with the same Idempotency-Key publishes it under the same id.
 */
export const publishEvent = async (input: PublishEventInput, id: string): Promise<StoredResponse> => {
  const detail: EventDetail = {
    id,
    version: input.version,
    data: input.data,
    priority: input.priority,
    archive: input.archive,
  };
  let result: PutEventsCommandOutput;
  try {
    result = await eventBridge().send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: requiredEnv(envNames.busName),
            Source: input.source,
            DetailType: input.event_type,
            Detail: JSON.stringify(detail),
          },
        ],
      }),
    );
  } catch (error) {
    logger.error('PutEvents failed', { event_id: id, error: error as Error });
    throw unavailable('The event bus is unavailable, try again later');
  }
  const entry = result.Entries?.[0];
  if ((result.FailedEntryCount ?? 0) > 0 || !entry?.EventId) {
    logger.error('PutEvents entry failed', {
      event_id: id,
      error_code: entry?.ErrorCode,
      error_message: entry?.ErrorMessage,
    });
    throw unavailable('The event bus did not accept the event, try again later');
  }
  logger.info('event published', { event_id: id, bus_event_id: entry.EventId, archive: input.archive });
  return { status: 202, body: { id, archived: input.archive } };
};
