import { busWorker } from '../../core/workers';
import { asBusEnvelope } from '../../domain/events/envelope';
import { matchEvent } from '../../domain/webhooks/matcher';

export const handler = busWorker('webhooks.match', (event, handling) =>
  matchEvent(asBusEnvelope(event), handling),
);
