import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor, type UserPreferences } from '../preferences/rules';
import { handOverPushes } from '../push/hand-over';
import { addDeliveryCounts } from '../push/summary-counts';
import { userChannel } from '../realtime/channel-names';
import { channelMembers, deliverToMembers, type Membership } from '../realtime/deliver';
import type { NotificationFrame } from '../realtime/frames';
import { endGoneConnections } from '../realtime/lifecycle';
import type { Channel } from './channels';
import { joinDigest } from './digest-join';
import { batchesEveryRecipient, type DigestChoice, digestFor } from './digest-rules';
import { scheduleStep } from './fallback';
import { fallbackOf, steppedChannels } from './fallback-steps';
import { keepUnreadAboveWatermark, readAllWatermarks, unreadKeyAbove } from './feed';
import { holdForQuietHours } from './holding';
import {
  linksOf,
  type NotificationRecord,
  RECEIPT_RETENTION_SECS,
  type ReceiverRecord,
  receiverIdFor,
} from './model';
import { applyThrottle } from './throttle';

/*
 * Delivery of a notification to a chunk of recipients: the records that prove each was handled, and their
 * frames. Both deliverers use it, the accepting request (create.ts) and the fan-out worker (fanout.ts); it
 * depends on neither.
 */

/** Recipients of one chunk handled at once (DynamoDB writes and `@connections` posts in flight). */
const RECIPIENT_CONCURRENCY = 20;

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
 * The channels a delivery may deliver at once: none when every recipient joins a digest instead, so that it reads
 * no watermark and no connection for them.
 */
export const channelsDeliveredNow = (
  notification: Pick<NotificationRecord, 'channels' | 'digest' | 'digest_of' | 'preference_defaults'>,
): readonly Channel[] => (batchesEveryRecipient(notification) ? [] : notification.channels);

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
  /**
   * Settled recipients whose devices are due a push. The chunk hands them to the push worker when it ends; a caller
   * that stops waiting hands over those it has seen itself (again later costs nothing: each push is claimed once).
   * A push that does not depend on the frames is decided before they are sent, so it is here while they are in
   * flight.
   */
  readonly pushes: Set<string>;
  /**
   * Settled recipients whose frames are in flight and whose push depends on them (`offline`). A caller that stops
   * waiting queues them with the unsettled ones: the queued chunk sends their frames again and decides the push,
   * and this run, once its frames are out, decides nothing more for them.
   */
  readonly awaitingFrames: Set<string>;
  /** Settled recipients whose fallback steps start (fallback.ts): handed over like the pushes. */
  readonly steps: Set<string>;
  stopped: boolean;
}

/** How far a chunk got: nothing yet. */
export const chunkProgress = (): ChunkProgress => ({
  settled: new Set(),
  pushes: new Set(),
  awaitingFrames: new Set(),
  steps: new Set(),
  stopped: false,
});

/**
 * What a chunk hands on when it ends: the pushes due now to the push worker, and the first fallback step of those
 * whose steps start, counted from now. Again later costs nothing: each push and step is claimed once.
 */
export const handOverAfterDelivery = async (
  notification: NotificationRecord,
  progress: ChunkProgress,
  topic: string | undefined,
): Promise<void> => {
  await Promise.all([
    handOverPushes(notification, [...progress.pushes]),
    scheduleStep(notification, [...progress.steps], { step: 0, delivered_at: Date.now(), topic }),
  ]);
};

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
  const { topic, progress = chunkProgress() } = options;
  // One recipient named twice in a chunk is one delivery, not two racing under the same delivery id.
  const recipients = [...new Set(chunk)];
  const state = await (options.state ?? readRecipientState(channelsDeliveredNow(notification), recipients));
  const { before, preferences } = state;
  const stepped = steppedChannels(fallbackOf(notification));
  const written: { userId: string; receiverId: string; unreadKey: string }[] = [];
  let frames = 0;
  const failures: unknown[] = [];
  await forEachLimited(recipients, RECIPIENT_CONCURRENCY, async (userId) => {
    try {
      const userPreferences = preferences.get(userId);
      // Preferences; a batched notification joins its digest instead (docs/digests.md); then quiet hours (what they
      // hold is scheduled for release before the recipient counts as settled, and is throttled at the release), then
      // the throttle, counted in the window of the delivery time so that a redelivery lands in the same one; over a
      // limit whose `over` is `digest`, the notification joins that throttle's digest (docs/delivery-rules.md).
      const batched = async (digest: DigestChoice) => {
        await joinDigest(notification, userId, digest, userPreferences);
        progress.settled.add(userId);
      };
      const chosen = channelsFor(notification, userPreferences, topic);
      const digest = chosen.length > 0 ? digestFor(notification, userPreferences?.digests) : undefined;
      if (digest) return await batched(digest);
      // The channels of fallback steps wait for their step, which applies quiet hours and the throttle then.
      const now = chosen.filter((channel) => !stepped.includes(channel));
      const unheld = await holdForQuietHours(notification, userId, userPreferences, now, topic);
      const throttled = await applyThrottle(notification, userId, unheld, notification.deliver_at);
      if (throttled.digest) return await batched(throttled.digest);
      const { channels } = throttled;
      const delivered = await deliverTo(notification, userId, delivery, state, channels, progress);
      const { receiver, push } = delivered;
      if (receiver) written.push(receiver);
      frames += delivered.frames ?? 0;
      if (push) progress.pushes.add(userId);
      if (chosen.some((channel) => stepped.includes(channel))) progress.steps.add(userId);
      progress.settled.add(userId);
    } catch (error) {
      // Not settled after all (its frames failed), unless the caller already queued the others without it.
      if (!progress.stopped) progress.settled.delete(userId);
      failures.push(error);
    }
  });
  // Before the failures are thrown: a recipient handled here is not handled again by a retry of the chunk.
  await Promise.all([
    keepLateArrivalsUnread(notification, written, before),
    handOverAfterDelivery(notification, progress, topic),
    addDeliveryCounts(notification, { feedItems: written.length, frames }),
  ]);
  countMetric(SERVICE_METRICS.receiversWritten, written.length); // one value per chunk, not per recipient
  if (failures.length > 0) throw failures[0];
};

