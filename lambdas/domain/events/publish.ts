import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import * as envNames from '../../../common/env-names';
import { requiredEnv } from '../../core/clients';
import { eventBridge } from '../../core/clients-eventbridge';
import { unavailable } from '../../core/errors';
import { logger } from '../../core/logger';
import type { StoredResponse } from '../idempotency';
import type { EventDetail, PublishEventInput } from './schema';

/** The bus answered, but did not take the entry (FailedEntryCount > 0). */
class EventNotAccepted extends Error {
  constructor(
    readonly errorCode: string | undefined,
    readonly errorMessage: string | undefined,
  ) {
    super(`the bus did not accept the event: ${errorCode ?? 'no code'}: ${errorMessage ?? ''}`);
    this.name = 'EventNotAccepted';
  }
}

/**
 * Puts one event on the service's bus (source = `source`, detail-type = `eventType`), as POST /events does and as
 * the service publishes its own (`notify.*`); the bus's id of it. Throws when the bus is unreachable or did not take it.
 */
export const putEvent = async (source: string, eventType: string, detail: EventDetail): Promise<string> => {
  const result = await eventBridge().send(
    new PutEventsCommand({
      Entries: [
        {
          EventBusName: requiredEnv(envNames.busName),
          Source: source,
          DetailType: eventType,
          Detail: JSON.stringify(detail),
        },
      ],
    }),
  );
  const entry = result.Entries?.[0];
  if ((result.FailedEntryCount ?? 0) > 0 || !entry?.EventId) {
    throw new EventNotAccepted(entry?.ErrorCode, entry?.ErrorMessage);
  }
  return entry.EventId;
};

/**
 * POST /events: only an entry the bus accepted is answered 202: a failed entry or an unreachable bus is a 503,
 * and the client's retry with the same Idempotency-Key publishes it under the same id.
 */
export const publishEvent = async (input: PublishEventInput, id: string): Promise<StoredResponse> => {
  const detail: EventDetail = {
    id,
    version: input.version,
    data: input.data,
    priority: input.priority,
    archive: input.archive,
  };
  let busEventId: string;
  try {
    busEventId = await putEvent(input.source, input.event_type, detail);
  } catch (error) {
    if (error instanceof EventNotAccepted) {
      logger.error('PutEvents entry failed', {
        event_id: id,
        error_code: error.errorCode,
        error_message: error.errorMessage,
      });
      throw unavailable('The event bus did not accept the event, try again later');
    }
    logger.error('PutEvents failed', { event_id: id, error: error as Error });
    throw unavailable('The event bus is unavailable, try again later');
  }
  logger.info('event published', { event_id: id, bus_event_id: busEventId, archive: input.archive });
  return { status: 202, body: { id, archived: input.archive } };
};
