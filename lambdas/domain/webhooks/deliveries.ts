import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as envNames from '../../../common/env-names';
import { boundedIntegerSetting } from '../../../common/settings';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { messageQueue } from '../../core/message-queue';
import { waitOutRest as waitOutRestOf } from '../../core/schedule-send';
import { enqueue, enqueueAfter, queueDelaySecs } from '../../core/sqs-send';
import * as z from '../../core/zod';
import type { DELIVERY_STATUSES } from './deliveries-query';
import { DEFAULT_DELIVERY_SHARDS, MAX_DELIVERY_SHARDS, webhookSettings } from './settings';

/** Deliveries (and their dead letters) are kept this long after their last change. */
export const DELIVERY_RETENTION_SECS = 30 * 24 * 3600;
/** Attempts listed per delivery (the oldest go first). */
export const MAX_LOGGED_ATTEMPTS = 50;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The webhook body's `data` (contract §3). */
export interface EventSnapshot {
  readonly id: string;
  readonly event_type: string;
  readonly source: string;
  readonly version: number;
  readonly data: Record<string, unknown>;
  readonly priority: string;
  readonly time: string;
}

export interface AttemptLog {
  /** Attempt number over the delivery's life (re-sends continue the count). */
  readonly attempt: number;
  readonly at: string;
  readonly status_code: number | null;
  readonly duration_ms: number;
  readonly error: string | null;
}

export interface DeliveryRecord {
  /**
   * The item's partition: the webhook id for shard 0, `<webhook id>#<shard>` for the others (write sharding,
   * see `deliveryKey`). The attribute keeps its first name so that a deployed table keeps its items.
   */
  readonly webhook_id: string;
  /** Also the `webhook-id` header of every attempt. */
  readonly delivery_id: string;
  readonly event: EventSnapshot;
  readonly status: DeliveryStatus;
  /** Attempts made in the current run (a re-send starts a new run). */
  readonly attempt_count: number;
  readonly run: number;
  readonly attempts: readonly AttemptLog[];
  readonly created_at: string;
  readonly updated_at: string;
  readonly claimed_at?: string;
  /** The claim's holder can run until then at most (its invocation's deadline); later it may be taken over. */
  readonly claim_expires_at?: string;
  /**
   * The claim's holder (core/message-handling.ts): the SQS message id or bus invocation's request id, and its
   * handling.
   */
  readonly claimed_by?: string;
  readonly claim_receive?: string | number;
  readonly next_attempt_at?: string | null;
  readonly last_error?: string | null;
  readonly ttl: number;
}

/** Which delivery: its webhook, its id (the event's, the `webhook-id` header) and the shard it is stored in. */
export interface DeliveryRef {
  readonly webhook_id: string;
  readonly delivery_id: string;
  /** Absent in messages queued before deliveries were sharded: shard 0, where those deliveries are. */
  readonly shard?: number;
}

/** One SQS message per attempt; `run` and `attempt` make stale and duplicate messages no-ops. */
const deliveryMessage = z.object({
  webhook_id: z.string(),
  delivery_id: z.string(),
  /** Absent in messages queued before deliveries were sharded: shard 0. */
  shard: z.optional(z.int().check(z.nonnegative())),
  run: z.int(),
  attempt: z.int(),
  /** Times this attempt waited for a free slot of its endpoint (per-endpoint concurrency); absent at first. */
  deferrals: z.optional(z.int()),
  /**
   * Sent to look at the attempt again once a live claim of another handling has expired (deliver.ts,
   * `awaitClaim`): found still live, it waits again, whoever holds it.
   */
  awaits_claim: z.optional(z.literal(true)),
  /**
   * Seconds still to wait once the message arrives: a wait longer than SQS's longest delay is queued for that
   * delay with the rest here, and the delivery worker waits it out (`waitOutRest`) before the attempt.
   */
  rest_secs: z.optional(z.number().check(z.nonnegative())),
});

export type DeliveryMessage = z.infer<typeof deliveryMessage>;

