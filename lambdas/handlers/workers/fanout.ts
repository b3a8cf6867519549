import { messageReceipt, sqsWorker } from '../../core/sqs-worker';
import { processFanoutMessage } from '../../domain/notifications/fanout';
import { parseFanoutMessage } from '../../domain/notifications/fanout-messages';
import { purgeTopicPage, topicPurgeOf } from '../../domain/topics/deletion';

export const handler = sqsWorker('notifications.fanout', (body, record, context) => {
  const purge = topicPurgeOf(body);
  if (purge) return purgeTopicPage(purge);
  return processFanoutMessage(parseFanoutMessage(body), messageReceipt(record, context));
});
