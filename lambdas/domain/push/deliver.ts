import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { SQS_MAX_DELAY_SECS } from '../../../common/limits';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import { NOTIFY_SOURCE } from '../../core/principal';
import { waitOutRest } from '../../core/schedule-send';
import { enqueue, enqueueAfter } from '../../core/sqs-send';
import { putEvent } from '../events/publish';
import { readAllWatermarks, unreadCount } from '../notifications/feed';
import { isExpired, type NotificationRecord, receiverIdFor } from '../notifications/model';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { type PushMessage, pushQueue } from './messages';
import type { PushContent, PushOutcome } from './provider';
import { type PushRecord, type PushStatus, pushIdFor, pushKey, pushRetentionTtl } from './records';
import { sendPush } from './senders';
import { type DeviceTarget, deviceOf, devicesOf, pruneDevice } from './targets';

/*
 * The push of a notification to each registered device of each recipient, exactly once per notification × device
 * (docs/push-delivery.md, "Exactly once"), with the discipline of webhook deliveries: a push record per (notification,
 * device) claimed by a conditional write before anything is sent, the claim naming the SQS message that holds it
 * and until when its invocation can run; only an expired claim is taken over.
 */

/** Attempts of one push at most: then it fails and its dead letter goes to the DLQ. */
export const MAX_PUSH_ATTEMPTS = 5;
/** Backoff before attempt n + 1 without Retry-After: 5 s × 2^(n-1), jittered, at most SQS's longest delay. */
const BACKOFF_BASE_SECS = 5;
/** Recipients of one message handled at once (each: a Query of devices, a count, a send per device). */
const RECIPIENT_CONCURRENCY = 20;
/** Published (source `notify`) when a provider's answer prunes a device. */
export const DEVICE_PRUNED_EVENT = 'notify.device.pruned';

/**
 * The push is claimed by another receive of this same message (SQS handed it out twice at once) that may still be
 * running: failing brings the message back after the visibility timeout, when the claim is recorded or expired.
 */
export class PushHeldByOtherReceive extends HeldByOtherReceive {
  constructor(pushId: string, until: number) {
    super(
      `push ${pushId} is claimed by another receive until ${new Date(until).toISOString()}; retried later`,
    );
    this.name = 'PushHeldByOtherReceive';
  }
}

/** A push that failed for good in a way an operator must see: its message fails on every receive, into the DLQ. */
export class PushDeadLettered extends Error {
  constructor(message: Extract<PushMessage, { kind: 'dead-letter' }>) {
    super(`push of ${message.notification_id} to device ${message.token_hash} failed: ${message.reason}`);
    this.name = 'PushDeadLettered';
  }
}

/** What became of one message: put back to wait, dropped (its notification expired or gone), or handled. */
type PushMessageOutcome = 'waiting' | 'expired' | 'gone' | 'handled';

/** The push worker's handling of one message. Safe to run any number of times, also twice at once. */
export const handlePushMessage = async (
  message: PushMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<PushMessageOutcome> => {
  if (message.kind === 'dead-letter') throw new PushDeadLettered(message);
  if (await waitOutRest(pushQueue, message, scheduleName, now)) return 'waiting';
  const notification = await loadNotification(message.notification_id);
  if (!notification) return 'gone'; // expired by TTL, pushes and all
  if (message.kind === 'recipients') {
    if (isExpired(notification.expires_at, now)) return 'expired';
    await pushToRecipients(notification, message.recipients, handling);
  } else await retryPush(notification, message, handling);
  return 'handled';
};

const loadNotification = async (id: string): Promise<NotificationRecord | undefined> => {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableName('notifications'), Key: { id }, ConsistentRead: true }),
  );
  return Item as NotificationRecord | undefined;
};

/** Scheduled again, the same wait of the same message is the same schedule (a ConflictException). */
const scheduleName = (message: PushMessage): string =>
  `push-${createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 40)}`;

