import { messageQueue } from '../../core/message-queue';
import { invokeWorker } from '../../core/worker-invoke';
import * as z from '../../core/zod';
import { CHUNK_SIZE, chunksOf } from '../notifications/fanout-messages';
import type { NotificationRecord } from '../notifications/model';

/**
 * Seconds still to wait once the message arrives: a wait longer than SQS's longest delay is queued for that delay
 * with the rest here. Relative, counted from the arrival: a late arrival makes the push later, never earlier.
 */
export const restSecs = z.optional(z.number().check(z.nonnegative()));

/**
 * The pushes of a notification to these recipients' devices, one message per delivered chunk (up to 100 recipients:
 * a message per device would cost more than the rest of the push): the push worker's message kind that the
 * deliverers send (messages.ts has the others).
 */
export const pushRecipientsMessage = z.object({
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
});

export type PushRecipientsMessage = z.infer<typeof pushRecipientsMessage>;

/**
 * The `push` queue (messages.ts) as the deliverers see it: the `recipients` kind alone, so that the accepting
 * request and the fan-out worker carry none of the push worker's own kinds' schemas (esbuild keeps every top-level
 * zod call of a module imported). The push worker reads the queue with all of its kinds.
 */
export const pushRecipientsQueue = messageQueue('push', [pushRecipientsMessage]);

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
    (chunk): PushRecipientsMessage => ({
      kind: 'recipients',
      notification_id: notification.id,
      recipients: chunk,
    }),
  );
  if (messages.length > 0) await invokeWorker(PUSH_WORKER, pushRecipientsQueue, messages);
};
