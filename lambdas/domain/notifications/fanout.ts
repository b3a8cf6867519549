import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { timeOfId } from '../../core/ids';
import { logger } from '../../core/logger';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { HeldByOtherReceive, holdExpiry, type Receipt } from '../../core/receipt';
import { enqueue } from '../../core/sqs-send';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor, type UserPreferences } from '../preferences/rules';
import { userChannel } from '../realtime/channel-names';
import { channelMembers, deliverToMembers, type Membership } from '../realtime/deliver';
import type { NotificationFrame } from '../realtime/frames';
import { endGoneConnections } from '../realtime/lifecycle';
import { purgeTopicPage } from '../topics/deletion';
import { subscribersPage } from '../topics/subscriptions';
import type { Channel } from './channels';
import { CHUNK_SIZE, chunksOf, type FanoutMessage, fanoutQueue, planMessages } from './fanout-messages';
import { readAllWatermarks } from './feed';
import { isExpired, type NotificationRecord, type ReceiverRecord, receiverIdFor } from './model';

/** Recipients of one chunk handled at once (DynamoDB writes and `@connections` posts in flight). */
const RECIPIENT_CONCURRENCY = 20;
/** A message that arrives this much before its delivery time is put back with a delay. */
const EARLY_TOLERANCE_MS = 500;
/** Receipts of frame-only deliveries outlive any SQS redelivery (retention is 4 days by default). */
const RECEIPT_RETENTION_SECS = 5 * 24 * 3600;

export type FanoutOutcome = 'planned' | 'delivered' | 'expired' | 'postponed' | 'purged';

const loadNotification = async (id: string): Promise<NotificationRecord> => {
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('notifications'), Key: { id }, ConsistentRead: true }),
  );
  if (!result.Item) throw new Error(`notification ${id} does not exist`);
  return result.Item as NotificationRecord;
};

/**
 * The recipient's frames are being sent by another receive of this same message (SQS handed it out twice at
 * once). Acknowledging would delete the message that receive depends on if it dies, so the message fails
 * instead and comes back after the visibility timeout (180 s, longer than any invocation): by then the frames
 * are sent, or the lease has expired and is taken over.
 */
export class FramesHeldByOtherReceive extends HeldByOtherReceive {
  constructor(userId: string, until: number) {
    super(
      `the frames of ${userId} are being sent by another receive of this message until ${new Date(until).toISOString()}; retried after the visibility timeout`,
    );
    this.name = 'FramesHeldByOtherReceive';
  }
}

/**
 * Handles one fan-out message; `receipt.messageId` identifies the message across redeliveries. Safe to run any
 * number of times, also twice at once: each (notification, recipient) gets one record by a conditional put,
 * only the message that wrote it sends the recipient's frames, and only one receive of it at a time.
 */
export const processFanoutMessage = async (
  message: FanoutMessage,
  receipt: Receipt,
  now = Date.now(),
): Promise<FanoutOutcome> => {
  if (message.kind === 'topic-purge') {
    await purgeTopicPage(message);
    return 'purged';
  }
  const notification = await loadNotification(message.notification_id);
  if (isExpired(notification.expires_at, now)) return 'expired';
  if (notification.deliver_at > now + EARLY_TOLERANCE_MS) {
    await postpone(message, notification.deliver_at - now);
    return 'postponed';
  }
  if (message.kind === 'plan') {
    await enqueue(
      fanoutQueue,
      // A notification sent now stores no recipient list (its chunks left with the request): topics only.
      planMessages({ ...notification, recipient_ids: notification.recipient_ids ?? [] }),
    );
    return 'planned';
  }
  if (message.kind === 'topic-page') {
    await planTopicPage(message);
    return 'planned';
  }
  // A chunk the accepting request could not finish keeps that request's delivery id (its frames' owner).
  const delivery: Delivery = {
    id: message.delivery_id ?? receipt.messageId,
    clearsPending: true,
    lease: {
      holder: receipt.messageId,
      until: holdExpiry(receipt).getTime(),
    },
  };
  await deliverChunk(notification, message.recipients, delivery, { topic: message.topic });
  return 'delivered';
};