export const deliveryQueue = messageQueue('webhookDeliveries', deliveryMessage);

export const ttlFrom = (now: Date): number => Math.floor(now.getTime() / 1000) + DELIVERY_RETENTION_SECS;

/**
 * Write sharding (docs/scale.md, hot keys): one DynamoDB partition takes 1,000 write units a second, and a
 * delivery writes ≈ 2, so one webhook's deliveries are spread over `deliveryShards()` partitions — shard 0 is
 * the webhook id itself (where every delivery was before sharding), shard k `<webhook id>#k`. A stage setting
 * (`scale.webhook_delivery_shards`), only ever raised: a delivery stays in the shard it was created in, and the
 * listing reads shards 0 … n−1.
 */

export const deliveryShards = (): number =>
  boundedIntegerSetting(envNames.webhookDeliveryShards, DEFAULT_DELIVERY_SHARDS, MAX_DELIVERY_SHARDS);

/** The shard a new delivery goes to: a stable, even spread of delivery ids (time-ordered UUIDs) over the shards. */
export const deliveryShardOf = (deliveryId: string): number =>
  createHash('sha256').update(deliveryId).digest().readUInt32BE(0) % deliveryShards();

export const deliveryPartition = (webhookId: string, shard: number): string =>
  shard === 0 ? webhookId : `${webhookId}#${shard}`;

export const deliveryKey = (ref: DeliveryRef) => ({
  webhook_id: deliveryPartition(ref.webhook_id, ref.shard ?? 0),
  delivery_id: ref.delivery_id,
});

/** Where a new delivery of `deliveryId` to a webhook goes. */
export const newDeliveryRef = (webhookId: string, deliveryId: string): DeliveryRef => ({
  webhook_id: webhookId,
  delivery_id: deliveryId,
  shard: deliveryShardOf(deliveryId),
});

export const getDelivery = async (ref: DeliveryRef): Promise<DeliveryRecord | undefined> => {
  const out = await documentClient().send(
    new GetCommand({
      TableName: tableName('webhookDeliveries'),
      Key: deliveryKey(ref),
      ConsistentRead: true,
    }),
  );
  return out.Item as DeliveryRecord | undefined;
};

/**
 * A delivery looked up by id alone (a re-send asked for through the API): every shard's key in one
 * BatchGetItem, since the shard count may have been raised since the delivery was created.
 */
export const findDelivery = async (
  webhookId: string,
  deliveryId: string,
): Promise<{ ref: DeliveryRef; record: DeliveryRecord } | undefined> => {
  const refs = Array.from({ length: deliveryShards() }, (_, shard) => ({
    webhook_id: webhookId,
    delivery_id: deliveryId,
    shard,
  }));
  const items = (await batchGetAll(tableName('webhookDeliveries'), refs.map(deliveryKey), {
    consistent: true,
  })) as unknown as DeliveryRecord[];
  const record = items[0];
  const ref = record && refs.find((candidate) => deliveryKey(candidate).webhook_id === record.webhook_id);
  return ref && record ? { ref, record } : undefined;
};

/** Who holds attempt 1 of a delivery created already claimed (see `createDelivery`). */
export interface FirstClaim {
  readonly messageId: string;
  readonly receive: string;
  readonly expiresAt: Date;
}

/**
 * Creates the delivery of an event to a webhook once: the conditional put on (webhook id, delivery id) is
 * what makes an event handled twice harmless. With `claim` the item is created already claimed for attempt
 * 1 (`sending`, held by that invocation until `expiresAt`), as the delivery worker's claim would leave it: the
 * matcher, which makes the first attempt itself, saves the claim's write and the read before it.
 * Returns the record when this call created it; `due` when an event handled again finds its first attempt
 * still to be seen to (not made yet, being made by an invocation that may have died, or failed with the retry
 * perhaps not queued); undefined when the delivery is past its first attempt.
 */
