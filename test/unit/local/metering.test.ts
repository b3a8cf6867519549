import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDbLocal, deleteTables, LOCAL_AWS_ENV } from '../../../local/dynamodb-local';
import { type DynamoDbCall, type DynamoDbProxy, startDynamoDbProxy } from '../../../local/metering';
import { openTestDynamoDb } from '../../support/shared-dynamodb';

describe('DynamoDB metering proxy', () => {
  let tableName = 'metered';
  let dynamo: DynamoDbLocal;
  let proxy: DynamoDbProxy;
  let client: DynamoDBClient;
  const calls: DynamoDbCall[] = [];

  beforeAll(async () => {
    const opened = await openTestDynamoDb();
    dynamo = opened.db;
    tableName = `${opened.tablePrefix ?? ''}metered`;
    proxy = await startDynamoDbProxy(dynamo.endpoint, { onCall: (call) => calls.push(call) });
    client = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: LOCAL_AWS_ENV.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  }, 60_000);

  afterAll(async () => {
    client?.destroy();
    await proxy?.stop();
    if (dynamo) await deleteTables(dynamo.client, [tableName]);
    await dynamo?.stop();
  });

  it('counts the units DynamoDB Local reports and hides them from a caller that did not ask', async () => {
    calls.length = 0;
    const put = await client.send(
      new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'a' }, big: { S: 'x'.repeat(2500) } } }),
    );
    expect(put.ConsumedCapacity).toBeUndefined();
    expect(calls).toEqual([
      {
        operation: 'PutItem',
        kind: 'write',
        units: new Map([[tableName, 3]]),
        computed: false,
        // The request as the caller sent it (no ReturnConsumedCapacity added), for partition spread.
        request: { TableName: tableName, Item: { pk: { S: 'a' }, big: { S: 'x'.repeat(2500) } } },
      },
    ]);
  });

  it('answers TOTAL without the per-index breakdown', async () => {
    const get = await client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'a' } }, ReturnConsumedCapacity: 'TOTAL' }),
    );
    expect(get.Item?.pk?.S).toBe('a');
    expect(get.ConsumedCapacity).toEqual({ TableName: tableName, CapacityUnits: 0.5 });
  });

  it('bills a read that finds nothing at the documented minimum', async () => {
    calls.length = 0;
    await client.send(
      new GetItemCommand({ TableName: tableName, Key: { pk: { S: 'missing' } }, ConsistentRead: true }),
    );
    await client.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'missing' } },
      }),
    );
    expect(calls.map((call) => [call.operation, call.units.get(tableName), call.computed])).toEqual([
      ['GetItem', 1, false], // DynamoDB Local reports this one itself
      ['Query', 0.5, true],
    ]);
  });

  it('counts a failed conditional write as one write unit', async () => {
    calls.length = 0;
    await expect(
      client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: { pk: { S: 'a' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(calls).toEqual([
      {
        operation: 'PutItem',
        kind: 'write',
        units: new Map([[tableName, 1]]),
        computed: true,
        request: expect.objectContaining({ TableName: tableName, Item: { pk: { S: 'a' } } }),
      },
    ]);
  });
});
