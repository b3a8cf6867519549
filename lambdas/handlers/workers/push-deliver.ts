import { queueAndInvokedWorker } from '../../core/workers';
import { handlePushMessage } from '../../domain/push/deliver';
import { pushQueue } from '../../domain/push/messages';

export const handler = queueAndInvokedWorker(
  'push.deliver',
  pushQueue,
  handlePushMessage,
  ({ kind, notification_id }) => ({ kind, notification_id }),
);
