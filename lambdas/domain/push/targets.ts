import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { queryAll } from '../../core/paging';
import { defaultProviderOf } from '../devices/default-provider';
import type { PushProviderName, PushTarget } from './provider';

/** A device as the push pipeline reads it from the `devices` table (written by the device routes, lambdas/domain/devices). */
interface DeviceItem {
  readonly token_hash: string;
  readonly token: string;
  readonly user_id: string;
  readonly platform: 'ios' | 'android' | 'web';
  readonly app_id: string | null;
  readonly provider?: PushProviderName;
  readonly apns_environment?: 'sandbox' | 'production';
  readonly web_keys?: { readonly p256dh: string; readonly auth: string };
  readonly created_at: string;
  readonly updated_at?: string;
}

/** One device of a recipient, ready to push to. */
export interface DeviceTarget {
  readonly user_id: string;
  readonly token_hash: string;
  readonly target: PushTarget;
  /** The registration as read (`updated_at`): pruning deletes only that registration, not a newer one. */
  readonly registration: string;
}

const toTarget = (item: DeviceItem): DeviceTarget => {
  const provider = item.provider ?? defaultProviderOf(item.platform, item.token);
  return {
    user_id: item.user_id,
    token_hash: item.token_hash,
    registration: item.updated_at ?? item.created_at,
    target: {
      provider,
      token: item.token,
      app_id: item.app_id ?? null,
      ...(item.apns_environment ? { apns_environment: item.apns_environment } : {}),
      ...(item.web_keys ? { web_keys: item.web_keys } : {}),
      // A token registered again is registered anew: an APNs 410 older than that does not prune it.
      registered_at: item.updated_at ?? item.created_at,
    },
  };
};

/** Every registered device of the user (at most 100: one Query of the byUser index). */
export const devicesOf = async (userId: string): Promise<DeviceTarget[]> => {
  const items = await queryAll<DeviceItem>({
    TableName: tableName('devices'),
    IndexName: 'byUser',
    KeyConditionExpression: 'user_id = :user',
    ExpressionAttributeValues: { ':user': userId },
  });
  return items.map(toTarget);
};

/** One device of the user by its token hash; undefined once deleted or registered by another user. */
export const deviceOf = async (userId: string, tokenHash: string): Promise<DeviceTarget | undefined> => {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableName('devices'), Key: { token_hash: tokenHash } }),
  );
  const item = Item as DeviceItem | undefined;
  return item && item.user_id === userId ? toTarget(item) : undefined;
};

/**
 * Deletes a device whose token the provider called dead: only the registration that was pushed to (same owner,
 * not registered again since), so a token the app registered anew after the answer survives. `absent`: nothing
 * registered under the token now (deleted before, by this pruning or by its user); `kept`: registered again since.
 */
export const pruneDevice = async (
  device: Pick<DeviceTarget, 'user_id' | 'token_hash' | 'registration'>,
): Promise<'deleted' | 'absent' | 'kept'> => {
  try {
    await documentClient().send(
      new DeleteCommand({
        TableName: tableName('devices'),
        Key: { token_hash: device.token_hash },
        ConditionExpression:
          'user_id = :user AND (updated_at = :registration OR (attribute_not_exists(updated_at) AND created_at = :registration))',
        ExpressionAttributeValues: { ':user': device.user_id, ':registration': device.registration },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'deleted';
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return error.Item ? 'kept' : 'absent';
    throw error;
  }
};
