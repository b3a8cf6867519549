import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import type { MessageQueue } from '../../core/message-queue';
import { enqueueAfter } from '../../core/sqs-send';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { type PushRecipientsMessage, pushRecipientsQueue } from '../push/hand-over';
import { type FallbackUnless, fallbackOf } from './fallback-steps';
import { CHUNK_SIZE, chunksOf, type FanoutMessage, fanoutQueue } from './fanout-messages';
import { isUnread, readAllWatermarks } from './feed';
import { holdForQuietHours } from './holding';
import {
  isExpired,
  type NotificationRecord,
  RECEIPT_RETENTION_SECS,
  type ReceiverRecord,
  receiverIdFor,
} from './model';
import { applyThrottle } from './throttle';

/*
 * Fallback steps at run time (docs/delivery-rules.md, "Fallback"). The delivery of a recipient whose steps name a
 * channel its preferences leave on schedules the first step; each step, when it runs, schedules the next for the
 * recipients it did not cancel, so the steps of one recipient run in order. A step of `push` is a message on the
 * `push` queue (the push worker checks it and pushes, as `push.when: unread` always did); a step of `toast` is a
 * message on `fanout`, whose worker sends frames. Both wait by SQS delay, and past 900 s by a one-time schedule
 * (sqs-send.ts, `enqueueAfter`). A step held by quiet hours becomes a release (holding.ts), which continues the steps.
 */

export type ToastStepMessage = Extract<FanoutMessage, { kind: 'fallback' }>;
type StepMessage = ToastStepMessage | PushRecipientsMessage;

/** Recipients of one step handled at once (a preference read is shared; a throttle, a hold each). */
const RECIPIENT_CONCURRENCY = 20;

/** What a step names when it is scheduled: its index, the delivery it counts from, the topic it came through. */
export interface StepOf {
  readonly step: number;
  readonly delivered_at: number;
  readonly topic?: string | undefined;
}

/**
 * Schedules step `at.step` of the notification for these recipients, due `after_secs` after their delivery (at once
 * when that is past). Nothing when the notification has no such step. Scheduling twice costs a second message:
 * the step is claimed per recipient (a push per device, a toast by `claimOnce`).
 */
export const scheduleStep = async (
  notification: NotificationRecord,
  recipients: readonly string[],
  at: StepOf,
  now = Date.now(),
): Promise<void> => {
  const step = fallbackOf(notification)[at.step];
  if (!step || recipients.length === 0) return;
  const delaySecs = Math.max(0, (at.delivered_at + step.after_secs * 1000 - now) / 1000);
  const fields = {
    notification_id: notification.id,
    step: at.step,
    delivered_at: at.delivered_at,
    ...(at.topic === undefined ? {} : { topic: at.topic }),
  };
  // A step of `push` goes to the push worker; of `toast`, to the fan-out worker, which sends frames. Of the fan-out
  // messages only this kind carries a wait's rest (`rest_secs`), so only it is sent this way.
  const queue = (step.channel === 'push' ? pushRecipientsQueue : fanoutQueue) as MessageQueue<StepMessage>;
  const kind = step.channel === 'push' ? 'recipients' : 'fallback';
  const chunks = chunksOf([...new Set(recipients)], CHUNK_SIZE);
  await enqueueAfter(
    queue,
    chunks.map((chunk): StepMessage => ({ kind, ...fields, recipients: chunk })),
    delaySecs,
  );
};

type ItemState = Pick<ReceiverRecord, 'user_id' | 'unread_key' | 'seen_at' | 'archived_at' | 'snoozed_until'>;

/**
 * The recipients whose feed item stops a step of `unless` now: seen (for `seen`; an item read, also by a read-all, has
 * been seen) or read (for `read`), or archived or snoozed (the user has seen to it). A recipient with no feed item
 * (`in_app` off in its preferences) has nothing that shows it was seen: it is never among them.
 */
export const itemsDealtWith = async (
  notification: NotificationRecord,
  recipients: readonly string[],
  unless: FallbackUnless,
): Promise<Set<string>> => {
  if (!notification.channels.includes('in_app') || recipients.length === 0) return new Set();
  const keys = recipients.map((userId) => ({
    user_id: userId,
    receiver_id: receiverIdFor(notification.id, userId, notification.deliver_at),
  }));
  const [items, watermarks] = await Promise.all([
    batchGetAll(tableName('receivers'), keys, {
      projection: 'user_id, unread_key, seen_at, archived_at, snoozed_until',
      consistent: true,
    }) as Promise<ItemState[]>,
    readAllWatermarks(recipients),
  ]);
  const dealtWith = new Set<string>();
  for (const item of items) {
    const read = !isUnread(item.unread_key, watermarks.get(item.user_id));
    const hidden = item.archived_at !== undefined || item.snoozed_until !== undefined;
    if (hidden || read || (unless === 'seen' && item.seen_at !== undefined)) dealtWith.add(item.user_id);
  }
  return dealtWith;
};

