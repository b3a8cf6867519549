import { messageQueue } from '../../core/message-queue';
import * as z from '../../core/zod';
import { TOPIC_NAME } from '../topics/names';
import type { NotificationRecord } from './model';

/**
 * Messages on the `fanout` queue. A `plan` splits a notification's audience into `chunk`s and one
 * `topic-page` per named topic; each chunk is delivered by one worker invocation and each topic page enqueues
 * its subscribers' chunks and the next page, so a large audience is processed in parallel and no single
 * request walks the whole list.
 */
const fanoutMessageKinds = [
  z.object({ kind: z.literal('plan'), notification_id: z.string() }),
  z.object({
    kind: z.literal('chunk'),
    notification_id: z.string(),
    recipients: z.readonly(z.array(z.string())),
    /** The topic whose subscribers these are (a recipient who muted it gets nothing); absent for recipient_ids. */
    topic: z.optional(z.string()),
    /**
     * The owner of these recipients' frames when not this message: the accepting request that delivered
     * the others itself and queued the recipients it could not finish (delivery.ts `deliveryByRequest`).
     */
    delivery_id: z.optional(z.string()),
    /**
     * The holder of these recipients' frame leases when not this message: the message this chunk was split from
     * (fanout.ts), so that a receive of that one still sending them is told from a dead one.
     */
    lease_holder: z.optional(z.string()),
  }),
  /** One page of a topic's subscribers (a Query): enqueues their chunks, then the next page. */
  z.object({
    kind: z.literal('topic-page'),
    notification_id: z.string(),
    topic: z.string(),
    /** The last subscriber of the previous page; absent for the first page. */
    after: z.optional(z.string()),
  }),
  /**
   * One step of a deleted topic's purge (topics/deletion.ts). It rides on this queue, whose worker already pages
   * topics' subscriptions, rather than on a queue of its own: a queue costs its DLQ alarm (the development
   * stage's alarms are exactly CloudWatch's 10 free metrics), its poller's idle cost and CloudFormation resources.
   */
  z.object({ kind: z.literal('topic-purge'), topic: z.string().check(z.regex(TOPIC_NAME)) }),
  /**
   * The wake-up of a snoozed feed item (item-states.ts), sent by its schedule. On this queue for the reason
   * above, and because its worker already writes receivers and sends frames to users.
   */
  z.object({
    kind: z.literal('wake'),
    user_id: z.string(),
    receiver_id: z.string(),
    /** The `snoozed_until` it ends: an item snoozed again since (another time) is left alone. */
    until: z.string(),
  }),
  /**
   * The close of a digest batch (digest-join.ts), sent by its schedule: one notification with the batch's count
   * and items goes to the user. On this queue because its worker delivers notifications.
   */
  z.object({
    kind: z.literal('digest-close'),
    user_id: z.string(),
    /** The batch's key, scoped: `key:<digest key>` or `preference:<pattern>`. */
    scope: z.string(),
    batch_id: z.string(),
  }),
  /**
   * The bus event of a click on a feed item (interact.ts), sent by the request before it records the click: the
   * worker publishes it once the click is recorded under `interaction_id`. On this queue for the reason above.
   */
  z.object({
    kind: z.literal('interaction'),
    user_id: z.string(),
    receiver_id: z.string(),
    interaction_id: z.string(),
    /** When the request sent it: past its longest run, a click not recorded never will be. */
    sent_at: z.string(),
  }),
  /**
   * The release of a recipient's push and toast held by its quiet hours (holding.ts, release.ts), sent by its
   * schedule when the window ends. On this queue for the reasons above.
   */
  z.object({
    kind: z.literal('release'),
    notification_id: z.string(),
    user_id: z.string(),
    /** The end of the window that held them (RFC 3339). */
    until: z.string(),
    channels: z.readonly(z.array(z.enum(['push', 'toast'])).check(z.minLength(1))),
    /** The topic the recipient was reached through, whose mute is checked again at the release. */
    topic: z.optional(z.string()),
    /** A fallback step held by quiet hours at its time (fallback.ts): its index, and the delivery it counts from. */
    step: z.optional(z.number()),
    delivered_at: z.optional(z.number()),
  }),
  /**
   * A fallback step whose channel is `toast` (fallback.ts), due `after_secs` after the delivery of these recipients.
   * On this queue because its worker sends frames to users. A step of `push` goes to the `push` queue instead.
   */
  z.object({
    kind: z.literal('fallback'),
    notification_id: z.string(),
    recipients: z.readonly(z.array(z.string())),
    step: z.number(),
    /** When these recipients were delivered (epoch ms): every step counts from it. */
    delivered_at: z.number(),
    topic: z.optional(z.string()),
    /** Seconds still to wait once the message arrives (sqs-send.ts, `enqueueAfter`). */
    rest_secs: z.optional(z.number()),
  }),
] as const;

export type FanoutMessage = z.infer<(typeof fanoutMessageKinds)[number]>;
export type TopicPurgeMessage = Extract<FanoutMessage, { kind: 'topic-purge' }>;

export const fanoutQueue = messageQueue('fanout', fanoutMessageKinds);

/** Recipients per chunk: 100 × 256-character ids stays far below SQS's message limit (common/limits.ts). */
export const CHUNK_SIZE = 100;

export const chunksOf = <T>(items: readonly T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
};

/** The audience of a notification: its recipients and the topics whose subscribers it also reaches. */
export type Audience = Pick<NotificationRecord, 'id' | 'topics'> & {
  readonly recipient_ids: readonly string[];
};

/** What a `plan` turns into: chunks of the recipients, and the first page of each topic's subscribers. */
export const planMessages = (audience: Audience): FanoutMessage[] => [
  ...chunksOf(audience.recipient_ids, CHUNK_SIZE).map(
    (recipients): FanoutMessage => ({ kind: 'chunk', notification_id: audience.id, recipients }),
  ),
  ...(audience.topics ?? []).map(
    (topic): FanoutMessage => ({ kind: 'topic-page', notification_id: audience.id, topic }),
  ),
];
