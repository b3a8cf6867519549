import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, queueUrl, tableName } from '../../core/clients';
import { sqs } from '../../core/clients-sqs';
import { logger } from '../../core/logger';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { sendAll } from '../../core/sqs-send';
import { deliverToMembers, forEachLimited, type Membership, membersPage } from '../realtime/deliver';
import type { NotificationFrame } from '../realtime/frames';
import { subscribersPage } from '../topics/subscriptions';
import { CHUNK_SIZE, chunksOf, type FanoutMessage, planMessages } from './fanout-messages';
import { isExpired, type NotificationRecord, type ReceiverRecord, receiverIdFor } from './model';

/** Recipients of one chunk handled at once (DynamoDB writes and `@connections` posts in flight). */
const RECIPIENT_CONCURRENCY = 20;
/** A message that arrives this much before its delivery time is put back with a delay. */
const EARLY_TOLERANCE_MS = 500;
/** Receipts of frame-only deliveries outlive any SQS redelivery (retention is 4 days by default). */
const RECEIPT_RETENTION_SECS = 5 * 24 * 3600;

export type FanoutOutcome = 'planned' | 'delivered' | 'expired' | 'postponed';

const loadNotification = async (id: string): Promise<NotificationRecord> => {
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('notifications'), Key: { id }, ConsistentRead: true }),
  );
  if (!result.Item) throw new Error(`notification ${id} does not exist`);
  return result.Item as NotificationRecord;
};

/**
 * Handles one fan-out message. Safe to run any number of times: receivers and receipts are conditional
 * writes keyed by (notification, recipient), and frames go out only while a record says they are pending.
 */
export const processFanoutMessage = async (
  message: FanoutMessage,
  now = Date.now(),
): Promise<FanoutOutcome> => {
  const notification = await loadNotification(message.notification_id);
  if (isExpired(notification.expires_at, now)) return 'expired';
  if (notification.deliver_at > now + EARLY_TOLERANCE_MS) {
    await postpone(message, notification.deliver_at - now);
    return 'postponed';
  }
  if (message.kind === 'plan') {
    await sendAll(
      queueUrl('fanout'),
      planMessages(notification).map((planned) => JSON.stringify(planned)),
    );
    return 'planned';
  }
  if (message.kind === 'topic-page') {
    await planTopicPage(message);
    return 'planned';
  }
  let receiversWritten = 0;
  await forEachLimited(message.recipients, RECIPIENT_CONCURRENCY, async (userId) => {
    if (await deliverTo(notification, userId)) receiversWritten += 1;
  });
  countMetric(SERVICE_METRICS.receiversWritten, receiversWritten); // one value per chunk, not per recipient
  return 'delivered';
};

/**
 * One page of a topic's subscribers: their chunks and, when more follow, the next page go out in the same
 * sends. A redelivered page sends the same chunks again, which deliver nothing twice (receivers are keyed).
 * A user who is also a recipient, or subscribes to two named topics, gets the same receiver id: once.
 */
const planTopicPage = async (message: Extract<FanoutMessage, { kind: 'topic-page' }>) => {
  const page = await subscribersPage(message.topic, message.after);
  const next: FanoutMessage[] = page.lastUserId === undefined ? [] : [{ ...message, after: page.lastUserId }];
  const chunks = chunksOf(page.userIds, CHUNK_SIZE).map(
    (recipients): FanoutMessage => ({ kind: 'chunk', notification_id: message.notification_id, recipients }),
  );
  await sendAll(
    queueUrl('fanout'),
    [...chunks, ...next].map((planned) => JSON.stringify(planned)),
  );
};

/** Early (a schedule firing ahead of time, a clock skew): back on the queue with SQS's delay (≤ 15 min). */
const postpone = async (message: FanoutMessage, remainingMs: number) => {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: queueUrl('fanout'),
      MessageBody: JSON.stringify(message),
      DelaySeconds: Math.min(900, Math.max(1, Math.ceil(remainingMs / 1000))),
    }),
  );
};

const wantsFrames = (notification: NotificationRecord): boolean =>
  notification.channels.includes('toast') || notification.channels.includes('realtime');

const frameFor = (notification: NotificationRecord, receiverId: string): NotificationFrame => ({
  type: 'notification',
  id: receiverId,
  notification_id: notification.id,
  event_type: notification.event_type,
  source: notification.source,
  title: notification.title,
  body: notification.body,
  data: notification.data,
  priority: notification.priority,
  created_at: notification.created_at,
  channel: notification.channels.includes('toast') ? 'toast' : 'realtime',
});

/** Every membership of a channel (a user's few connections and detached sessions), page by page. */
const membersOf = async (channel: string): Promise<Membership[]> => {
  const members: Membership[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await membersPage(channel, startKey);
    members.push(...page.members);
    startKey = page.next;
  } while (startKey);
  return members;
};

/**
 * The record that proves (notification, recipient) was handled: the receiver in the feed for `in_app`,
 * else a receipt. Written once; a redelivery finds it and learns whether frames are still pending.
 * `hasAudience` says whether the user has connections (or sessions) to send frames to: only then is the
 * record flagged, and a frame-only notification to an offline user needs no record at all.
 */
const recordDelivery = async (
  notification: NotificationRecord,
  userId: string,
  receiverId: string,
  hasAudience: boolean,
): Promise<{ table: string; key: Record<string, string>; framesPending: boolean; written: boolean }> => {
  const framesPending = wantsFrames(notification) && hasAudience;
  const inApp = notification.channels.includes('in_app');
  const table = tableName(inApp ? 'receivers' : 'receipts');
  const key: Record<string, string> = inApp
    ? { user_id: userId, receiver_id: receiverId }
    : { notification_id: notification.id, user_id: userId };
  if (!inApp && !framesPending) return { table, key, framesPending: false, written: false };
  const item = inApp
    ? ({
        user_id: userId,
        receiver_id: receiverId,
        notification_id: notification.id,
        delivered_at: new Date().toISOString(),
        expires_at: notification.expires_at ?? undefined,
        unread_key: receiverId,
        frames_pending: framesPending || undefined,
        ttl: notification.ttl,
      } satisfies ReceiverRecord)
    : { ...key, frames_pending: true, ttl: Math.floor(Date.now() / 1000) + RECEIPT_RETENTION_SECS };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: table,
        Item: item,
        ConditionExpression: 'attribute_not_exists(user_id)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { table, key, framesPending, written: inApp };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { table, key, framesPending: error.Item?.frames_pending !== undefined, written: false };
  }
};

/** Delivers to one recipient; true when this call wrote its receiver record. */
const deliverTo = async (notification: NotificationRecord, userId: string): Promise<boolean> => {
  const receiverId = receiverIdFor(notification.id, userId, notification.deliver_at);
  // Connections first: most recipients of a large notification are offline, and for them the record
  // needs no pending-frames flag and no second write to clear it.
  const members = wantsFrames(notification) ? await membersOf(`user:${userId}`) : [];
  const { table, key, framesPending, written } = await recordDelivery(
    notification,
    userId,
    receiverId,
    members.length > 0,
  );
  if (!framesPending) return written;
  const result = await deliverToMembers(members, frameFor(notification, receiverId));
  await documentClient().send(
    new UpdateCommand({ TableName: table, Key: key, UpdateExpression: 'REMOVE frames_pending' }),
  );
  logger.debug('notification frames sent', { notification_id: notification.id, user_id: userId, ...result });
  return written;
};