/**
 * Runs step `at.step` for these recipients at `now`: the recipients its channel goes to now. The notification
 * expired, or a recipient's item seen or read (per the step's `unless`), archived or snoozed: that recipient's step
 * and every later one are cancelled (they all test the same item). Otherwise the recipient's preferences of now
 * (channels, muted topic, category rules) decide, quiet hours hold the step (its release continues the steps) and the
 * throttle counts it, as at a delivery; and the next step is scheduled, whether this one went or not.
 */
export const runStep = async (
  notification: NotificationRecord,
  recipients: readonly string[],
  at: StepOf,
  now = Date.now(),
): Promise<string[]> => {
  const step = fallbackOf(notification)[at.step];
  if (!step || isExpired(notification.expires_at, now)) return [];
  const unique = [...new Set(recipients)];
  const [dealtWith, preferences] = await Promise.all([
    itemsDealtWith(notification, unique, step.unless),
    preferencesOf(unique),
  ]);
  const fire: string[] = [];
  const next: string[] = [];
  await forEachLimited(
    unique.filter((userId) => !dealtWith.has(userId)),
    RECIPIENT_CONCURRENCY,
    async (userId) => {
      const userPreferences = preferences.get(userId);
      const allowed = channelsFor(notification, userPreferences, at.topic).filter(
        (channel) => channel === step.channel,
      );
      const unheld = await holdForQuietHours(notification, userId, userPreferences, allowed, at.topic, now, {
        step: at.step,
        delivered_at: at.delivered_at,
      });
      // Held: its release sends it and continues the steps (or finds the notification expired by then).
      if (allowed.length > 0 && unheld.length === 0) return;
      next.push(userId);
      // Over a limit the step does not fire; `over: digest` does not apply, as the item is in the feed already.
      if ((await applyThrottle(notification, userId, unheld, now)).channels.length > 0) fire.push(userId);
    },
  );
  await scheduleStep(notification, next, { ...at, step: at.step + 1 }, now);
  return fire;
};

/** A receipt of what goes to one recipient once: `what` of the notification, for the recipient. */
const claimKey = (notificationId: string, what: string, userId: string) => ({
  notification_id: `${notificationId}#${what}`,
  user_id: userId,
});

/**
 * Claims what goes to one recipient once, in a receipt of its own key (`what`: `release`, or `step <n>` for a
 * fallback step, however it runs: by its message or by the release of its hold). The first message to claim it
 * sends, and only it: a copy of that message handled at the same time (SQS and Lambda hand out copies) finds the
 * claim held until the holder's deadline and fails with `HeldByOtherReceive`, to come back later; once
 * `markSent` recorded the sending, a redelivery sends nothing; a redelivery after the holder died before that sends
 * again (frames at least once, pushes once: each is claimed per device).
 */
export const claimOnce = async (
  notificationId: string,
  what: string,
  userId: string,
  handling: MessageHandling,
): Promise<boolean> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('receipts'),
        Key: claimKey(notificationId, what, userId),
        UpdateExpression: 'SET released_by = :holder, held_until = :until, #ttl = :ttl',
        // A claim of the previous shape has no `held_until`: its holder may take it again, as before.
        ConditionExpression:
          'attribute_not_exists(released_by) OR (released_by = :holder AND attribute_not_exists(sent_at) AND ' +
          '(attribute_not_exists(held_until) OR held_until < :now))',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':holder': handling.messageId,
          ':until': holdExpiry(handling).getTime(),
          ':now': Date.now(),
          ':ttl': Math.floor(Date.now() / 1000) + RECEIPT_RETENTION_SECS,
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const held = error.Item ? unmarshall(error.Item) : undefined;
    if (held?.released_by === handling.messageId && held.sent_at === undefined) {
      throw new HeldByOtherReceive(
        `${what} of ${notificationId} to ${userId} is being sent by another receive until ${new Date(held.held_until).toISOString()}`,
      );
    }
    return false;
  }
};

/** Records that what `claimOnce` claimed was sent: a redelivery of the message does not send it again. */
export const markSent = async (notificationId: string, what: string, userId: string): Promise<void> => {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName('receipts'),
      Key: claimKey(notificationId, what, userId),
      UpdateExpression: 'SET sent_at = :now',
      ExpressionAttributeValues: { ':now': Date.now() },
    }),
  );
};

/** The claim name of a fallback step, the same whether its message or the release of its hold sends it. */
export const stepClaim = (step: number): string => `step ${step}`;
