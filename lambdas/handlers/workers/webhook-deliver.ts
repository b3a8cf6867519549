import { sqsWorker } from '../../core/sqs-worker';
import { deliverAttempt, parseDeliveryMessage } from '../../domain/webhooks/deliver';

export const handler = sqsWorker('webhooks.deliver', (body) => deliverAttempt(parseDeliveryMessage(body)));
