import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { envNames } from '../../../lib/wiring/env';
import { documentClient, queueUrl, requiredEnv, tableName } from '../../core/clients';
import { scheduler } from '../../core/clients-scheduler';
import { sendAll } from '../../core/sqs-send';
import type { DELIVERY_STATUSES } from './schema';
import { webhookSettings } from './settings';

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
  /** SQS message id and receive count of the claim's holder. */
  readonly claimed_by?: string;
  readonly claim_receive?: number;
  readonly next_attempt_at?: string | null;
  readonly last_error?: string | null;
  readonly ttl: number;
}

/** One SQS message per attempt; `run` and `attempt` make stale and duplicate messages no-ops. */
export interface DeliveryMessage {
  readonly webhook_id: string;
  readonly delivery_id: string;
  readonly run: number;
  readonly attempt: number;
  /** Times this attempt waited for a free slot of its endpoint (per-endpoint concurrency); absent at first. */
  readonly deferrals?: number;
}

export const ttlFrom = (now: Date): number => Math.floor(now.getTime() / 1000) + DELIVERY_RETENTION_SECS;

export const getDelivery = async (
  webhookId: string,
  deliveryId: string,
): Promise<DeliveryRecord | undefined> => {
  const out = await documentClient().send(
    new GetCommand({
      TableName: tableName('webhookDeliveries'),
      Key: { webhook_id: webhookId, delivery_id: deliveryId },
      ConsistentRead: true,
    }),
  );
  return out.Item as DeliveryRecord | undefined;
};

/** Who holds attempt 1 of a delivery created already claimed (see `createDelivery`). */
export interface FirstClaim {
  readonly messageId: string;
  readonly receiveCount: number;
  readonly expiresAt: Date;
}

/**
 * Creates the delivery of an event to a webhook once: the conditional put on (webhook id, delivery id) is
 * what makes redelivered bus messages harmless. With `claim` the item is created already claimed for attempt
 * 1 (`sending`, held by that receive until `expiresAt`), as the delivery worker's claim would leave it: the
 * matcher, which makes the first attempt itself, saves the claim's write and the read before it.
 * Returns the record when this call created it; `due` when a redelivered bus message finds its first attempt
 * still to be seen to (not made yet, being made by a receive that may have died, or failed with the retry
 * perhaps not queued); undefined when the delivery is past its first attempt.
 */
export const createDelivery = async (
  webhookId: string,
  deliveryId: string,
  event: EventSnapshot,
  now: Date,
  claim?: FirstClaim,
): Promise<{ readonly created: DeliveryRecord } | 'due' | undefined> => {
  const record: DeliveryRecord = {
    webhook_id: webhookId,
    delivery_id: deliveryId,
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
          claim_receive: claim.receiveCount,
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
  const existing = await getDelivery(webhookId, deliveryId);
  return existing !== undefined &&
    existing.run === 0 &&
    existing.attempt_count <= 1 &&
    existing.status !== 'succeeded' &&
    existing.status !== 'dead_letter'
    ? 'due'
    : undefined;
};

/** Hands attempts to the delivery queue now, or after a delay: SQS DelaySeconds up to its limit, else a schedule. */
export const enqueueAttempts = async (messages: readonly DeliveryMessage[], delaySecs = 0): Promise<void> => {
  if (messages.length === 0) return;
  const settings = webhookSettings();
  if (delaySecs <= settings.maxQueueDelaySecs) {
    await sendAll(
      queueUrl('webhookDeliveries'),
      messages.map((message) => JSON.stringify(message)),
      Math.max(0, Math.min(900, Math.round(delaySecs))),
    );
    return;
  }
  await Promise.all(messages.map((message) => scheduleAttempt(message, delaySecs)));
};

/** `at()` has whole seconds: round up so the attempt is never early. */
const atExpression = (epochMs: number): string =>
  `at(${new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().slice(0, 19)})`;

const scheduleAttempt = async (message: DeliveryMessage, delaySecs: number): Promise<void> => {
  // A name derived from the attempt: a second try to schedule the same attempt is a ConflictException.
  const digest = createHash('sha256')
    .update(`${message.webhook_id}/${message.delivery_id}/${message.run}/${message.attempt}`)
    .digest('hex')
    .slice(0, 40);
  try {
    await scheduler().send(
      new CreateScheduleCommand({
        Name: `webhook-retry-${digest}`,
        GroupName: requiredEnv(envNames.scheduleGroup),
        ScheduleExpression: atExpression(Date.now() + delaySecs * 1000),
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: {
          Arn: requiredEnv(envNames.queueArn('webhookDeliveries')),
          RoleArn: requiredEnv(envNames.schedulerRoleArn),
          Input: JSON.stringify(message),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error;
  }
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
