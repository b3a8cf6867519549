import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { conflict, notFound, validationError } from '../../core/errors';
import { countQuery, type ItemKey, queryPage } from '../../core/paging';
import type * as z from '../../core/zod';
import type { deviceListSchema, deviceSchema } from './responses';
import {
  type ListDevicesQuery,
  MAX_DEVICES_PER_USER,
  type Platform,
  type RegisterDeviceInput,
} from './schema';

/**
 * One item per token, keyed by the token's SHA-256 (a token of 4,096 characters is up to 16 KB, over
 * DynamoDB's key limits), so a token has one owner; byUser (user_id + token_hash) lists a user's devices.
 */
interface DeviceRecord {
  readonly token_hash: string;
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

/** base64url SHA-256: 43 characters whatever the token. */
export const tokenHashOf = (token: string): string =>
  createHash('sha256').update(token, 'utf8').digest('base64url');

const TOKEN_HASH = /^[A-Za-z0-9_-]{43}$/;

/** How many devices the user has (a COUNT Query on byUser; eventually consistent, like every index read). */
const deviceCount = (userId: string): Promise<number> =>
  countQuery({
    TableName: tableName('devices'),
    IndexName: 'byUser',
    KeyConditionExpression: 'user_id = :user',
    ExpressionAttributeValues: { ':user': userId },
  });

/**
 * Registers (upserts) a token for the user. The same owner re-registering updates platform and app_id and
 * keeps created_at; a token new to the user (new, or taken over from another user: one item per token, so the
 * previous owner's list loses it in the same write) counts against MAX_DEVICES_PER_USER and gets a new created_at.
 */
export const registerDevice = async (userId: string, input: RegisterDeviceInput): Promise<Device> => {
  const now = new Date().toISOString();
  const table = tableName('devices');
  const tokenHash = tokenHashOf(input.token);
  const appId = input.app_id ?? null;
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { token_hash: tokenHash },
        UpdateExpression: 'SET platform = :platform, app_id = :app, updated_at = :now',
        ConditionExpression: 'user_id = :user',
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
  // Checked before the write, so registrations racing each other can pass it by as many as are in flight.
  if ((await deviceCount(userId)) >= MAX_DEVICES_PER_USER) {
    throw conflict(
      `A user may register at most ${MAX_DEVICES_PER_USER} devices; delete one (DELETE /devices) first`,
    );
  }
  const record: DeviceRecord = {
    token_hash: tokenHash,
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
        Key: { token_hash: tokenHashOf(token) },
        ConditionExpression: 'user_id = :user',
        ExpressionAttributeValues: { ':user': userId },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw notFound('Device not found');
    throw error;
  }
};

/**
 * The user's own devices, a page at a time (Query on byUser, in token-hash order). The cursor is the last
 * token hash: it can only page within the caller's own list, so it needs no signature, only a shape check.
 */
export const listDevices = async (
  userId: string,
  query: ListDevicesQuery,
): Promise<z.output<typeof deviceListSchema>> => {
  if (query.cursor !== undefined && !TOKEN_HASH.test(query.cursor)) {
    throw validationError('Invalid query', [{ field: 'cursor', issue: 'is not a cursor of this listing' }]);
  }
  const page = await queryPage<DeviceRecord & ItemKey>(
    {
      TableName: tableName('devices'),
      IndexName: 'byUser',
      KeyConditionExpression: 'user_id = :user',
      ExpressionAttributeValues: { ':user': userId },
    },
    {
      limit: query.limit,
      startKey: query.cursor ? { user_id: userId, token_hash: query.cursor } : undefined,
      keyOf: (item) => ({ user_id: item.user_id, token_hash: item.token_hash }),
    },
  );
  return {
    items: page.items.map(toDevice),
    next_cursor: page.nextKey ? (page.nextKey.token_hash as string) : null,
  };
};
