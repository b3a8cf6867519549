import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { NotificationRecord } from './model';

/**
 * How fresh a read must be. A notification is written once, before any message names it, and never changed, so
 * an eventually consistent read (half a strong one's price) is right whenever it finds the record:
 * `eventual-then-strong` looks again strongly only when it does not, which happens only right after the write.
 */
export type NotificationRead = 'strong' | 'eventual' | 'eventual-then-strong';

/** The stored notification, or undefined when there is none. */
export const readNotification = async (
  id: string,
  read: NotificationRead,
): Promise<NotificationRecord | undefined> => {
  const get = async (consistent: boolean) =>
    (
      await documentClient().send(
        new GetCommand({ TableName: tableName('notifications'), Key: { id }, ConsistentRead: consistent }),
      )
    ).Item as NotificationRecord | undefined;
  if (read === 'strong') return get(true);
  return (await get(false)) ?? (read === 'eventual-then-strong' ? get(true) : undefined);
};

/** Writes the record unless an earlier attempt with this id did; then the stored one wins. */
export const storeOnce = async (record: NotificationRecord): Promise<NotificationRecord> => {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('notifications'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    return record;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return (await readNotification(record.id, 'strong')) ?? record;
  }
};
