import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type ApnsEnvironment,
  type PushProvider,
  type PushSettings,
  pushSettings,
} from '../../../common/settings';
import { documentClient, tableName } from '../../core/clients';
import { conflict, type FieldIssue, invalidCursor, notFound, validationError } from '../../core/errors';
import { countQuery, type ItemKey, queryPage } from '../../core/paging';
import type * as z from '../../core/zod';
import { AddressRefused } from '../webhooks/address-policy';
import { webhookSettings } from '../webhooks/settings';
import { checkWebhookUrl } from '../webhooks/url-policy';
import { defaultProviderOf } from './default-provider';
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
  /** Null: the stage's default push app. */
  readonly app_id: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** Absent on records made before providers were recorded: `defaultProviderOf`. */
  readonly provider?: PushProvider;
  /** APNs devices only. */
  readonly apns_environment?: ApnsEnvironment;
  /** Web Push devices only: the subscription's keys (base64url). */
  readonly web_keys?: { readonly p256dh: string; readonly auth: string };
}

/** The platforms each provider reaches (FCM also serves iOS and web apps built on Firebase). */
const PROVIDER_PLATFORMS: Readonly<Record<PushProvider, readonly Platform[]>> = {
  fcm: ['android', 'ios', 'web'],
  apns: ['ios'],
  webpush: ['web'],
  expo: ['ios', 'android'],
};

/** What a registration stores beside the owner and the times. */
type Registration = Pick<
  DeviceRecord,
  'token' | 'platform' | 'app_id' | 'provider' | 'apns_environment' | 'web_keys'
>;

const invalid = (details: readonly FieldIssue[]) => validationError('Invalid request body', details);

/**
 * The checks the body schema cannot make alone: the provider fits the platform, the app is one configured for
 * push on this stage and has that provider's credentials, the fields belong to the provider, and a Web Push
 * endpoint passes the webhook address policy (a URL the user supplies, which Notify will call).
 */
const registrationOf = async (input: RegisterDeviceInput, settings: PushSettings): Promise<Registration> => {
  const details: FieldIssue[] = [];
  const provider = input.provider ?? defaultProviderOf(input.platform, input.token ?? '');
  if (!PROVIDER_PLATFORMS[provider].includes(input.platform)) {
    details.push({
      field: 'provider',
      issue: `${provider} does not reach ${input.platform} devices (only ${PROVIDER_PLATFORMS[provider].join(', ')})`,
    });
  }
  const appId = input.app_id ?? null;
  if (appId !== null && !settings.apps.has(appId)) {
    details.push({
      field: 'app_id',
      issue:
        settings.apps.size === 0
          ? 'no app is configured for push on this stage: leave app_id out'
          : 'is not an app configured for push on this stage',
    });
  }
  const appName = appId ?? settings.defaultApp;
  const app = appName === undefined ? undefined : settings.apps.get(appName);
  if (app && !app[provider]) {
    details.push({
      field: 'provider',
      issue: `the app ${appName} has no ${provider} credentials on this stage`,
    });
  }
  if (input.apns_environment !== undefined && provider !== 'apns') {
    details.push({ field: 'apns_environment', issue: 'is for APNs devices only' });
  }
  const subscription = input.subscription;
  if (provider === 'webpush') {
    if (!subscription) {
      details.push({
        field: 'subscription',
        issue: "is required for Web Push devices (the browser's PushSubscription as JSON)",
      });
    } else if (input.token !== undefined && input.token !== subscription.endpoint) {
      details.push({ field: 'token', issue: "must be the subscription's endpoint, or be left out" });
    }
  } else {
    if (subscription) details.push({ field: 'subscription', issue: 'is for Web Push devices only' });
    if (input.token === undefined) details.push({ field: 'token', issue: 'required' });
  }
  if (details.length > 0) throw invalid(details);
  if (subscription) {
    try {
      await checkWebhookUrl(subscription.endpoint, webhookSettings().allowLoopback);
    } catch (error) {
      if (error instanceof AddressRefused) {
        throw invalid([{ field: 'subscription.endpoint', issue: error.message }]);
      }
      throw error;
    }
  }
  const strip = (key: string) => key.replace(/=+$/, '');
  return {
    token: subscription?.endpoint ?? (input.token as string),
    platform: input.platform,
    app_id: appId,
    provider,
    ...(provider === 'apns'
      ? { apns_environment: input.apns_environment ?? app?.apns?.apnsEnvironment ?? 'production' }
      : {}),
    ...(subscription
      ? { web_keys: { p256dh: strip(subscription.keys.p256dh), auth: strip(subscription.keys.auth) } }
      : {}),
  };
};

/** What the device routes answer (the schema is the API documents' too). */
export type Device = z.output<typeof deviceSchema>;

/** The device as its owner sees it: never the Web Push `auth` secret (docs/push.md says why). */
const toDevice = (record: DeviceRecord): Device => {
  const provider = record.provider ?? defaultProviderOf(record.platform, record.token);
  return {
    token: record.token,
    platform: record.platform,
    provider,
    app_id: record.app_id,
    apns_environment: provider === 'apns' ? (record.apns_environment ?? 'production') : null,
    web_keys: record.web_keys ? { p256dh: record.web_keys.p256dh } : null,
    created_at: record.created_at,
  };
};

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
export const registerDevice = async (
  userId: string,
  input: RegisterDeviceInput,
  settings: PushSettings = pushSettings(),
): Promise<Device> => {
  const registration = await registrationOf(input, settings);
  const now = new Date().toISOString();
  const table = tableName('devices');
  const tokenHash = tokenHashOf(registration.token);
  // A device that changes provider keeps no field of the old one.
  const optional = { apns_environment: registration.apns_environment, web_keys: registration.web_keys };
  const set = Object.entries(optional).filter(([, value]) => value !== undefined);
  const remove = Object.entries(optional).filter(([, value]) => value === undefined);
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { token_hash: tokenHash },
        UpdateExpression: [
          `SET ${['platform = :platform, app_id = :app, provider = :provider, updated_at = :now', ...set.map(([name]) => `${name} = :${name}`)].join(', ')}`,
          ...(remove.length > 0 ? [`REMOVE ${remove.map(([name]) => name).join(', ')}`] : []),
        ].join(' '),
        ConditionExpression: 'user_id = :user',
        ExpressionAttributeValues: {
          ':user': userId,
          ':platform': registration.platform,
          ':app': registration.app_id,
          ':provider': registration.provider,
          ':now': now,
          ...Object.fromEntries(set.map(([name, value]) => [`:${name}`, value])),
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
    user_id: userId,
    ...registration,
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
    throw invalidCursor();
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
