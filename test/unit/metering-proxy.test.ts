import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoDbLocal, LOCAL_AWS_ENV, startDynamoDbLocal } from '../../local/dynamodb-local';
import { type DynamoDbCall, type DynamoDbProxy, startDynamoDbProxy } from '../../local/metering';

describe('DynamoDB metering proxy', () => {
  let dynamo: DynamoDbLocal;
  let proxy: DynamoDbProxy;
  let client: DynamoDBClient;
  const calls: DynamoDbCall[] = [];

  beforeAll(async () => {
    dynamo = await startDynamoDbLocal();
    proxy = await startDynamoDbProxy(dynamo.endpoint, { onCall: (call) => calls.push(call) });
    client = new DynamoDBClient({
      endpoint: proxy.endpoint,
      region: LOCAL_AWS_ENV.AWS_REGION,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await client.send(
      new CreateTableCommand({
        TableName: 'metered',
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      }),
    );
  }, 60_000);

  afterAll(async () => {
    client?.destroy();
    await proxy?.stop();
    await dynamo?.stop();
  });

  it('counts the units DynamoDB Local reports and hides them from a caller that did not ask', async () => {
    calls.length = 0;
    const put = await client.send(
      new PutItemCommand({ TableName: 'metered', Item: { pk: { S: 'a' }, big: { S: 'x'.repeat(2500) } } }),
    );
    expect(put.ConsumedCapacity).toBeUndefined();
    expect(calls).toEqual([
      {
        operation: 'PutItem',
        kind: 'write',
        units: new Map([['metered', 3]]),
        computed: false,
        // The request as the caller sent it (no ReturnConsumedCapacity added), for partition spread.
        request: { TableName: 'metered', Item: { pk: { S: 'a' }, big: { S: 'x'.repeat(2500) } } },
      },
    ]);
  });

  it('answers TOTAL without the per-index breakdown', async () => {
    const get = await client.send(
      new GetItemCommand({ TableName: 'metered', Key: { pk: { S: 'a' } }, ReturnConsumedCapacity: 'TOTAL' }),
    );
    expect(get.Item?.pk?.S).toBe('a');
    expect(get.ConsumedCapacity).toEqual({ TableName: 'metered', CapacityUnits: 0.5 });
  });

  it('bills a read that finds nothing at the documented minimum', async () => {
    calls.length = 0;
    await client.send(
      new GetItemCommand({ TableName: 'metered', Key: { pk: { S: 'missing' } }, ConsistentRead: true }),
    );
    await client.send(
      new QueryCommand({
        TableName: 'metered',
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: 'missing' } },
      }),
    );
    expect(calls.map((call) => [call.operation, call.units.get('metered'), call.computed])).toEqual([
      ['GetItem', 1, false], // DynamoDB Local reports this one itself
      ['Query', 0.5, true],
    ]);
  });

  it('counts a failed conditional write as one write unit', async () => {
    calls.length = 0;
    await expect(
      client.send(
        new PutItemCommand({
          TableName: 'metered',
          Item: { pk: { S: 'a' } },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    ).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
    expect(calls).toEqual([
      {
        operation: 'PutItem',
        kind: 'write',
        units: new Map([['metered', 1]]),
        computed: true,
        request: expect.objectContaining({ TableName: 'metered', Item: { pk: { S: 'a' } } }),
      },
    ]);
  });
});
