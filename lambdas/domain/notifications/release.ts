import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { MessageHandling } from '../../core/message-handling';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { handOverPushes } from '../push/messages';
import { userChannel } from '../realtime/channel-names';
import { channelMembers, deliverToChannel } from '../realtime/deliver';
import { endGoneConnections } from '../realtime/lifecycle';
import { frameFor } from './delivery';
import { isUnread, readAllWatermarks } from './feed';
import { heldUntil, type ReleaseMessage, scheduleRelease } from './holding';
import { isExpired, type NotificationRecord, type ReceiverRecord, receiverIdFor } from './model';
import { applyThrottle } from './throttle';

export type ReleaseOutcome = 'released' | 'held' | 'expired' | 'skipped' | 'throttled';

/**
 * Whether the recipient's feed item was read (or archived or snoozed: dealt with) since it arrived. A recipient
 * with no feed item (`in_app` off) has nothing that shows it was read: it gets what was held.
 */
const itemDealtWith = async (notification: NotificationRecord, userId: string): Promise<boolean> => {
  if (!notification.channels.includes('in_app')) return false;
  const receiverId = receiverIdFor(notification.id, userId, notification.deliver_at);
  const [read, watermarks] = await Promise.all([
    documentClient().send(
      new GetCommand({
        TableName: tableName('receivers'),
        Key: { user_id: userId, receiver_id: receiverId },
        ProjectionExpression: 'unread_key',
        ConsistentRead: true,
      }),
    ),
    readAllWatermarks([userId]),
  ]);
  if (!read.Item) return false;
  return !isUnread((read.Item as Pick<ReceiverRecord, 'unread_key'>).unread_key, watermarks.get(userId));
};

/** Release records live beside the delivery receipts, under a key of their own, as long as receipts do. */
const RELEASE_RETENTION_SECS = 5 * 24 * 3600;

/**
 * Claims the release of (notification, recipient) for this message: the first message to claim it sends, and
 * only it, again if redelivered after a crash (frames at least once, pushes once: each is claimed per device).
 */
const claimRelease = async (notificationId: string, userId: string, handling: MessageHandling) => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('receipts'),
        Key: { notification_id: `${notificationId}#release`, user_id: userId },
        UpdateExpression: 'SET released_by = :holder, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(released_by) OR released_by = :holder',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':holder': handling.messageId,
          ':ttl': Math.floor(Date.now() / 1000) + RELEASE_RETENTION_SECS,
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

/**
 * A held delivery at the end of its window: the preferences of now decide (push or toast turned off meanwhile:
 * not sent; a window added or moved that holds now: held again until it ends); then, unless the notification
 * expired or its item was read, the `toast` frame and the push go, once.
 */
export const releaseHeld = async (
  notification: NotificationRecord,
  message: ReleaseMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<ReleaseOutcome> => {
  if (isExpired(notification.expires_at, now)) return 'expired';
  const userId = message.user_id;
  const preferences = (await preferencesOf([userId])).get(userId);
  const allowed = channelsFor(notification, preferences, message.topic);
  const held = message.channels.filter((channel) => allowed.includes(channel));
  if (held.length === 0) return 'skipped';
  const until = heldUntil(notification, preferences, now);
  if (until !== undefined && until > Date.parse(message.until)) {
    if (isExpired(notification.expires_at, until)) return 'expired';
    await scheduleRelease({ ...message, until: new Date(until).toISOString(), channels: held });
    return 'held';
  }
  if (await itemDealtWith(notification, userId)) return 'skipped';
  if (!(await claimRelease(notification.id, userId, handling))) return 'skipped';
  // Throttled when released: a night's worth of held notifications does not all go off at the window's end. Over the
  // limit it stays what it already is, an item in the feed: `over: digest` does not apply here, as a digest would list
  // the item a second time.
  if ((await applyThrottle(notification, userId, held, now)).channels.length === 0) return 'throttled';
  let delivered: number | undefined;
  if (held.includes('toast')) {
    const receiverId = receiverIdFor(notification.id, userId, notification.deliver_at);
    const sent = await deliverToChannel(userChannel(userId), frameFor(notification, receiverId, held));
    await endGoneConnections(sent.gone);
    delivered = sent.delivered;
  }
  if (held.includes('push')) {
    // `offline` routing: pushed only when no connection received the released frame, or none is open now.
    const online =
      notification.push?.when === 'offline' &&
      (delivered ?? (await channelMembers(userChannel(userId))).length) > 0;
    if (!online) await handOverPushes(notification, [userId]);
  }
  return 'released';
};
