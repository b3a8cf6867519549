import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { Throttle } from '../preferences/rules';
import type { Channel } from './channels';
import type { NotificationRecord } from './model';

/*
 * Throttles (docs/delivery-rules.md): at most `limit` loud deliveries (a push, a toast, or both for one
 * notification) per recipient per throttle key in each fixed window of `window_secs`; over the limit the recipient
 * gets the feed item and the `realtime` frame only. Counted by one conditional update of a counter item per
 * (recipient, key, window), which lists the notifications it counted: the limit holds under concurrent deliveries,
 * and a redelivery of a counted notification is let through without counting twice.
 */

/** The channels a throttle limits. */
const LOUD: readonly Channel[] = ['push', 'toast'];

/** The throttle of a notification: its own, else the one the defaults fixed on it at creation. */
export const throttleOf = (notification: NotificationRecord): Throttle | undefined =>
  notification.throttle ?? notification.preference_defaults?.throttle;

/** Counters live beside the delivery receipts (same table, a key of their own) and expire after their window. */
const counterKey = (throttle: Throttle, userId: string, windowStart: number) => ({
  notification_id: `throttle#${throttle.key}#${windowStart}`,
  user_id: userId,
});

/** Kept a day past the window's end, so a late redelivery still finds what was counted. */
const COUNTER_GRACE_SECS = 24 * 3600;

/**
 * Whether the notification may reach the recipient loudly in the current window, counting it if so: one conditional
 * update, decided on the whole counter item, so of concurrent deliveries exactly `limit` are counted. A notification
 * counted before (a redelivered chunk, a repeated release) is let through again without counting.
 */
const admit = async (
  notification: NotificationRecord,
  throttle: Throttle,
  userId: string,
  now: number,
): Promise<boolean> => {
  const windowMs = throttle.window_secs * 1000;
  const windowStart = Math.floor(now / windowMs) * windowMs;
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('receipts'),
        Key: counterKey(throttle, userId, windowStart),
        UpdateExpression: 'ADD counted :id, deliveries :one SET #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression:
          '(attribute_not_exists(deliveries) OR deliveries < :limit) AND NOT contains(counted, :notification)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':id': new Set([notification.id]),
          ':notification': notification.id,
          ':one': 1,
          ':limit': throttle.limit,
          ':ttl': Math.ceil((windowStart + windowMs) / 1000) + COUNTER_GRACE_SECS,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const counted = error.Item ? (unmarshall(error.Item).counted as Set<string> | undefined) : undefined;
    return counted?.has(notification.id) === true;
  }
};

/**
 * The channels left after the notification's throttle: unchanged when it has none, or reaches the recipient on no
 * loud channel, or is within the limit; else without `push` and `toast`. This is where a notification over the
 * limit could join a digest instead of going to the feed only.
 */
export const applyThrottle = async (
  notification: NotificationRecord,
  userId: string,
  channels: readonly Channel[],
  now = Date.now(),
): Promise<readonly Channel[]> => {
  const throttle = throttleOf(notification);
  if (!throttle || !channels.some((channel) => LOUD.includes(channel))) return channels;
  if (await admit(notification, throttle, userId, now)) return channels;
  return channels.filter((channel) => !LOUD.includes(channel));
};
