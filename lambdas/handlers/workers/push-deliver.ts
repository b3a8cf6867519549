import { messageHandling, sqsWorker } from '../../core/workers';
import { handlePushMessage } from '../../domain/push/deliver';
import { pushQueue } from '../../domain/push/messages';

export const handler = sqsWorker('push.deliver', pushQueue, (message, record, context) =>
  handlePushMessage(message, messageHandling(record, context)),
);
