import { messageQueue } from '../../core/message-queue';
import { invokeWorker } from '../../core/worker-invoke';
import * as z from '../../core/zod';
import { CHUNK_SIZE, chunksOf } from '../notifications/fanout-messages';
import type { NotificationRecord } from '../notifications/model';

/**
 * Messages of the push worker, on the `push` queue or as the event of an asynchronous invocation (one schema for
 * both). `recipients`: the pushes of a notification to these recipients' devices, one message per delivered chunk
 * (up to 100 recipients: a message per device would cost more than the rest of the push). `attempt`: a later attempt of one push after a `retry` answer. `dead-letter`: a push that failed
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
    /**
     * This letter's own id: copies of the message that failed the push may each queue one, and the push record
     * names the one that stands. Absent in letters queued before it existed: those all stand.
     */
    dead_letter_id: z.optional(z.string()),
    rest_secs: restSecs,
  }),
] as const;

export type PushMessage = z.infer<(typeof pushMessageKinds)[number]>;

export const pushQueue = messageQueue('push', pushMessageKinds);

/** The worker that sends pushes (lib/wiring): handed its first attempts by asynchronous invocation. */
export const PUSH_WORKER = 'push.deliver';

/**
 * Hands the pushes due now of delivered recipients to the push worker, by an asynchronous invocation per chunk of up
 * to 100 recipients (no SQS request; Lambda keeps, retries and dead-letters it into `push-dlq`). A push that waits is
 * a fallback step on the push queue (notifications/fallback.ts), since an invocation cannot wait. Resolves once
 * Lambda has accepted every message. A chunk handled twice hands them over twice: each push is claimed once.
 */
export const handOverPushes = async (
  notification: NotificationRecord,
  recipients: readonly string[],
): Promise<void> => {
  const messages = chunksOf(recipients, CHUNK_SIZE).map(
    (chunk): PushMessage => ({ kind: 'recipients', notification_id: notification.id, recipients: chunk }),
  );
  if (messages.length > 0) await invokeWorker(PUSH_WORKER, pushQueue, messages);
};
