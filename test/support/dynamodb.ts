import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import type { TableSpec } from '../../lib/wiring';
import { wiring } from '../../lib/wiring';
import {
  createTables,
  type DynamoDbLocal,
  LOCAL_AWS_ENV,
  startDynamoDbLocal,
} from '../../local/dynamodb-local';

/**
 * Starts DynamoDB Local for one test file, creates the declared tables and points this process's SDK
 * clients and `NOTIFY_TABLE_*` variables at them, as the local runtime does for handlers.
 */
export const useDynamoDbLocal = (
  tables: readonly TableSpec[] = wiring.tables,
): { readonly db: () => DynamoDbLocal } => {
  let db: DynamoDbLocal | undefined;
  const saved = { ...process.env };
  beforeAll(async () => {
    db = await startDynamoDbLocal();
    const tableEnv = await createTables(db.client, tables);
    Object.assign(process.env, LOCAL_AWS_ENV, tableEnv, { AWS_ENDPOINT_URL_DYNAMODB: db.endpoint });
  });
  afterAll(async () => {
    process.env = saved;
    await db?.stop();
  });
  return {
    db: () => {
      if (!db) throw new Error('DynamoDB Local is not started yet');
      return db;
    },
  };
};

/** How many receiver records (feed items, read or not) a user has: the "exactly once" checks count these. */
export const receiverCount = async (userId: string): Promise<number> => {
  const result = await documentClient().send(
    new QueryCommand({
      TableName: tableName('receivers'),
      KeyConditionExpression: 'user_id = :user',
      ExpressionAttributeValues: { ':user': userId },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return result.Count ?? 0;
};