/**
 * The recipients whose feed item of the notification is still unread now (routing `unread`): its receiver has its
 * unread key and no read-all covers that key. A recipient with no feed item (in-app turned off in its preferences)
 * has nothing that shows it was read: the fallback push goes. One whose preferences now turn push off gets none.
 */
const stillUnread = async (
  notification: NotificationRecord,
  recipients: readonly string[],
): Promise<Set<string>> => {
  const keys = recipients.map((userId) => ({
    user_id: userId,
    receiver_id: receiverIdFor(notification.id, userId, notification.deliver_at),
  }));
  const [receivers, watermarks, preferences] = await Promise.all([
    batchGetAll(tableName('receivers'), keys, { projection: 'user_id, unread_key', consistent: true }),
    readAllWatermarks(recipients),
    preferencesOf(recipients),
  ]);
  // After a wait of up to a week, the preferences of now decide, as at the delivery (a topic's mute was applied then).
  const unread = new Set(
    recipients.filter((userId) => channelsFor(notification, preferences.get(userId)).includes('push')),
  );
  for (const receiver of receivers) {
    const userId = receiver.user_id as string;
    if (!unread.has(userId)) continue;
    unread.delete(userId);
    const unreadKey = receiver.unread_key as string | undefined;
    const watermark = watermarks.get(userId);
    if (unreadKey !== undefined && (watermark === undefined || unreadKey > watermark)) unread.add(userId);
  }
  return unread;
};

/** The APNs badge (and Expo's, which it passes on to iOS): the recipient's unread count, read once per recipient. */
const needsBadge = (device: DeviceTarget): boolean =>
  device.target.provider === 'apns' || device.target.provider === 'expo';

/**
 * The first attempt of each recipient's pushes. Every recipient is attempted; the first failure is thrown after the
 * others finished (a live claim of another receive first: it is logged as a warning, not an error).
 */
const pushToRecipients = async (
  notification: NotificationRecord,
  recipients: readonly string[],
  handling: MessageHandling,
): Promise<void> => {
  const unread =
    notification.push?.when === 'unread' ? await stillUnread(notification, recipients) : undefined;
  const failures: unknown[] = [];
  await forEachLimited([...new Set(recipients)], RECIPIENT_CONCURRENCY, async (userId) => {
    try {
      if (unread && !unread.has(userId)) return;
      const devices = await devicesOf(userId);
      if (devices.length === 0) return;
      const badge = devices.some(needsBadge) ? await unreadCount(userId) : null;
      const outcomes = await Promise.allSettled(
        devices.map((device) => firstAttempt(notification, device, badge, handling)),
      );
      for (const outcome of outcomes) if (outcome.status === 'rejected') failures.push(outcome.reason);
    } catch (error) {
      failures.push(error);
    }
  });
  const held = failures.find((error) => error instanceof HeldByOtherReceive);
  if (held || failures.length > 0) throw held ?? failures[0];
};

/** The claim a receive writes on a push record: who holds it, and until when its invocation can run. */
const claimOf = (handling: MessageHandling) => ({
  claimed_by: handling.messageId,
  claim_expires_at: holdExpiry(handling).getTime(),
});

const firstAttempt = async (
  notification: NotificationRecord,
  device: DeviceTarget,
  badge: number | null,
  handling: MessageHandling,
): Promise<void> => {
  const key = pushKey(notification.id, device.user_id, device.token_hash);
  const now = new Date().toISOString();
  const record: PushRecord = {
    ...key,
    push_id: pushIdFor(notification.id, device.token_hash),
    user_id: device.user_id,
    token_hash: device.token_hash,
    provider: device.target.provider,
    app_id: device.target.app_id,
    status: 'sending',
    attempts: 1,
    ...claimOf(handling),
    created_at: now,
    updated_at: now,
    ttl: pushRetentionTtl(),
  };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('pushes'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(device)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    const existing = unmarshall(error.Item) as PushRecord;
    const attempt = await resume(existing, handling);
    if (attempt === undefined) return;
    await sendAttempt(notification, device, attempt, badge, handling);
    return;
  }
  await sendAttempt(notification, device, 1, badge, handling);
};