/**
 * Who delivers: `id` owns the frames of the receivers it writes (their `frames_pending`). A queue message
 * clears the flag once the frames are out, since SQS may deliver it again after it succeeded; the accepting
 * request does not (one write less per recipient): only a retry of that request after a failure or crash
 * runs it again, and resends (at least once across a crash, docs/reliability.md).
 */
export interface Delivery {
  readonly id: string;
  readonly clearsPending: boolean;
  /**
   * A queue message's hold on the frames it sends: its message id (the holder) and when its invocation has ended
   * for sure. The accepting request holds none: nothing runs it twice at once (its Idempotency-Key).
   */
  readonly lease?: { readonly holder: string; readonly until: number };
}

/** What a chunk reads about its recipients before it writes anything. */
export interface RecipientState {
  readonly before: Watermarks;
  readonly preferences: ReadonlyMap<string, UserPreferences>;
  /** Each recipient's connections, when read up front (else each is looked up when its frames are due). */
  readonly members?: ReadonlyMap<string, readonly Membership[]>;
}

/**
 * Read-all watermarks (for in_app) and preferences, read at delivery: a change applies to what comes after it.
 * `withMembers` also reads every recipient's connections at once, for the accepting request of a few
 * recipients (one round trip less before the answer; a recipient whose preferences turn frames off costs a
 * Query for nothing); a chunk of 100 looks them up only for those its frames are due to.
 */
export const readRecipientState = async (
  channels: readonly Channel[],
  recipients: readonly string[],
  withMembers = false,
): Promise<RecipientState> => {
  const [before, preferences, members] = await Promise.all([
    channels.includes('in_app') ? readAllWatermarks(recipients) : new Map<string, string>(),
    preferencesOf(recipients),
    withMembers && wantsFrames(channels)
      ? Promise.all(
          recipients.map(async (userId) => [userId, await channelMembers(userChannel(userId))] as const),
        )
      : undefined,
  ]);
  return { before, preferences, ...(members ? { members: new Map(members) } : {}) };
};

/**
 * How far a chunk got, for a caller that may stop waiting (the accepting request, after its time budget).
 * `settled`: recipients handled completely, or whose frames are going out. Once `stopped` is set, the caller
 * has queued the others under the same delivery, and this run sends no frame it has not started: the queued
 * message owns them, so each still goes out once.
 */
export interface ChunkProgress {
  readonly settled: Set<string>;
  stopped: boolean;
}

/**
 * Delivers a notification to a list of recipients (a chunk): by a queue message, or by the accepting request
 * for a small audience. Every recipient is attempted; the first failure is thrown after the others finished,
 * so a caller can queue exactly the recipients not `settled`.
 */
export const deliverChunk = async (
  notification: NotificationRecord,
  chunk: readonly string[],
  delivery: Delivery,
  options: {
    readonly topic?: string;
    readonly progress?: ChunkProgress;
    /** `readRecipientState` of these recipients, when the caller started it earlier. */
    readonly state?: Promise<RecipientState>;
  } = {},
): Promise<void> => {
  const { topic, progress = { settled: new Set(), stopped: false } } = options;
  // One recipient named twice in a chunk is one delivery, not two racing under the same delivery id.
  const recipients = [...new Set(chunk)];
  const state = await (options.state ?? readRecipientState(notification.channels, recipients));
  const { before, preferences } = state;
  const written: { userId: string; receiverId: string; unreadKey: string }[] = [];
  const failures: unknown[] = [];
  await forEachLimited(recipients, RECIPIENT_CONCURRENCY, async (userId) => {
    try {
      const channels = channelsFor(notification, preferences.get(userId), topic);
      const receiver = await deliverTo(notification, userId, delivery, state, channels, progress);
      if (receiver) written.push(receiver);
      progress.settled.add(userId);
    } catch (error) {
      // Not settled after all (its frames failed), unless the caller already queued the others without it.
      if (!progress.stopped) progress.settled.delete(userId);
      failures.push(error);
    }
  });
  await keepLateArrivalsUnread(notification, written, before);
  countMetric(SERVICE_METRICS.receiversWritten, written.length); // one value per chunk, not per recipient
  if (failures.length > 0) throw failures[0];
};

/**
 * The delivery of the recipients an accepting request delivers itself: the same id for every attempt of that
 * request (an Idempotency-Key retry reuses the notification id), so a retry after a crash resends the frames
 * the crashed attempt may not have sent.
 */
