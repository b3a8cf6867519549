import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../lambdas/core/clients';

/** The user's records in the `digests` table whose entry starts with `prefix`, read strongly consistent. */
export const digestRecords = async (userId: string, prefix: string) =>
  (
    await documentClient().send(
      new QueryCommand({
        TableName: tableName('digests'),
        KeyConditionExpression: 'user_id = :user AND begins_with(entry, :prefix)',
        ExpressionAttributeValues: { ':user': userId, ':prefix': prefix },
        ConsistentRead: true,
      }),
    )
  ).Items ?? [];