/**
 * A push found already recorded: the attempt this receive now holds (an expired claim taken over), or undefined when
 * there is nothing for it to send: done, owned by a live holder or a queued attempt. A receive of the message that
 * recorded a retry or a dead letter queues that message again, as it may have stopped before doing so.
 */
const resume = async (existing: PushRecord, handling: MessageHandling): Promise<number | undefined> => {
  const mine = existing.claimed_by === handling.messageId;
  if (existing.status === 'retrying' && mine) {
    await queueNextAttempt(existing);
    return undefined;
  }
  if (existing.status === 'failed' && existing.dead_letter && !existing.dead_letter_queued && mine) {
    await queueDeadLetter(existing, existing.reason ?? 'failed');
    return undefined;
  }
  if (existing.status !== 'sending') return undefined;
  const until = existing.claim_expires_at ?? 0;
  if (until > Date.now()) {
    if (mine) throw new PushHeldByOtherReceive(existing.push_id, until);
    return undefined; // another message holds it and is not acknowledged before it records an outcome
  }
  const taken = await updatePush(existing, {
    set: { ...claimOf(handling), updated_at: new Date().toISOString() },
    condition: '#status = :sending AND attempts = :attempts AND claim_expires_at = :until',
    values: { ':sending': 'sending', ':attempts': existing.attempts, ':until': until },
  });
  return taken ? existing.attempts : undefined;
};

/** Attempt n ≥ 2 of one push, after a `retry` answer: claimed from `retrying` at n − 1 (or an expired claim of n). */
const retryPush = async (
  notification: NotificationRecord,
  message: Extract<PushMessage, { kind: 'attempt' }>,
  handling: MessageHandling,
): Promise<void> => {
  const key = pushKey(notification.id, message.user_id, message.token_hash);
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableName('pushes'), Key: key, ConsistentRead: true }),
  );
  const current = Item as PushRecord | undefined;
  if (!current) return;
  if (current.status === 'sending' && current.attempts === message.attempt - 1) {
    // The attempt before is still being recorded (it queued this one first): look again later.
    throw new PushHeldByOtherReceive(current.push_id, current.claim_expires_at ?? Date.now());
  }
  let attempt: number | undefined;
  if (current.status === 'retrying' && current.attempts === message.attempt - 1) {
    const claimed = await updatePush(current, {
      set: {
        status: 'sending',
        attempts: message.attempt,
        ...claimOf(handling),
        updated_at: new Date().toISOString(),
      },
      condition: '#status = :retrying AND attempts = :previous',
      values: { ':retrying': 'retrying', ':previous': message.attempt - 1 },
    });
    attempt = claimed ? message.attempt : undefined;
  } else if (current.attempts === message.attempt) {
    attempt = await resume(current, handling);
  }
  if (attempt === undefined) return;
  const holding = { ...current, attempts: attempt, claimed_by: handling.messageId };
  if (isExpired(notification.expires_at)) {
    await finish(holding, 'failed', { reason: 'expired before it could be sent' });
    return;
  }
  const device = await deviceOf(message.user_id, message.token_hash);
  if (!device) {
    await finish(holding, 'failed', { reason: 'the device is no longer registered' });
    return;
  }
  const badge = needsBadge(device) ? await unreadCount(device.user_id) : null;
  await sendAttempt(notification, device, attempt, badge, handling);
};

const contentOf = (notification: NotificationRecord, pushId: string, badge: number | null): PushContent => ({
  push_id: pushId,
  notification_id: notification.id,
  event_type: notification.event_type,
  title: notification.title,
  body: notification.body,
  data: notification.data,
  priority: notification.priority,
  expires_at: notification.expires_at,
  collapse_key: notification.push?.collapse_key ?? null,
  badge,
  silent: notification.push?.silent ?? false,
});

