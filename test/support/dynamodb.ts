import { afterAll, beforeAll } from 'vitest';
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
