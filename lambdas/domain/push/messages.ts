import { messageQueue } from '../../core/message-queue';
import { enqueue } from '../../core/sqs-send';
import * as z from '../../core/zod';
import { CHUNK_SIZE, chunksOf } from '../notifications/fanout-messages';
import type { NotificationRecord } from '../notifications/model';
import { pushDueAt } from './routing';

/** SQS DelaySeconds is at most 900; a longer wait is finished by a one-time schedule (deliver.ts, `waitUntil`). */
export const SQS_MAX_DELAY_SECS = 900;

/**
 * Messages on the `push` queue. `recipients`: the pushes of a notification to these recipients' devices, one
 * message per delivered chunk (up to 100 recipients: a message per device would cost more in SQS than the rest
 * of the push). `attempt`: a later attempt of one push after a `retry` answer. `dead-letter`: a push that failed
 * for good in a way an operator must see (credentials refused, attempts used up); it fails on every receive and
 * so ends in the queue's DLQ, whose alarm fires.
 */
const pushMessage = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('recipients'),
    notification_id: z.string(),
    recipients: z.readonly(z.array(z.string()).check(z.minLength(1), z.maxLength(CHUNK_SIZE))),
  }),
  z.object({
    kind: z.literal('attempt'),
    notification_id: z.string(),
    user_id: z.string(),
    token_hash: z.string(),
    attempt: z.int().check(z.gte(2)),
    /** Not before this time (epoch ms): a Retry-After longer than SQS's longest delay. */
    not_before: z.optional(z.number()),
  }),
  z.object({
    kind: z.literal('dead-letter'),
    notification_id: z.string(),
    user_id: z.string(),
    token_hash: z.string(),
    reason: z.string(),
  }),
]);

export type PushMessage = z.infer<typeof pushMessage>;

export const pushQueue = messageQueue('push', pushMessage);

/** Seconds from `now` to `at`, as an SQS delay: 0 when due, at most SQS's longest. */
export const queueDelaySecs = (at: number, now = Date.now()): number =>
  Math.min(SQS_MAX_DELAY_SECS, Math.max(0, Math.ceil((at - now) / 1000)));

/**
 * Hands the pushes of delivered recipients to the push queue, due when the notification's routing says (now, or
 * `after_secs` later for `unread`). A chunk handled twice hands them over twice: each push is claimed once.
 */
export const handOverPushes = async (
  notification: NotificationRecord,
  recipients: readonly string[],
): Promise<void> => {
  if (recipients.length === 0) return;
  const delay = queueDelaySecs(pushDueAt(notification.push, notification.deliver_at));
  await enqueue(
    pushQueue,
    chunksOf(recipients, CHUNK_SIZE).map(
      (chunk): PushMessage => ({ kind: 'recipients', notification_id: notification.id, recipients: chunk }),
    ),
    delay > 0 ? delay : undefined,
  );
};
