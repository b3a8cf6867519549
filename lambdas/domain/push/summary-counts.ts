import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { NotificationRecord } from '../notifications/model';
import { pushRetentionTtl, SUMMARY_KEY } from './records';

// Apart from report.ts: the deliverers (the accepting request among them) carry only this write.

/**
 * Adds what one deliverer did (a chunk, or the accepting request) to the summary: feed items it wrote (each written
 * once, so exact) and frames it sent (counted as sent, so a redelivered chunk's repeated frames count again).
 */
export const addDeliveryCounts = async (
  notification: Pick<NotificationRecord, 'id'>,
  counts: { readonly feedItems: number; readonly frames: number },
): Promise<void> => {
  if (counts.feedItems === 0 && counts.frames === 0) return;
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName('pushes'),
      Key: { notification_id: notification.id, record_key: SUMMARY_KEY },
      UpdateExpression: 'ADD feed_items :feed, frames :frames SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':feed': counts.feedItems,
        ':frames': counts.frames,
        ':ttl': pushRetentionTtl(),
      },
    }),
  );
};
