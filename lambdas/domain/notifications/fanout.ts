import { createHash } from 'node:crypto';
import type { MessageHandling } from '../../core/message-handling';
import type { MessageQueue } from '../../core/message-queue';
import { waitOutRest } from '../../core/schedule-send';
import { enqueue } from '../../core/sqs-send';
import { purgeTopicPage } from '../topics/deletion';
import { subscribersPage } from '../topics/subscriptions';
import { deliverChunk, deliveryByMessage } from './delivery';
import { findBatch } from './digest-batches';
import { sendDigest } from './digest-close';
import type { ToastStepMessage } from './fallback';
import { CHUNK_SIZE, chunksOf, type FanoutMessage, fanoutQueue, planMessages } from './fanout-messages';
import { type InteractionMessage, publishInteraction } from './interact';
import { STATE_CHANGE_LONGEST_MS, wakeItem } from './item-states';
import { isExpired, type NotificationRecord } from './model';
import { readNotification } from './notification-store';
import { type ReleaseOutcome, releaseHeld, sendToastStep } from './release';

/** Scheduled again, the same wait of the same step message is the same schedule (a ConflictException). */
const scheduleName = (message: ToastStepMessage): string =>
  `step-${createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 40)}`;

/** A message that arrives this much before its delivery time is put back with a delay. */
const EARLY_TOLERANCE_MS = 500;

export type FanoutOutcome =
  | ReleaseOutcome
  | 'planned'
  | 'delivered'
  | 'expired'
  | 'postponed'
  | 'purged'
  | 'woken'
  | 'published'
  | 'skipped'
  | 'split';

const loadNotification = async (id: string): Promise<NotificationRecord> => {
  const notification = await readNotification(id, 'strong');
  if (!notification) throw new Error(`notification ${id} does not exist`);
  return notification;
};

/**
 * Handles one fan-out message; `handling.messageId` identifies the message across redeliveries. Safe to run any
 * number of times, also twice at once: each (notification, recipient) gets one record by a conditional put,
 * only the message that wrote it sends the recipient's frames, and only one receive of it at a time.
 */
export const processFanoutMessage = async (
  message: FanoutMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<FanoutOutcome> => {
  if (message.kind === 'topic-purge') {
    await purgeTopicPage(message);
    return 'purged';
  }
  if (message.kind === 'wake') return wake(message, now);
  if (message.kind === 'interaction') return interaction(message, handling, now);
  if (message.kind === 'digest-close') {
    const batch = (await findBatch(message.user_id, message.scope, message.batch_id))?.batch;
    if (batch && batch.state === 'open' && batch.closes_at > now + EARLY_TOLERANCE_MS) {
      await postpone(message, batch.closes_at - now);
      return 'postponed';
    }
    return sendDigest(message.user_id, message.scope, message.batch_id, handling);
  }
  if (message.kind === 'fallback') {
    const step = fanoutQueue as MessageQueue<ToastStepMessage>;
    if (await waitOutRest(step, message, scheduleName, now)) return 'postponed';
    return sendToastStep(await loadNotification(message.notification_id), message, handling, now);
  }
  if (message.kind === 'release') {
    const remainingMs = Date.parse(message.until) - now;
    if (remainingMs > EARLY_TOLERANCE_MS) {
      await postpone(message, remainingMs);
      return 'postponed';
    }
    return releaseHeld(await loadNotification(message.notification_id), message, handling, now);
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
  if (Number(handling.receive) > 1 && message.recipients.length > 1) {
    await splitChunk(message, handling);
    return 'split';
  }
  // A chunk the accepting request could not finish keeps that request's delivery id (its frames' owner).
  const delivery = deliveryByMessage(handling, message.delivery_id, message.lease_holder);
  await deliverChunk(notification, message.recipients, delivery, { topic: message.topic });
  return 'delivered';
};

/**
 * A chunk received again: an earlier receive died or failed, perhaps for want of time (a crash, a timeout on a slow
 * table). Each receive makes progress (a recipient done is not done again), but one that keeps needing more time
 * than it gets would reach the DLQ after maxReceiveCount receives. So it goes back as two halves, new messages with
 * less to do, as Lambda bisects a failing stream batch; a recipient that fails by itself still ends in the DLQ, in
 * a chunk of one. The halves keep the frames' owner and the lease holder: a receive of this message that is still
 * sending frames holds them off until it is done or dead (delivery.ts, `takeOverFrames`).
 */
const splitChunk = async (message: Extract<FanoutMessage, { kind: 'chunk' }>, handling: MessageHandling) => {
  const half = Math.ceil(message.recipients.length / 2);
  await enqueue(
    fanoutQueue,
    chunksOf(message.recipients, half).map(
      (recipients): FanoutMessage => ({
        ...message,
        recipients,
        delivery_id: message.delivery_id ?? handling.messageId,
        lease_holder: message.lease_holder ?? handling.messageId,
      }),
    ),
  );
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
  await enqueue(fanoutQueue, [...chunks, ...next]);
};

/**
 * The wake-up of a snoozed item. The snooze request sends it before it writes the snooze (so a crash in between
 * leaves no item asleep for good), so it can come first: a snooze within a second, or a write slowed by a loaded
 * store. An item not snoozed until its time is looked at again, 1, 2, 4… s later, for as long as a request made
 * before that time may still be writing it; then the wake-up gives up (snoozed again to another time, archived,
 * or the request failed before its write).
 */
const wake = async (
  message: Extract<FanoutMessage, { kind: 'wake' }>,
  now: number,
): Promise<FanoutOutcome> => {
  const untilMs = Date.parse(message.until);
  if (untilMs - now > EARLY_TOLERANCE_MS) {
    await postpone(message, untilMs - now);
    return 'postponed';
  }
  const outcome = await wakeItem(message.user_id, message.receiver_id, message.until);
  if (outcome !== 'not-snoozed') return outcome;
  if (now >= untilMs + STATE_CHANGE_LONGEST_MS) return 'skipped';
  await postpone(message, Math.max(1000, now - untilMs));
  return 'postponed';
};

/**
 * The bus event of a click. Its request sends it before it records the click, so it can come first: a click not
 * recorded yet is looked at again, 1, 2, 4… s after the request sent it, for as long as the request may still
 * be writing; then the message is done (the request failed before its write: no click, no event).
 */
const interaction = async (
  message: InteractionMessage,
  handling: MessageHandling,
  now: number,
): Promise<FanoutOutcome> => {
  const outcome = await publishInteraction(message, handling);
  if (outcome !== 'not-recorded') return outcome;
  const sentAt = Date.parse(message.sent_at);
  if (now >= sentAt + STATE_CHANGE_LONGEST_MS) return 'skipped';
  await postpone(message, Math.max(1000, now - sentAt));
  return 'postponed';
};

/** Early (a schedule firing ahead of time, a clock skew): back on the queue with SQS's delay (≤ 15 min). */
const postpone = async (message: FanoutMessage, remainingMs: number) => {
  await enqueue(fanoutQueue, [message], Math.min(900, Math.max(1, Math.ceil(remainingMs / 1000))));
};