export const createDelivery = async (
  ref: DeliveryRef,
  event: EventSnapshot,
  now: Date,
  claim?: FirstClaim,
): Promise<{ readonly created: DeliveryRecord } | 'due' | undefined> => {
  const record: DeliveryRecord = {
    ...deliveryKey(ref),
    event,
    status: claim ? 'sending' : 'pending',
    attempt_count: claim ? 1 : 0,
    run: 0,
    attempts: [],
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    ...(claim
      ? {
          claimed_at: now.toISOString(),
          claim_expires_at: claim.expiresAt.toISOString(),
          claimed_by: claim.messageId,
          claim_receive: claim.receive,
        }
      : {}),
    ttl: ttlFrom(now),
  };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('webhookDeliveries'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(delivery_id)',
      }),
    );
    return { created: record };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
  // Exists: a redelivery. Making attempt 1 again is safe: its claim lets one receive make it, and a
  // delivery past it (succeeded, retried, dead-lettered, re-sent) is left alone.
  const existing = await getDelivery(ref);
  return existing !== undefined &&
    existing.run === 0 &&
    existing.attempt_count <= 1 &&
    existing.status !== 'succeeded' &&
    existing.status !== 'dead_letter'
    ? 'due'
    : undefined;
};

/**
 * Hands attempts to the delivery queue, now or after SQS DelaySeconds (at most 900). A re-send calls this
 * alone, so its function carries no Scheduler client (docs/performance.md).
 */
export const queueAttempts = async (messages: readonly DeliveryMessage[], delaySecs = 0): Promise<void> => {
  if (messages.length === 0) return;
  await enqueue(deliveryQueue, messages, queueDelaySecs(delaySecs));
};

/**
 * Hands attempts to the delivery queue now, or after a delay: SQS DelaySeconds up to its limit; a longer wait is
 * queued for that limit with the rest in the message, which the delivery worker waits out (`waitOutRest`). Only
 * that worker schedules, so the matcher, which makes first attempts and may queue what follows, carries no
 * Scheduler client (docs/performance.md).
 */
export const enqueueAttempts = (messages: readonly DeliveryMessage[], delaySecs = 0): Promise<void> =>
  enqueueAfter(deliveryQueue, messages, delaySecs, webhookSettings().maxQueueDelaySecs);

/** A message with part of its wait left (see `enqueueAttempts`): waited out. Returns whether it still waits. */
export const waitOutRest = (message: DeliveryMessage, now = new Date()): Promise<boolean> =>
  waitOutRestOf(deliveryQueue, message, scheduleName, now.getTime(), webhookSettings().maxQueueDelaySecs);

/**
 * A name derived from the attempt: a second try to schedule the same attempt is a ConflictException. The shard
 * too: an event handled again across a raise of the shard count has a delivery in each shard.
 */
const scheduleName = (message: DeliveryMessage): string => {
  const digest = createHash('sha256')
    .update(
      `${message.webhook_id}/${message.shard ?? 0}/${message.delivery_id}/${message.run}/${message.attempt}`,
    )
    .digest('hex')
    .slice(0, 40);
  return `webhook-retry-${digest}`;
};

export const isConditionFailure = (error: unknown): boolean =>
  error instanceof ConditionalCheckFailedException;

/** Conditional update of a delivery; false when the condition does not hold (someone else moved it on). */
export const updateDelivery = async (
  key: { webhook_id: string; delivery_id: string },
  update: {
    readonly set: Record<string, unknown>;
    readonly condition: string;
    readonly values?: Record<string, unknown>;
    readonly names?: Record<string, string>;
  },
): Promise<boolean> => {
  const names: Record<string, string> = { ...update.names };
  const values: Record<string, unknown> = { ...update.values };
  const assignments = Object.entries(update.set).map(([field, value], index) => {
    names[`#s${index}`] = field;
    values[`:s${index}`] = value;
    return `#s${index} = :s${index}`;
  });
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('webhookDeliveries'),
        Key: key,
        UpdateExpression: `SET ${assignments.join(', ')}`,
        ConditionExpression: update.condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
};
