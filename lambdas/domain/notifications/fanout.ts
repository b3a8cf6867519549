import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, queueUrl, tableName } from '../../core/clients';
import { sqs } from '../../core/clients-sqs';
import { logger } from '../../core/logger';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { sendAll } from '../../core/sqs-send';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { deliverToMembers, forEachLimited, type Membership, membersPage } from '../realtime/deliver';
import type { NotificationFrame } from '../realtime/frames';
import { subscribersPage } from '../topics/subscriptions';
import { CHUNK_SIZE, chunksOf, type FanoutMessage, planMessages } from './fanout-messages';
import {
  type DeliveryReceipt,
  isExpired,
  type NotificationRecord,
  type ReceiverRecord,
  receiverIdFor,
} from './model';
import type { Channel } from './schema';

/** Recipients of one chunk handled at once (DynamoDB writes and `@connections` posts in flight). */
const RECIPIENT_CONCURRENCY = 20;
/** A message that arrives this much before its delivery time is put back with a delay. */
const EARLY_TOLERANCE_MS = 500;
/** Receipts outlive any SQS redelivery (retention is 4 days by default) and any Idempotency-Key retry (24 h). */
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
 * Handles one fan-out message; `deliveryId` identifies the message across redeliveries (the SQS message
 * id). Safe to run any number of times: each (notification, recipient) is claimed once by a conditional
 * receipt, and only the claiming message writes the receiver and sends frames.
 */
export const processFanoutMessage = async (
  message: FanoutMessage,
  deliveryId: string,
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
  // One recipient named twice in a chunk is one claim, not two racing under the same delivery id.
  const recipients = [...new Set(message.recipients)];
  // Read at delivery: a user's change applies to whatever is delivered after it (docs/preferences.md).
  const preferences = await preferencesOf(recipients);
  await forEachLimited(recipients, RECIPIENT_CONCURRENCY, async (userId) => {
    const channels = channelsFor(notification, preferences.get(userId), message.topic);
    if (await deliverTo(notification, userId, deliveryId, channels)) receiversWritten += 1;
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
    (recipients): FanoutMessage => ({
      kind: 'chunk',
      notification_id: message.notification_id,
      recipients,
      topic: message.topic,
    }),
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

const wantsFrames = (channels: readonly Channel[]): boolean =>
  channels.includes('toast') || channels.includes('realtime');

const frameFor = (
  notification: NotificationRecord,
  receiverId: string,
  channels: readonly Channel[],
): NotificationFrame => ({
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
  channel: channels.includes('toast') ? 'toast' : 'realtime',
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

/** What the delivery that owns (notification, recipient) still has to do. */
interface Claim {
  readonly receiverId: string;
  readonly framesPending: boolean;
}

/**
 * Claims (notification, recipient) with a conditional put of its receipt. Only the claiming delivery writes
 * the receiver and sends frames: a second chunk naming the same user (recipients plus topics, two topics, a
 * fan-out enqueued twice by racing requests) finds the receipt and does nothing. The receipt names the SQS
 * message that claimed it, so when that message comes back after a crash it resumes: it writes the receiver
 * again (conditional, harmless) and resends frames still flagged pending (at least once, never lost).
 * The receiver id is taken here, at arrival, so the feed and read-all order items by when they arrived.
 */
const claimDelivery = async (
  notification: NotificationRecord,
  userId: string,
  deliveryId: string,
  framesWanted: boolean,
): Promise<Claim | undefined> => {
  const receiverId = receiverIdFor(notification.id, userId, Date.now());
  const receipt: DeliveryReceipt = {
    notification_id: notification.id,
    user_id: userId,
    receiver_id: receiverId,
    claimed_by: deliveryId,
    frames_pending: framesWanted || undefined,
    ttl: Math.floor(Date.now() / 1000) + RECEIPT_RETENTION_SECS,
  };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('receipts'),
        Item: receipt,
        ConditionExpression: 'attribute_not_exists(user_id)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { receiverId, framesPending: framesWanted };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    const earlier = unmarshall(error.Item) as DeliveryReceipt;
    if (earlier.claimed_by !== deliveryId) return undefined;
    return { receiverId: earlier.receiver_id, framesPending: earlier.frames_pending === true };
  }
};

/** The feed item; false when it exists already (the owning delivery resuming after a crash). */
const writeReceiver = async (
  notification: NotificationRecord,
  userId: string,
  receiverId: string,
): Promise<boolean> => {
  const receiver: ReceiverRecord = {
    user_id: userId,
    receiver_id: receiverId,
    notification_id: notification.id,
    delivered_at: new Date().toISOString(),
    expires_at: notification.expires_at ?? undefined,
    unread_key: receiverId,
    ttl: notification.ttl,
  };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('receivers'),
        Item: receiver,
        ConditionExpression: 'attribute_not_exists(user_id)',
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return false;
  }
};

/**
 * Delivers to one recipient on the channels its preferences leave on; true when this call wrote its receiver
 * record. With no channel left it records nothing, so another chunk reaching the user otherwise (a named
 * recipient, an unmuted topic) still delivers.
 */
const deliverTo = async (
  notification: NotificationRecord,
  userId: string,
  deliveryId: string,
  channels: readonly Channel[],
): Promise<boolean> => {
  if (channels.length === 0) return false;
  // Connections first: most recipients of a large notification are offline, and for them the receipt
  // needs no pending-frames flag and no second write to clear it.
  const members = wantsFrames(channels) ? await membersOf(`user:${userId}`) : [];
  const inApp = channels.includes('in_app');
  // A toast/realtime-only notification to an offline recipient has nothing to deliver and records nothing.
  if (!inApp && members.length === 0) return false;
  const claim = await claimDelivery(notification, userId, deliveryId, members.length > 0);
  if (!claim) return false;
  const written = inApp && (await writeReceiver(notification, userId, claim.receiverId));
  if (!claim.framesPending) return written;
  const result = await deliverToMembers(members, frameFor(notification, claim.receiverId, channels));
  await documentClient().send(
    new UpdateCommand({
      TableName: tableName('receipts'),
      Key: { notification_id: notification.id, user_id: userId },
      UpdateExpression: 'REMOVE frames_pending',
    }),
  );
  logger.debug('notification frames sent', { notification_id: notification.id, user_id: userId, ...result });
  return written;
};
