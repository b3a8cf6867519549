import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import type { TableSpec } from '../../lib/wiring';
import { wiring } from '../../lib/wiring';
import {
  createTables,
  type DynamoDbLocal,
  LOCAL_AWS_ENV,
  startDynamoDbLocal,
} from '../../local/dynamodb-local';
import {
  type DynamoDbProxy,
  type DynamoDbProxyOptions,
  startDynamoDbProxy,
} from '../../local/metering/dynamodb-proxy';

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

/** Picks the DynamoDB calls an outage fails: the operation (`UpdateItem`, …) and the request as sent. */
export type DynamoDbCallMatch = NonNullable<DynamoDbProxyOptions['fail']>;

/**
 * A store outage for tests of what a caller sees when DynamoDB fails. Call after `useDynamoDbLocal()`: this
 * file's SDK clients then reach DynamoDB Local through the local runtime's DynamoDB proxy, and while
 * `fail(match)` is in effect every call it matches is answered with DynamoDB's 500 InternalServerError (the
 * SDK's retries too), until `heal()` or the end of the test. (For the local runtime: its `dynamoDbOutage` option.)
 */
export const useDynamoDbOutage = (): {
  fail(match: DynamoDbCallMatch): void;
  heal(): void;
} => {
  let failing: DynamoDbCallMatch | undefined;
  let proxy: DynamoDbProxy | undefined;
  beforeAll(async () => {
    const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    if (!endpoint) throw new Error('useDynamoDbOutage needs useDynamoDbLocal() before it');
    proxy = await startDynamoDbProxy(endpoint, {
      fail: (operation, request) => failing?.(operation, request) === true,
    });
    process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.endpoint;
  });
  afterEach(() => {
    failing = undefined;
  });
  afterAll(async () => {
    await proxy?.stop();
  });
  return {
    fail: (match) => {
      failing = match;
    },
    heal: () => {
      failing = undefined;
    },
  };
};
