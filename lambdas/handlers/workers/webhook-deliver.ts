import { messageReceipt, sqsWorker } from '../../core/sqs-worker';
import { deliverAttempt, parseDeliveryMessage } from '../../domain/webhooks/deliver';

export const handler = sqsWorker('webhooks.deliver', (body, record, context) =>
  deliverAttempt(parseDeliveryMessage(body), messageReceipt(record, context)),
);