/** Backoff before attempt `attempt + 1`: exponential with full jitter in its upper half. */
export const backoffSecs = (attempt: number, random: () => number = Math.random): number => {
  const base = Math.min(SQS_MAX_DELAY_SECS, BACKOFF_BASE_SECS * 2 ** (attempt - 1));
  return base * (0.5 + 0.5 * random());
};

/** Sends the attempt this receive holds, then records its outcome and does what follows from it. */
const sendAttempt = async (
  notification: NotificationRecord,
  device: DeviceTarget,
  attempt: number,
  badge: number | null,
  handling: MessageHandling,
): Promise<void> => {
  const { target } = device;
  const pushId = pushIdFor(notification.id, device.token_hash);
  const holding: PushRecord = {
    ...pushKey(notification.id, device.user_id, device.token_hash),
    push_id: pushId,
    user_id: device.user_id,
    token_hash: device.token_hash,
    provider: target.provider,
    app_id: target.app_id,
    status: 'sending',
    attempts: attempt,
    claimed_by: handling.messageId,
    created_at: '',
    updated_at: '',
    ttl: 0,
  };
  const outcome = await sendPush(target, contentOf(notification, pushId, badge));
  const about = {
    notification_id: notification.id,
    push_id: pushId,
    user_id: device.user_id,
    provider: target.provider,
    attempt,
    outcome: outcome.kind,
  };
  switch (outcome.kind) {
    case 'delivered':
      await finish(holding, 'delivered', outcome.provider_id ? { provider_id: outcome.provider_id } : {});
      logger.info('push delivered', about);
      return;
    case 'retry': {
      if (attempt >= MAX_PUSH_ATTEMPTS) {
        const reason = `gave up after ${attempt} attempts: ${outcome.reason}`;
        logger.error('push failed', { ...about, reason });
        await deadLetter(holding, reason);
        return;
      }
      const delaySecs = Math.max(outcome.retry_after_secs ?? 0, backoffSecs(attempt));
      const nextAt = new Date(Date.now() + delaySecs * 1000).toISOString();
      await finish(holding, 'retrying', { reason: outcome.reason, next_attempt_at: nextAt });
      logger.warn('push to be retried', { ...about, reason: outcome.reason, next_attempt_at: nextAt });
      await queueNextAttempt({ ...holding, next_attempt_at: nextAt });
      return;
    }
    case 'gone':
      await prune(notification, device, holding, outcome);
      return;
    case 'credentials':
      logger.error('push credentials refused', { ...about, app_id: target.app_id, reason: outcome.reason });
      await deadLetter(holding, `credentials refused: ${outcome.reason}`);
      return;
    case 'rejected':
      logger.warn('push rejected', { ...about, reason: outcome.reason });
      await finish(holding, 'failed', { reason: outcome.reason });
      return;
  }
};

/**
 * A token the provider calls dead: the device is deleted (an APNs 410 only for a registration older than its
 * timestamp: a token registered again since is alive), the pruning logged and published on the bus as
 * `notify.device.pruned` under the push's id (published again after a crash, it is the same event to webhooks).
 */
const prune = async (
  notification: NotificationRecord,
  device: DeviceTarget,
  holding: PushRecord,
  outcome: Extract<PushOutcome, { kind: 'gone' }>,
): Promise<void> => {
  const { target } = device;
  if (
    target.provider === 'apns' &&
    outcome.gone_at !== undefined &&
    Date.parse(target.registered_at) >= Date.parse(outcome.gone_at)
  ) {
    await finish(holding, 'failed', {
      reason: `${outcome.reason} (the token was registered again since ${outcome.gone_at}: kept)`,
    });
    return;
  }
  // Deleted first, announced only if this deleted it: a registration made since the device was read is kept, and
  // a webhook told of a pruning may drop the token. (A crash between the two loses the announcement, never a device.)
  const deleted = await pruneDevice(device);
  if (!deleted) {
    await finish(holding, 'failed', {
      reason: `${outcome.reason} (registered again meanwhile, or removed: kept)`,
    });
    return;
  }
  await putEvent(NOTIFY_SOURCE, DEVICE_PRUNED_EVENT, {
    id: holding.push_id,
    version: 1,
    priority: 'normal',
    archive: false,
    data: {
      user_id: device.user_id,
      token: target.token,
      provider: target.provider,
      app_id: target.app_id,
      registered_at: target.registered_at,
      reason: outcome.reason,
      notification_id: notification.id,
      push_id: holding.push_id,
    },
  });
  await finish(holding, 'pruned', { reason: outcome.reason });
  logger.info('device pruned', {
    notification_id: notification.id,
    push_id: holding.push_id,
    user_id: device.user_id,
    provider: target.provider,
    reason: outcome.reason,
  });
};

