import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../lambdas/core/clients';
import { newId } from '../../lambdas/core/ids';
import { FEED_RETENTION_MS, type NotificationRecord } from '../../lambdas/domain/notifications/model';

/** Stores a notification as POST /notifications does, without its SQS hand-off. */
export const storeNotification = async (
  recipients: readonly string[],
  extra: Partial<NotificationRecord> = {},
): Promise<NotificationRecord> => {
  const now = Date.now();
  const record: NotificationRecord = {
    id: newId(),
    source: 'billing',
    event_type: 'invoice.paid',
    title: 'Invoice paid',
    body: '',
    data: { amount: 12 },
    priority: 'normal',
    channels: ['in_app'],
    recipient_ids: recipients,
    scheduled_at: null,
    expires_at: null,
    created_at: new Date(now).toISOString(),
    deliver_at: now,
    status: 'accepted',
    created_by: 'service:billing',
    ttl: Math.ceil((now + FEED_RETENTION_MS) / 1000),
    ...extra,
  };
  await documentClient().send(new PutCommand({ TableName: tableName('notifications'), Item: record }));
  return record;
};