/**
 * The delivery of the recipients an accepting request delivers itself: the same id for every attempt of that
 * request (an Idempotency-Key retry reuses the notification id), so a retry after a crash resends the frames
 * the crashed attempt may not have sent.
 */
export const deliveryByRequest = (notificationId: string): Delivery => ({
  id: `request:${notificationId}`,
  clearsPending: false,
});

/**
 * The delivery of a fan-out chunk message: it holds the frames it sends until its invocation has surely ended.
 * `deliveryId` is the owner of the frames when another deliverer started them (the accepting request); `holder`
 * the holder of their leases when not this message (the message a chunk was split from).
 */
export const deliveryByMessage = (
  handling: MessageHandling,
  deliveryId = handling.messageId,
  holder = handling.messageId,
): Delivery => ({
  id: deliveryId,
  clearsPending: true,
  lease: { holder, until: holdExpiry(handling).getTime() },
});

const wantsFrames = (channels: readonly Channel[]): boolean =>
  channels.includes('toast') || channels.includes('realtime');

export const frameFor = (
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
  ...linksOf(notification),
  category: notification.category ?? null,
  tags: [...(notification.tags ?? [])],
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
  return unreadKeyAbove(notification.id, userId, watermark);
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
        category: notification.category,
        tags: notification.tags,
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
): Promise<{
  receiver?: { userId: string; receiverId: string; unreadKey: string };
  push: boolean;
  frames?: number;
}> => {
  if (channels.length === 0) return { push: false };
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
  const receiver = written ? { userId, receiverId, unreadKey } : undefined;
  // Its frames are left to the chunk the request queued: so is its push.
  if (framesPending && progress.stopped) return { ...(receiver ? { receiver } : {}), push: false };
  if (!framesPending) {
    // No connection to send to: no frame was received. Frames another deliverer owns: that one decides.
    const delivered = members.length === 0 ? 0 : undefined;
    return { ...(receiver ? { receiver } : {}), push: wantsPush(notification, channels, delivered) };
  }
  progress.settled.add(userId);
  // The push, when the frames' outcome does not decide it, is decided before they go out (a caller that stops
  // waiting meanwhile hands it over); `offline` waits for them.
  const pushAwaitsFrames = channels.includes('push') && notification.push?.when === 'offline';
  if (pushAwaitsFrames) progress.awaitingFrames.add(userId);
  else if (channels.includes('push')) progress.pushes.add(userId);
  const sent = await deliverToMembers(members, frameFor(notification, receiverId, channels));
  if (pushAwaitsFrames) {
    progress.awaitingFrames.delete(userId);
    // Stopped meanwhile: the caller queued this recipient, and the queued chunk decides its push.
    if (!progress.stopped && sent.delivered === 0) progress.pushes.add(userId);
  }
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
  // Its push is decided above, in `progress`.
  return { ...(receiver ? { receiver } : {}), push: false, frames: sent.delivered };
};

/**
 * Whether the recipient's devices are due a push (docs/push-delivery.md, "Routing"): `offline` only when no connection
 * received the frame (`delivered` 0; undefined: not known here, as another deliverer sent the frames).
 */
const wantsPush = (
  notification: NotificationRecord,
  channels: readonly Channel[],
  delivered: number | undefined,
): boolean => {
  if (!channels.includes('push')) return false;
  return notification.push?.when !== 'offline' || delivered === 0;
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
  const after = await readAllWatermarks(written.map(({ userId }) => userId));
  const covered = written.filter(({ userId, unreadKey }) => {
    const watermark = after.get(userId);
    return watermark !== undefined && watermark !== before.get(userId) && unreadKey <= watermark;
  });
  await forEachLimited(covered, RECIPIENT_CONCURRENCY, ({ userId, receiverId, unreadKey }) =>
    keepUnreadAboveWatermark(userId, receiverId, notification.id, unreadKey, after.get(userId)),
  );
};
