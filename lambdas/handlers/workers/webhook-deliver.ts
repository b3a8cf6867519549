import { sqsWorker } from '../../core/sqs-worker';
import { deliverAttempt, parseDeliveryMessage } from '../../domain/webhooks/deliver';

export const handler = sqsWorker('webhooks.deliver', (body, record, context) =>
  deliverAttempt(parseDeliveryMessage(body), {
    messageId: record.messageId,
    receiveCount: Number(record.attributes.ApproximateReceiveCount),
    deadline: new Date(Date.now() + context.getRemainingTimeInMillis()),
  }),
);
