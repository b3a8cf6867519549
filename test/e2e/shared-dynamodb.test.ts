/**
 * The suite's shared DynamoDB Local (test/support/shared-dynamodb.ts): a runtime started by a test file makes
 * its tables under a prefix of its own in the worker's instance, sees no other file's tables, and deletes its
 * tables on stop while the instance keeps running for the next file.
 */
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClient } from '../../lambdas/core/clients';
import { wiring } from '../../lib/wiring';
import { connectDynamoDbLocal, createTables, deleteTables } from '../../local/dynamodb-local';
import { apiClient } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { sharedDynamoDb } from '../support/shared-dynamodb';

describe('the shared DynamoDB Local', () => {
  it('gives each runtime tables of its own, isolated from another prefix, and deletes them on stop', async () => {
    const shared = sharedDynamoDb();
    if (!shared) throw new Error('the global set-up (vitest.config.ts) started no shared DynamoDB Local');
    const db = await connectDynamoDbLocal(shared.endpoint);
    const tableNames = async () => {
      const names: string[] = [];
      let start: string | undefined;
      do {
        const page = await db.client.send(new ListTablesCommand({ ExclusiveStartTableName: start }));
        names.push(...(page.TableNames ?? []));
        start = page.LastEvaluatedTableName;
      } while (start);
      return names;
    };
    // Another file's tables, in the same instance.
    const neighbour = sharedDynamoDb() ?? shared;
    expect(neighbour.tablePrefix).not.toBe(shared.tablePrefix);
    const neighbourEnv = await createTables(db.client, wiring.tables, neighbour.tablePrefix);
    const neighbourTable = neighbourEnv.NOTIFY_TABLE_PREFERENCES as string;
    const runtime: Runtime = await startTestRuntime();
    const api = apiClient(() => runtime.httpUrl);
    try {
      expect(runtime.javaPid).toBeUndefined();
      expect(runtime.env.AWS_ENDPOINT_URL_DYNAMODB).not.toBe(shared.endpoint); // the access-checking proxy
      const ownTable = runtime.env.NOTIFY_TABLE_PREFERENCES as string;
      expect(ownTable).toMatch(/^t[0-9a-f]{8}-preferences$/);
      expect(ownTable).not.toBe(neighbourTable);
      expect(
        (await tableNames()).filter((name) => name.startsWith(ownTable.replace(/preferences$/, ''))),
      ).toHaveLength(wiring.tables.length);

      // What the runtime's functions write lands in its own tables, not in the neighbour's.
      const user = 'shared-ddb-user';
      const put = await api('PUT', '/preferences', await runtime.mintUserToken(user), {
        rules: [],
        muted_topics: ['news'],
      });
      expect(put.status).toBe(200);
      const key = { owner: `user:${user}` };
      const direct = documentClient();
      const own = await direct.send(
        new GetCommand({ TableName: runtime.env.NOTIFY_TABLE_PREFERENCES, Key: key }),
      );
      expect(own.Item).toBeDefined();
      const neighbours = await direct.send(new GetCommand({ TableName: neighbourTable, Key: key }));
      expect(neighbours.Item).toBeUndefined();
    } finally {
      await runtime.stop();
    }
    const left = await tableNames();
    expect(left.filter((name) => name.startsWith(shared.tablePrefix))).toEqual([]);
    expect(left).toContain(neighbourTable);
    await deleteTables(db.client, Object.values(neighbourEnv));
    expect((await tableNames()).filter((name) => name.startsWith(neighbour.tablePrefix))).toEqual([]);
    await db.stop();
  }, 120_000);
});
