import { messageQueue } from '../../core/message-queue';
import { enqueue } from '../../core/sqs-send';
import * as z from '../../core/zod';
import { CHUNK_SIZE, chunksOf } from '../notifications/fanout-messages';
import type { NotificationRecord } from '../notifications/model';

/**
 * Messages on the `push` queue. `recipients`: the pushes of a notification to these recipients' devices, one
 * message per delivered chunk (up to 100 recipients: a message per device would cost more in SQS than the rest
 * of the push). `attempt`: a later attempt of one push after a `retry` answer. `dead-letter`: a push that failed
 * for good in a way an operator must see (credentials refused, attempts used up); it fails on every receive and
 * so ends in the queue's DLQ, whose alarm fires.
 */
/**
 * Seconds still to wait once the message arrives: a wait longer than SQS's longest delay is queued for that delay
 * with the rest here. Relative, counted from the arrival: a late arrival makes the push later, never earlier.
 */
const restSecs = z.optional(z.number().check(z.nonnegative()));

const pushMessageKinds = [
  z.object({
    kind: z.literal('recipients'),
    notification_id: z.string(),
    recipients: z.readonly(z.array(z.string()).check(z.minLength(1), z.maxLength(CHUNK_SIZE))),
    /**
     * A fallback step of `push` (notifications/fallback.ts): its index, when these recipients were delivered (epoch
     * ms) and the topic they were reached through. Absent: a push due now.
     */
    step: z.optional(z.number()),
    delivered_at: z.optional(z.number()),
    topic: z.optional(z.string()),
    rest_secs: restSecs,
  }),
  z.object({
    kind: z.literal('attempt'),
    notification_id: z.string(),
    user_id: z.string(),
    token_hash: z.string(),
    attempt: z.int().check(z.gte(2)),
    rest_secs: restSecs,
  }),
  z.object({
    kind: z.literal('dead-letter'),
    notification_id: z.string(),
    user_id: z.string(),
    token_hash: z.string(),
    reason: z.string(),
    rest_secs: restSecs,
  }),
] as const;

export type PushMessage = z.infer<(typeof pushMessageKinds)[number]>;

export const pushQueue = messageQueue('push', pushMessageKinds);

/**
 * Hands the pushes due now of delivered recipients to the push queue (a push that waits is a fallback step:
 * notifications/fallback.ts). A chunk handled twice hands them over twice: each push is claimed once.
 */
export const handOverPushes = (
  notification: NotificationRecord,
  recipients: readonly string[],
): Promise<void> => {
  if (recipients.length === 0) return Promise.resolve();
  return enqueue(
    pushQueue,
    chunksOf(recipients, CHUNK_SIZE).map(
      (chunk): PushMessage => ({ kind: 'recipients', notification_id: notification.id, recipients: chunk }),
    ),
  );
};
