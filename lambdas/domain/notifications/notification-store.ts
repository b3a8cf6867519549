import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { NotificationRecord } from './model';

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
    const existing = await documentClient().send(
      new GetCommand({ TableName: tableName('notifications'), Key: { id: record.id }, ConsistentRead: true }),
    );
    return (existing.Item as NotificationRecord | undefined) ?? record;
  }
};
