import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { envNames } from '../../../lib/wiring/env';
import { documentClient, queueUrl, requiredEnv, tableName } from '../../core/clients';
import { scheduler } from '../../core/clients-scheduler';
import { forbidden } from '../../core/errors';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { type Principal, sourceOf } from '../../core/principal';
import { sendAll } from '../../core/sqs-send';
import type { StoredResponse } from '../idempotency';
import { subscriberCounts } from '../topics/topics';
import { type Audience, CHUNK_SIZE, type FanoutMessage, planMessages } from './fanout-messages';
import { FEED_RETENTION_MS, type NotificationRecord } from './model';
import type { CreateNotificationInput } from './schema';

/** Scheduled less than this far ahead, a notification is simply sent now. */
const SCHEDULE_THRESHOLD_MS = 1000;

/** Contract §2/§3: a user may notify only itself; a service needs `notifications:write` (checked by the route). */
const assertMayNotify = (principal: Principal, input: CreateNotificationInput) => {
  sourceOf(principal, input.source);
  if (principal.kind !== 'user') return;
  if (input.recipient_ids.some((id) => id !== principal.id) || input.topics.length > 0) {
    throw forbidden('A user may create notifications only for itself');
  }
};

/** `at()` takes whole seconds: round up so the schedule never fires before `scheduled_at`. */
export const atExpression = (epochMs: number): string =>
  `at(${new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().slice(0, 19)})`;

/**
 * Stores the notification once and hands its fan-out to SQS (now) or EventBridge Scheduler (later).
 * Safe to run twice with the same id: every step is conditional or idempotent downstream.
 */
export const createNotification = async (
  principal: Principal,
  input: CreateNotificationInput,
  id: string,
): Promise<StoredResponse> => {
  assertMayNotify(principal, input);
  const now = Date.now();
  const scheduledAt = input.scheduled_at ? Date.parse(input.scheduled_at) : null;
  const scheduled = scheduledAt !== null && scheduledAt > now + SCHEDULE_THRESHOLD_MS;
  const deliverAt = scheduled ? scheduledAt : now;
  const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
  // Unknown topics are a 404 before anything is stored; their counts bound recipient_count from above.
  const topicCounts = await subscriberCounts(input.topics);
  const record: NotificationRecord = {
    id,
    source: sourceOf(principal, input.source),
    event_type: input.event_type,
    title: input.title,
    body: input.body,
    data: input.data,
    priority: input.priority,
    channels: input.channels,
    recipient_ids: input.recipient_ids,
    topics: input.topics.length > 0 ? input.topics : undefined,
    scheduled_at: scheduled ? new Date(deliverAt).toISOString() : null,
    expires_at: input.expires_at ? new Date(Date.parse(input.expires_at)).toISOString() : null,
    created_at: new Date(now).toISOString(),
    deliver_at: deliverAt,
    status: scheduled ? 'scheduled' : 'accepted',
    created_by: `${principal.kind}:${principal.id}`,
    ttl: Math.ceil(Math.max(expiresAt ?? 0, deliverAt + FEED_RETENTION_MS) / 1000),
  };
  const stored = await storeOnce(record);
  // A retried request finds the earlier record: only the first store counts as a created notification.
  if (stored === record) countMetric(SERVICE_METRICS.notificationsCreated);
  if (stored.status === 'scheduled') await scheduleFanout(stored);
  else await enqueueFanout(stored);
  return {
    status: 202,
    body: {
      id: stored.id,
      status: stored.status,
      recipient_count: recipientCount(stored, topicCounts),
      scheduled_at: stored.scheduled_at,
    },
  };
};

/**
 * The recipients plus, per named topic, its subscriber count at request time: an upper bound of the users
 * reached (a user in several of them is counted each time but delivered once). docs/events-topics-devices.md.
 */
const recipientCount = (record: Audience, topicCounts: ReadonlyMap<string, number>): number =>
  record.recipient_ids.length +
  (record.topics ?? []).reduce((sum, topic) => sum + Math.max(0, topicCounts.get(topic) ?? 0), 0);

/** Writes the record unless an earlier attempt with this id did; then the stored one wins. */
const storeOnce = async (record: NotificationRecord): Promise<NotificationRecord> => {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('notifications'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(id)',
      }),
    );
    return record;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = await documentClient().send(
      new GetCommand({ TableName: tableName('notifications'), Key: { id: record.id }, ConsistentRead: true }),
    );
    return (existing.Item as NotificationRecord | undefined) ?? record;
  }
};

/**
 * Small recipient lists go straight out as one chunk (plus the first page of each topic); larger ones as a
 * plan the worker splits.
 */
export const fanoutMessagesFor = (record: Audience): FanoutMessage[] =>
  record.recipient_ids.length <= CHUNK_SIZE
    ? planMessages(record)
    : [{ kind: 'plan', notification_id: record.id }];

const enqueueFanout = (record: Audience) =>
  sendAll(
    queueUrl('fanout'),
    fanoutMessagesFor(record).map((message) => JSON.stringify(message)),
  );

const scheduleFanout = async (record: NotificationRecord) => {
  const plan: FanoutMessage = { kind: 'plan', notification_id: record.id };
  try {
    await scheduler().send(
      new CreateScheduleCommand({
        Name: `notification-${record.id}`,
        GroupName: requiredEnv(envNames.scheduleGroup),
        ScheduleExpression: atExpression(record.deliver_at),
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: {
          Arn: requiredEnv(envNames.queueArn('fanout')),
          RoleArn: requiredEnv(envNames.schedulerRoleArn),
          Input: JSON.stringify(plan),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error; // an earlier attempt created it already
  }
};
