import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { notFound } from '../../core/errors';
import type * as z from '../../core/zod';
import type { deviceSchema } from './responses';
import type { Platform, RegisterDeviceInput } from './schema';

/** One item per token (the key), so a token has one owner; byUser lists a user's devices. */
interface DeviceRecord {
  readonly token: string;
  readonly user_id: string;
  readonly platform: Platform;
  readonly app_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** What the device routes answer (the schema is the API documents' too). */
export type Device = z.output<typeof deviceSchema>;

const toDevice = (record: DeviceRecord): Device => ({
  token: record.token,
  platform: record.platform,
  app_id: record.app_id,
  created_at: record.created_at,
});

/**
 * Registers (upserts) a token for the user. The same owner re-registering updates platform and app_id and
 * keeps created_at; another user registering it takes it over (one item per token: the previous owner's list
 * loses it in the same write), with a new created_at.
 */
export const registerDevice = async (userId: string, input: RegisterDeviceInput): Promise<Device> => {
  const now = new Date().toISOString();
  const table = tableName('devices');
  const appId = input.app_id ?? null;
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { token: input.token },
        UpdateExpression:
          'SET user_id = :user, platform = :platform, app_id = :app, updated_at = :now, created_at = if_not_exists(created_at, :now)',
        ConditionExpression: 'attribute_not_exists(#token) OR user_id = :user',
        ExpressionAttributeNames: { '#token': 'token' },
        ExpressionAttributeValues: {
          ':user': userId,
          ':platform': input.platform,
          ':app': appId,
          ':now': now,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toDevice(result.Attributes as DeviceRecord);
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  // Owned by another user: move it.
  const record: DeviceRecord = {
    token: input.token,
    user_id: userId,
    platform: input.platform,
    app_id: appId,
    created_at: now,
    updated_at: now,
  };
  await documentClient().send(new PutCommand({ TableName: table, Item: record }));
  return toDevice(record);
};

/** Removes the user's own token; a token that is unknown or someone else's is a 404 (a conditional delete). */
export const deleteDevice = async (userId: string, token: string): Promise<void> => {
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableName('devices'),
        Key: { token },
        ConditionExpression: 'user_id = :user',
        ExpressionAttributeValues: { ':user': userId },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw notFound('Device not found');
    throw error;
  }
};

/** The user's own devices: a Query on the byUser index, every page (a user has few). */
export const listDevices = async (userId: string): Promise<Device[]> => {
  const items: Device[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documentClient().send(
      new QueryCommand({
        TableName: tableName('devices'),
        IndexName: 'byUser',
        KeyConditionExpression: 'user_id = :user',
        ExpressionAttributeValues: { ':user': userId },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) items.push(toDevice(item as DeviceRecord));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
};
