import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { documentClient, tableName } from '../../lambdas/core/clients';
import type { TableSpec } from '../../lib/wiring';
import { wiring } from '../../lib/wiring';
import { createTables, type DynamoDbLocal, deleteTables, LOCAL_AWS_ENV } from '../../local/dynamodb-local';
import {
  type DynamoDbProxy,
  type DynamoDbProxyOptions,
  startDynamoDbProxy,
} from '../../local/metering/dynamodb-proxy';
import { openTestDynamoDb } from './shared-dynamodb';

/**
 * Creates the declared tables for one test file, under a prefix of their own in the worker's shared DynamoDB
 * Local (shared-dynamodb.ts; a DynamoDB Local of the file's own without the global set-up), and points this
 * process's SDK clients and `NOTIFY_TABLE_*` variables at them, as the local runtime does for handlers.
 */
export const useDynamoDbLocal = (tables: readonly TableSpec[] = wiring.tables): void => {
  let db: DynamoDbLocal | undefined;
  let tableNames: string[] = [];
  const saved = { ...process.env };
  beforeAll(async () => {
    const opened = await openTestDynamoDb();
    db = opened.db;
    const tableEnv = await createTables(db.client, tables, opened.tablePrefix);
    tableNames = Object.values(tableEnv);
    Object.assign(process.env, LOCAL_AWS_ENV, tableEnv, { AWS_ENDPOINT_URL_DYNAMODB: db.endpoint });
  });
  afterAll(async () => {
    process.env = saved;
    if (db) await deleteTables(db.client, tableNames);
    await db?.stop();
  });
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
 * `interpose(before)` runs `before` ahead of each call until the end of the test: another write landing between
 * a read and the call (a race made certain).
 */
export const useDynamoDbOutage = (): {
  fail(match: DynamoDbCallMatch): void;
  heal(): void;
  interpose(before: NonNullable<DynamoDbProxyOptions['interpose']>): void;
} => {
  let failing: DynamoDbCallMatch | undefined;
  let interposed: DynamoDbProxyOptions['interpose'];
  let proxy: DynamoDbProxy | undefined;
  beforeAll(async () => {
    const endpoint = process.env.AWS_ENDPOINT_URL_DYNAMODB;
    if (!endpoint) throw new Error('useDynamoDbOutage needs useDynamoDbLocal() before it');
    proxy = await startDynamoDbProxy(endpoint, {
      fail: (operation, request) => failing?.(operation, request) === true,
      interpose: async (operation, request) => interposed?.(operation, request),
    });
    process.env.AWS_ENDPOINT_URL_DYNAMODB = proxy.endpoint;
  });
  afterEach(() => {
    failing = undefined;
    interposed = undefined;
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
    interpose: (before) => {
      interposed = before;
    },
  };
};
