import type { NotificationRecord } from './model';

/**
 * Messages on the `fanout` queue. A `plan` splits a notification's audience into `chunk`s and one
 * `topic-page` per named topic; each chunk is delivered by one worker invocation and each topic page enqueues
 * its subscribers' chunks and the next page, so a large audience is processed in parallel and no single
 * request walks the whole list.
 */
export type FanoutMessage =
  | { readonly kind: 'plan'; readonly notification_id: string }
  | {
      readonly kind: 'chunk';
      readonly notification_id: string;
      readonly recipients: readonly string[];
      /** The topic whose subscribers these are (a recipient who muted it gets nothing); absent for recipient_ids. */
      readonly topic?: string;
      /**
       * The owner of these recipients' frames when not this message: the accepting request that delivered
       * the others itself and queued the recipients it could not finish (fanout.ts `requestDelivery`).
       */
      readonly delivery_id?: string;
    }
  | {
      /** One page of a topic's subscribers (a Query): enqueues their chunks, then the next page. */
      readonly kind: 'topic-page';
      readonly notification_id: string;
      readonly topic: string;
      /** The last subscriber of the previous page; absent for the first page. */
      readonly after?: string;
    };

/** Recipients per chunk: 100 × 256-character ids stays far below SQS's message limit (lib/wiring/limits.ts). */
export const CHUNK_SIZE = 100;

export const chunksOf = <T>(items: readonly T[], size: number): T[][] => {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
};

export const parseFanoutMessage = (body: string): FanoutMessage => {
  const message = JSON.parse(body) as Partial<FanoutMessage>;
  if (typeof message.notification_id !== 'string') throw new Error('fan-out message without notification_id');
  if (message.kind === 'plan') return { kind: 'plan', notification_id: message.notification_id };
  if (message.kind === 'chunk' && Array.isArray(message.recipients)) {
    return {
      kind: 'chunk',
      notification_id: message.notification_id,
      recipients: message.recipients,
      ...(typeof message.topic === 'string' ? { topic: message.topic } : {}),
      ...(typeof message.delivery_id === 'string' ? { delivery_id: message.delivery_id } : {}),
    };
  }
  if (message.kind === 'topic-page' && typeof message.topic === 'string') {
    return typeof message.after === 'string'
      ? {
          kind: 'topic-page',
          notification_id: message.notification_id,
          topic: message.topic,
          after: message.after,
        }
      : { kind: 'topic-page', notification_id: message.notification_id, topic: message.topic };
  }
  throw new Error(`unknown fan-out message kind ${String(message.kind)}`);
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
