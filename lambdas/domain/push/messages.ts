import { messageQueue } from '../../core/message-queue';
import * as z from '../../core/zod';
import { pushRecipientsMessage, restSecs } from './hand-over';

/**
 * Messages of the push worker, on the `push` queue or as the event of an asynchronous invocation (one schema for
 * both). `recipients` (hand-over.ts): the pushes of a notification to a chunk of recipients. `attempt`: a later
 * attempt of one push after a `retry` answer. `dead-letter`: a push that failed for good in a way an operator must
 * see (credentials refused, attempts used up); it fails on every receive and so ends in the queue's DLQ, whose
 * alarm fires.
 */
const pushMessageKinds = [
  pushRecipientsMessage,
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
