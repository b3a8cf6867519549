import { messageReceipt, sqsWorker } from '../../core/sqs-worker';
import { matchEvent } from '../../domain/webhooks/matcher';

export const handler = sqsWorker('webhooks.match', (body, record, context) =>
  matchEvent(body, messageReceipt(record, context)),
);
