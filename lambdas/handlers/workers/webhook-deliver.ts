import { messageReceipt, sqsWorker } from '../../core/sqs-worker';
import { handleDeliveryMessage, parseDeliveryMessage } from '../../domain/webhooks/deliver';

export const handler = sqsWorker('webhooks.deliver', (body, record, context) =>
  handleDeliveryMessage(parseDeliveryMessage(body), messageReceipt(record, context)),
);
