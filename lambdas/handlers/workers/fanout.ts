import { messageHandling, sqsWorker } from '../../core/workers';
import { processFanoutMessage } from '../../domain/notifications/fanout';
import { fanoutQueue } from '../../domain/notifications/fanout-messages';

export const handler = sqsWorker('notifications.fanout', fanoutQueue, (message, record, context) =>
  processFanoutMessage(message, messageHandling(record, context)),
);