/** Records the final failure, then queues its dead letter (queued again by a redelivery that finds it recorded). */
const deadLetter = async (holding: PushRecord, reason: string): Promise<void> => {
  await finish(holding, 'failed', { reason, dead_letter: true });
  await queueDeadLetter(holding, reason);
};

/**
 * Queues the dead letter, then notes it on the record: a redelivery of the message that failed the push queues it
 * only when the note is missing (a crash between the two queues it twice, the one duplicate left).
 */
const queueDeadLetter = async (record: PushRecord, reason: string): Promise<void> => {
  await enqueue(pushQueue, [
    {
      kind: 'dead-letter',
      notification_id: record.notification_id,
      user_id: record.user_id,
      token_hash: record.token_hash,
      reason,
    },
  ]);
  await updatePush(record, {
    set: { dead_letter_queued: true },
    condition: '#status = :failed',
    values: { ':failed': 'failed' },
  });
};

/** The attempt after a recorded retry, due at its `next_attempt_at`. */
const queueNextAttempt = (record: PushRecord): Promise<void> => {
  const dueAt = record.next_attempt_at ? Date.parse(record.next_attempt_at) : Date.now();
  const message: PushMessage = {
    kind: 'attempt',
    notification_id: record.notification_id,
    user_id: record.user_id,
    token_hash: record.token_hash,
    attempt: record.attempts + 1,
  };
  return enqueueAfter(pushQueue, [message], Math.max(0, (dueAt - Date.now()) / 1000));
};

/** The outcome of the attempt this receive holds; the claim stays as its author (a redelivery finds its own). */
const finish = async (
  holding: PushRecord,
  status: Exclude<PushStatus, 'sending'>,
  fields: { provider_id?: string; reason?: string; next_attempt_at?: string; dead_letter?: boolean },
): Promise<void> => {
  const recorded = await updatePush(holding, {
    set: { status, updated_at: new Date().toISOString(), ...fields },
    remove: ['claim_expires_at', ...(fields.next_attempt_at ? [] : ['next_attempt_at'])],
    condition: '#status = :sending AND attempts = :attempts AND claimed_by = :holder',
    values: { ':sending': 'sending', ':attempts': holding.attempts, ':holder': holding.claimed_by },
  });
  if (!recorded) {
    logger.warn('push outcome not recorded: the claim was taken over', {
      push_id: holding.push_id,
      attempt: holding.attempts,
      status,
    });
  }
};

/** A conditional update of a push record; false when the condition does not hold (someone else moved it on). */
const updatePush = async (
  record: Pick<PushRecord, 'notification_id' | 'device'>,
  update: {
    readonly set: Record<string, unknown>;
    readonly remove?: readonly string[];
    readonly condition: string;
    readonly values: Record<string, unknown>;
  },
): Promise<boolean> => {
  const names: Record<string, string> = { '#status': 'status' };
  const values: Record<string, unknown> = { ...update.values };
  const assignments = Object.entries(update.set).map(([field, value], index) => {
    names[`#f${index}`] = field;
    values[`:f${index}`] = value;
    return `#f${index} = :f${index}`;
  });
  const removals = (update.remove ?? []).filter((field) => !(field in update.set));
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('pushes'),
        Key: { notification_id: record.notification_id, device: record.device },
        UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}`,
        ConditionExpression: update.condition,
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};
