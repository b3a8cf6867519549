import { type AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { transactRetryingConflicts } from '../../core/transactions';
import type { Throttle } from '../preferences/rules';
import type { Channel } from './channels';
import { type DigestChoice, overLimitDigest } from './digest-rules';
import type { NotificationRecord } from './model';

/*
 * Throttles (docs/delivery-rules.md): at most `limit` loud deliveries (a push, a toast, or both for one
 * notification) per recipient per throttle key in each fixed window of `window_secs`; over the limit the recipient
 * gets the feed item and the `realtime` frame only, or the notification joins a digest sent at the window's end.
 * Counted by one conditional update of a counter item per (recipient, key, window), which lists the notifications
 * it counted: the limit holds under concurrent deliveries, and a redelivery of a counted notification is let
 * through without counting twice. A notification under two throttles (an event-type and a category default) is
 * counted by both in one transaction: by both or by neither.
 */

/** The channels a throttle limits. */
const LOUD: readonly Channel[] = ['push', 'toast'];

/**
 * The throttles of a notification: its own; else those the defaults fixed on it at creation, of its event type
 * and of its category (both count: over either limit is over).
 */
export const throttlesOf = (notification: NotificationRecord): readonly Throttle[] => {
  if (notification.throttle) return [notification.throttle];
  const defaults = notification.preference_defaults;
  return [defaults?.throttle, defaults?.category_throttle].filter(
    (throttle): throttle is Throttle => throttle !== undefined,
  );
};

/** The fixed window of a throttle that `now` falls in (epoch ms). */
const windowOf = (throttle: Throttle, now: number) => {
  const windowMs = throttle.window_secs * 1000;
  const start = Math.floor(now / windowMs) * windowMs;
  return { start, end: start + windowMs };
};

/** Kept a day past the window's end, so a late redelivery still finds what was counted. */
const COUNTER_GRACE_SECS = 24 * 3600;

/**
 * The conditional count of a notification on one counter. Counters live beside the delivery receipts (same
 * table, a key of their own) and expire after their window.
 */
const countUpdate = (notificationId: string, throttle: Throttle, userId: string, now: number) => {
  const { start, end } = windowOf(throttle, now);
  return {
    TableName: tableName('receipts'),
    Key: { notification_id: `throttle#${throttle.key}#${start}`, user_id: userId },
    UpdateExpression: 'ADD counted :id, deliveries :one SET #ttl = if_not_exists(#ttl, :ttl)',
    ConditionExpression:
      '(attribute_not_exists(deliveries) OR deliveries < :limit) AND NOT contains(counted, :notification)',
    ExpressionAttributeNames: { '#ttl': 'ttl' },
    ExpressionAttributeValues: {
      ':id': new Set([notificationId]),
      ':notification': notificationId,
      ':one': 1,
      ':limit': throttle.limit,
      ':ttl': Math.ceil(end / 1000) + COUNTER_GRACE_SECS,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
};

/** Whether a counter as it was (returned by a failed condition) lists the notification. */
const lists = (item: Record<string, AttributeValue> | undefined, notificationId: string): boolean =>
  item !== undefined && (unmarshall(item).counted as Set<string> | undefined)?.has(notificationId) === true;

/** Admitted, or over the limits of `over` (those whose condition failed). */
type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly over: readonly Throttle[] };

const ADMITTED: Admission = { admitted: true };

/**
 * Whether the notification may reach the recipient loudly in the current windows, counting it if so: conditional
 * writes decided on whole counter items, so of concurrent deliveries exactly `limit` are counted. A notification
 * counted before (a redelivered chunk, a repeated release) is let through again without counting.
 */
const admit = async (
  notification: NotificationRecord,
  throttles: readonly Throttle[],
  userId: string,
  now: number,
): Promise<Admission> => {
  const updates = throttles.map((throttle) => countUpdate(notification.id, throttle, userId, now));
  const [only] = updates;
  if (only && updates.length === 1) {
    try {
      await documentClient().send(new UpdateCommand(only));
      return ADMITTED;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return lists(error.Item, notification.id) ? ADMITTED : { admitted: false, over: throttles };
    }
  }
  // Several counters: one transaction, so a notification over one limit takes no place under the other.
  return transactRetryingConflicts<Admission>(
    new TransactWriteCommand({ TransactItems: updates.map((update) => ({ Update: update })) }),
    () => ADMITTED,
    async (codes, error) => {
      const reasons = error.CancellationReasons ?? [];
      // Counted before: the transaction put it on every counter at once.
      if (reasons.some((reason) => lists(reason.Item, notification.id))) return ADMITTED;
      return {
        admitted: false,
        over: throttles.filter((_, index) => codes[index] === 'ConditionalCheckFailed'),
      };
    },
    () => new Error(`throttle counters of ${userId}: too many concurrent deliveries, the message is retried`),
  );
};

/** What the throttle leaves of a delivery to one recipient. */
export interface ThrottleOutcome {
  readonly channels: readonly Channel[];
  /** Over a limit whose `over` is `digest`: the batch the notification joins instead of being delivered. */
  readonly digest?: DigestChoice;
}

/**
 * The channels left after the notification's throttles: unchanged when it has none, or reaches the recipient on no
 * loud channel, or is within every limit; else without `push` and `toast`, or (over a limit whose `over` is
 * `digest`) the batch of that throttle's key, closing when its window ends. `now` picks the windows: the caller
 * passes the delivery time, so a redelivery is counted in the window of the first.
 */
export const applyThrottle = async (
  notification: NotificationRecord,
  userId: string,
  channels: readonly Channel[],
  now = Date.now(),
): Promise<ThrottleOutcome> => {
  const throttles = throttlesOf(notification);
  if (throttles.length === 0 || !channels.some((channel) => LOUD.includes(channel))) return { channels };
  const admission = await admit(notification, throttles, userId, now);
  if (admission.admitted) return { channels };
  const quiet = channels.filter((channel) => !LOUD.includes(channel));
  // A digest is never batched again: over a limit it goes to the feed only.
  const digestBy = notification.digest_of ? undefined : admission.over.find((t) => t.over === 'digest');
  if (!digestBy) return { channels: quiet };
  return { channels: quiet, digest: overLimitDigest(digestBy, windowOf(digestBy, now).end) };
};