export const requestDelivery = (notificationId: string): Delivery => ({
  id: `request:${notificationId}`,
  clearsPending: false,
});

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
  await enqueue(fanoutQueue, [...chunks, ...next]);
};

/** Early (a schedule firing ahead of time, a clock skew): back on the queue with SQS's delay (≤ 15 min). */
const postpone = async (message: FanoutMessage, remainingMs: number) => {
  await enqueue(fanoutQueue, [message], Math.min(900, Math.max(1, Math.ceil(remainingMs / 1000))));
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

/** The users' read-all watermarks before and after a chunk wrote their receivers. */
type Watermarks = ReadonlyMap<string, string>;

/**
 * The unread key of a new receiver: its id, unless the user's read-all watermark (read just before) covers
 * that id — a fan-out that lags behind a newer notification and a read-all. Then a key just above the
 * watermark, so the receiver arrives unread however old its notification is.
 */
const unreadKeyFor = (
  notification: NotificationRecord,
  userId: string,
  receiverId: string,
  before: Watermarks,
) => {
  const watermark = before.get(userId);
  if (watermark === undefined || receiverId > watermark) return receiverId;
  return receiverIdFor(notification.id, userId, Math.max(Date.now(), timeOfId(watermark) + 1));
};

/**
 * The record that proves (notification, recipient) was handled: the receiver in the feed for `in_app`, else
 * a receipt. Written once, by a conditional put: whoever writes it owns the recipient's frames, and marks
 * them pending with its SQS message id when the user has connections to send to. Another message naming the
 * same user (recipients and topics, two topics, a fan-out enqueued twice) finds the record and sends
 * nothing; the owning message, redelivered after a crash, finds its own id and sends what is still pending.
 */
const recordDelivery = async (
  notification: NotificationRecord,
  userId: string,
  delivery: Delivery,
  receiverId: string,
  unreadKey: string,
  hasAudience: boolean,
  channels: readonly Channel[],
): Promise<{ table: string; key: Record<string, string>; framesPending: boolean; written: boolean }> => {
  const framesPending = wantsFrames(channels) && hasAudience;
  const inApp = channels.includes('in_app');
  const table = tableName(inApp ? 'receivers' : 'receipts');
  const key: Record<string, string> = inApp
    ? { user_id: userId, receiver_id: receiverId }
    : { notification_id: notification.id, user_id: userId };
  if (!inApp && !framesPending) return { table, key, framesPending: false, written: false };
  const lease = framesPending ? delivery.lease : undefined;
  const frames: FramesState = {
    frames_pending: framesPending ? delivery.id : undefined,
    frames_holder: lease?.holder,
    frames_until: lease?.until,
  };
  const item = inApp
    ? ({
        user_id: userId,
        receiver_id: receiverId,
        notification_id: notification.id,
        delivered_at: new Date().toISOString(),
        expires_at: notification.expires_at ?? undefined,
        unread_key: unreadKey,
        ...frames,
        ttl: notification.ttl,
      } satisfies ReceiverRecord)
    : { ...key, ...frames, ttl: Math.floor(Date.now() / 1000) + RECEIPT_RETENTION_SECS };
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
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    const framesPending = await takeOverFrames(table, key, unmarshall(error.Item), userId, delivery);
    return { table, key, framesPending, written: false };
  }
};

/** What a recorded delivery says about its frames (fields of a receiver or a receipt). */
type FramesState = Pick<ReceiverRecord, 'frames_pending' | 'frames_holder' | 'frames_until'>;

/**
 * Whether this delivery sends the frames of a record written earlier: only when it is their owner (a
 * redelivery of the message that wrote it, or the accepting request's retry) and no live holder is sending
 * them. A queue message takes the lease over by a conditional write, so of two receives at once one sends.
 */
