import { messageHandling, sqsWorker } from '../../core/workers';
import { handleDeliveryMessage } from '../../domain/webhooks/deliver';
import { deliveryQueue } from '../../domain/webhooks/deliveries';

export const handler = sqsWorker('webhooks.deliver', deliveryQueue, (message, record, context) =>
  handleDeliveryMessage(message, messageHandling(record, context)),
);
