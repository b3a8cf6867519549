import { messageReceipt, sqsWorker } from '../../core/sqs-worker';
import { processFanoutMessage } from '../../domain/notifications/fanout';
import { parseFanoutMessage } from '../../domain/notifications/fanout-messages';

export const handler = sqsWorker('notifications.fanout', (body, record, context) =>
  processFanoutMessage(parseFanoutMessage(body), messageReceipt(record, context)),
);