const takeOverFrames = async (
  table: string,
  key: Record<string, string>,
  recorded: FramesState,
  userId: string,
  delivery: Delivery,
): Promise<boolean> => {
  if (recorded.frames_pending !== delivery.id) return false;
  const { frames_holder: holder, frames_until: until } = recorded;
  if (until !== undefined && until > Date.now()) {
    if (holder === delivery.lease?.holder) throw new FramesHeldByOtherReceive(userId, until);
    // Another message of the same delivery (a chunk the request queued) holds them; it is not acknowledged
    // before they are out, and comes back to take them over if its invocation dies.
    return false;
  }
  if (!delivery.lease) return true;
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET frames_holder = :holder, frames_until = :until',
        ConditionExpression:
          until === undefined
            ? 'frames_pending = :owner AND attribute_not_exists(frames_until)'
            : 'frames_pending = :owner AND frames_until = :expired',
        ExpressionAttributeValues: {
          ':holder': delivery.lease.holder,
          ':until': delivery.lease.until,
          ':owner': delivery.id,
          ...(until === undefined ? {} : { ':expired': until }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Sent and cleared, or taken over by another receive meanwhile: decide again on what is there now.
    const current = error.Item ? (unmarshall(error.Item) as FramesState) : {};
    return takeOverFrames(table, key, current, userId, delivery);
  }
};

/**
 * Delivers to one recipient on the channels its preferences leave on; the receiver id and unread key when
 * this call wrote the receiver. With no channel left it records nothing, so another chunk reaching the user
 * otherwise (a named recipient, an unmuted topic) still delivers.
 */
const deliverTo = async (
  notification: NotificationRecord,
  userId: string,
  delivery: Delivery,
  state: RecipientState,
  channels: readonly Channel[],
  progress: ChunkProgress,
): Promise<{ userId: string; receiverId: string; unreadKey: string } | undefined> => {
  if (channels.length === 0) return undefined;
  const receiverId = receiverIdFor(notification.id, userId, notification.deliver_at);
  const unreadKey = unreadKeyFor(notification, userId, receiverId, state.before);
  // Connections first: most recipients of a large notification are offline, and for them the record
  // needs no pending-frames flag and no second write to clear it.
  const members = wantsFrames(channels)
    ? (state.members?.get(userId) ?? (await channelMembers(userChannel(userId))))
    : [];
  const { table, key, framesPending, written } = await recordDelivery(
    notification,
    userId,
    delivery,
    receiverId,
    unreadKey,
    members.length > 0,
    channels,
  );
  const result = written ? { userId, receiverId, unreadKey } : undefined;
  if (!framesPending || progress.stopped) return result;
  progress.settled.add(userId);
  const sent = await deliverToMembers(members, frameFor(notification, receiverId, channels));
  await endGoneConnections(sent.gone);
  if (delivery.clearsPending) {
    await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'REMOVE frames_pending, frames_holder, frames_until',
      }),
    );
  }
  logger.debug('notification frames sent', {
    notification_id: notification.id,
    user_id: userId,
    delivered: sent.delivered,
    gone: sent.gone.length,
  });
  return result;
};

/**
 * After a chunk: a read-all that ran while it wrote may have moved a user's watermark over a receiver it
 * did not see. Where the watermark moved and covers the new receiver, its unread key goes above the
 * watermark: an item never lands read. (Such a read-all may have seen and counted it: then it is counted
 * and still unread, the one overlap docs/notifications.md describes.)
 */
const keepLateArrivalsUnread = async (
  notification: NotificationRecord,
  written: readonly { readonly userId: string; readonly receiverId: string; readonly unreadKey: string }[],
  before: Watermarks,
): Promise<void> => {
  if (written.length === 0) return;
  let after = await readAllWatermarks(written.map(({ userId }) => userId));
  const covered = written.filter(({ userId, unreadKey }) => {
    const watermark = after.get(userId);
    return watermark !== undefined && watermark !== before.get(userId) && unreadKey <= watermark;
  });
  await forEachLimited(covered, RECIPIENT_CONCURRENCY, async ({ userId, receiverId, unreadKey }) => {
    let current = unreadKey;
    for (;;) {
      const above = unreadKeyFor(notification, userId, current, after);
      if (above === current) return;
      try {
        await documentClient().send(
          new UpdateCommand({
            TableName: tableName('receivers'),
            Key: { user_id: userId, receiver_id: receiverId },
            UpdateExpression: 'SET unread_key = :above',
            // Only while the key is still the covered one: a read in the meantime removed it (and stays).
            ConditionExpression: 'unread_key = :covered',
            ExpressionAttributeValues: { ':above': above, ':covered': current },
          }),
        );
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
        return;
      }
      current = above;
      after = await readAllWatermarks([userId]); // a read-all may have moved past this key too
    }
  });
};
