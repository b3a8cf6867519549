import { createHash, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { SQS_MAX_DELAY_SECS } from '../../../common/limits';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import { NOTIFY_SOURCE } from '../../core/principal';
import { waitOutRest } from '../../core/schedule-send';
import { enqueue, enqueueAfter } from '../../core/sqs-send';
import { putEvent } from '../events/publish';
import { runStep } from '../notifications/fallback';
import { unreadCount } from '../notifications/feed';
import { isExpired, type NotificationRecord } from '../notifications/model';
import { readNotification } from '../notifications/notification-store';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { pushContentFor } from './content';
import { type PushMessage, pushQueue } from './messages';
import type { PushOutcome } from './provider';
import {
  type DevicePush,
  type PendingPrune,
  pushIdFor,
  pushRecordKey,
  pushRetentionTtl,
  type RecipientPushes,
} from './records';
import { sendPush } from './senders';
import { type DeviceTarget, deviceOf, devicesOf, pruneDevice } from './targets';

/*
 * The push of a notification to each registered device of each recipient, exactly once per notification × device
 * (docs/push-delivery.md, "Exactly once"), with the discipline of webhook deliveries: a push record per
 * (notification, recipient) claimed by a conditional write before anything is sent, the claim naming the message
 * that holds it (the SQS message id, or the request id of the asynchronous invocation that handed it over) and until
 * when its invocation can run; only an expired claim is taken over. The first attempts to
 * all of a recipient's devices are claimed by one write and recorded by one more; a later attempt claims and records
 * its device's entry of the record.
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

/**
 * What became of one message: put back to wait, dropped (its notification expired or gone, or a copy of a dead
 * letter), or handled.
 */
type PushMessageOutcome = 'waiting' | 'expired' | 'gone' | 'copy' | 'handled';

/** The push worker's handling of one message. Safe to run any number of times, also twice at once. */
export const handlePushMessage = async (
  message: PushMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<PushMessageOutcome> => {
  if (message.kind === 'dead-letter') return deadLetter(message);
  if (await waitOutRest(pushQueue, message, scheduleName, now)) return 'waiting';
  const notification = await readNotification(message.notification_id, 'eventual-then-strong');
  if (!notification) return 'gone'; // expired by TTL, pushes and all
  if (message.kind === 'recipients') {
    if (isExpired(notification.expires_at, now)) return 'expired';
    const { delivered_at: deliveredAt, topic } = message;
    // `push.when: unread` is always a step; a message without one for it was queued before steps existed.
    const step = message.step ?? (notification.push?.when === 'unread' ? 0 : undefined);
    // A fallback step: pushed to the recipients it still goes to (fallback.ts, `runStep`).
    const recipients =
      step === undefined
        ? message.recipients
        : await runStep(
            notification,
            message.recipients,
            { step, delivered_at: deliveredAt ?? now, topic },
            now,
          );
    await pushToRecipients(notification, recipients, handling);
  } else await retryPush(notification, message, handling);
  return 'handled';
};

/**
 * A dead letter fails on every receive, into the DLQ. Copies of the message that failed the push (SQS's, Lambda's)
 * run at once may each queue one; the record names the one that stands, and a letter it does not name is a copy,
 * dropped. Until the record names one, every letter fails: it comes back after the visibility timeout and asks again.
 */
const deadLetter = async (
  message: Extract<PushMessage, { kind: 'dead-letter' }>,
): Promise<PushMessageOutcome> => {
  if (message.dead_letter_id !== undefined) {
    const { Item } = await documentClient().send(
      new GetCommand({
        TableName: tableName('pushes'),
        Key: pushRecordKey(message.notification_id, message.user_id),
        ConsistentRead: true,
      }),
    );
    const standing = (Item as RecipientPushes | undefined)?.devices[message.token_hash]?.dead_letter_id;
    if (standing !== undefined && standing !== message.dead_letter_id) {
      logger.info('dead letter dropped: a copy of the one queued', {
        notification_id: message.notification_id,
        push_id: pushIdFor(message.notification_id, message.token_hash),
      });
      return 'copy';
    }
  }
  throw new PushDeadLettered(message);
};

/** Scheduled again, the same wait of the same message is the same schedule (a ConflictException). */
const scheduleName = (message: PushMessage): string =>
  `push-${createHash('sha256').update(JSON.stringify(message)).digest('hex').slice(0, 40)}`;

/** The APNs badge (and Expo's, which it passes on to iOS): the recipient's unread count, read once per recipient. */
const needsBadge = (device: DeviceTarget): boolean =>
  device.target.provider === 'apns' || device.target.provider === 'expo';

const badgeFor = async (devices: readonly DeviceTarget[]): Promise<number | null> => {
  const first = devices.find(needsBadge);
  return first ? unreadCount(first.user_id) : null;
};

/**
 * The first attempt of each recipient's pushes. Every recipient is attempted; the first failure is thrown after the
 * others finished (a live claim of another receive first: it is logged as a warning, not an error).
 */
const pushToRecipients = async (
  notification: NotificationRecord,
  recipients: readonly string[],
  handling: MessageHandling,
): Promise<void> => {
  const failures: unknown[] = [];
  await forEachLimited([...new Set(recipients)], RECIPIENT_CONCURRENCY, async (userId) => {
    try {
      await pushToRecipient(notification, userId, handling);
    } catch (error) {
      failures.push(error);
    }
  });
  const held = failures.find((error) => error instanceof HeldByOtherReceive);
  if (held || failures.length > 0) throw held ?? failures[0];
};

/** The first attempts this receive holds: to these devices, under the record's claim until `until`. */
interface Round {
  readonly userId: string;
  readonly until: number;
  readonly targets: readonly DeviceTarget[];
  /** Entries of the record whose device is no longer registered when a dead holder's round was taken over. */
  readonly unregistered: Readonly<Record<string, DevicePush>>;
}

const pushToRecipient = async (
  notification: NotificationRecord,
  userId: string,
  handling: MessageHandling,
): Promise<void> => {
  const devices = await devicesOf(userId);
  if (devices.length === 0) {
    // A message back after a failure may have left follow-ups in its record, its only device since pruned by it.
    // Lambda's retries of an invoked message do not say they are retries: each invocation looks.
    if (handling.redeliveredBy === 'lambda' || handling.receive !== '1') {
      const { Item } = await documentClient().send(
        new GetCommand({
          TableName: tableName('pushes'),
          Key: pushRecordKey(notification.id, userId),
          ConsistentRead: true,
        }),
      );
      const round = Item ? await resumeRecipient(Item as RecipientPushes, devices, handling) : undefined;
      if (round) await sendRound(notification, round, handling);
    }
    return;
  }
  const now = new Date().toISOString();
  const until = holdExpiry(handling).getTime();
  const record: RecipientPushes = {
    ...pushRecordKey(notification.id, userId),
    user_id: userId,
    devices: Object.fromEntries(
      devices.map((device): [string, DevicePush] => [
        device.token_hash,
        {
          provider: device.target.provider,
          app_id: device.target.app_id,
          status: 'sending',
          attempts: 1,
          claimed_by: handling.messageId,
          updated_at: now,
        },
      ]),
    ),
    claimed_by: handling.messageId,
    claim_expires_at: until,
    created_at: now,
    updated_at: now,
    ttl: pushRetentionTtl(),
  };
  let round: Round | undefined = { userId, until, targets: devices, unregistered: {} };
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('pushes'),
        Item: record,
        ConditionExpression: 'attribute_not_exists(record_key)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException) || !error.Item) throw error;
    round = await resumeRecipient(unmarshall(error.Item) as RecipientPushes, devices, handling);
  }
  if (round) await sendRound(notification, round, handling);
};

/**
 * A recipient's pushes found already claimed: the round of first attempts this receive now holds (a dead holder's,
 * taken over once its claim expired), or undefined when there is nothing for it to send. What follows from the
 * outcomes this message recorded (a retry queued, a dead letter, a prune) is done again, as it may have stopped
 * before doing it.
 */
const resumeRecipient = async (
  existing: RecipientPushes,
  devices: readonly DeviceTarget[],
  handling: MessageHandling,
): Promise<Round | undefined> => {
  const until = existing.claim_expires_at;
  const mine = existing.claimed_by === handling.messageId;
  if (until !== undefined && until > Date.now() && mine) {
    throw new PushHeldByOtherReceive(`${existing.notification_id} to ${existing.user_id}`, until);
  }
  for (const [tokenHash, push] of Object.entries(existing.devices)) {
    if (push.claimed_by === handling.messageId) await followUp(existing, tokenHash, push);
  }
  // Recorded, or held by another message, which is not acknowledged before it records the outcomes.
  if (until === undefined || until > Date.now()) return undefined;
  const pending = Object.entries(existing.devices)
    .filter(([, push]) => push.status === 'sending' && push.attempts === 1)
    .map(([tokenHash]) => tokenHash);
  const newUntil = holdExpiry(handling).getTime();
  const taken = await updateRecord(existing, {
    set: { claimed_by: handling.messageId, claim_expires_at: newUntil },
    entries: {},
    condition: 'claimed_by = :holder AND claim_expires_at = :until',
    values: { ':holder': existing.claimed_by, ':until': until },
  });
  if (!taken) return undefined;
  const registered = new Set(devices.map((device) => device.token_hash));
  return {
    userId: existing.user_id,
    until: newUntil,
    targets: devices.filter((device) => pending.includes(device.token_hash)),
    unregistered: Object.fromEntries(
      pending
        .filter((tokenHash) => !registered.has(tokenHash))
        .map((tokenHash) => [tokenHash, existing.devices[tokenHash] as DevicePush]),
    ),
  };
};

/**
 * Sends the round's first attempts side by side, then records every answer with one write (conditional on the
 * round's claim) and does what follows from each. A send that threw (credentials unreadable for now) leaves its
 * device `sending` and the claim in place: the message comes back and takes the rest over once the claim expired.
 */
const sendRound = async (
  notification: NotificationRecord,
  round: Round,
  handling: MessageHandling,
): Promise<void> => {
  const badge = await badgeFor(round.targets);
  const answers = await Promise.allSettled(
    round.targets.map((device) => sendPush(device.target, pushContentFor(notification, device, badge))),
  );
  const now = new Date().toISOString();
  const entries: Record<string, DevicePush> = {};
  const failures: unknown[] = [];
  for (const [index, answer] of answers.entries()) {
    const device = round.targets[index] as DeviceTarget;
    if (answer.status === 'rejected') failures.push(answer.reason);
    else entries[device.token_hash] = entryFor(device, 1, answer.value, handling, now);
  }
  for (const [tokenHash, push] of Object.entries(round.unregistered)) {
    entries[tokenHash] = unsent(push, 1, handling, 'the device is no longer registered');
  }
  const recorded = await updateRecord(pushRecordKey(notification.id, round.userId), {
    set: {},
    entries,
    replace: true,
    remove: failures.length === 0 ? ['claim_expires_at'] : [],
    condition: 'claimed_by = :holder AND claim_expires_at = :until',
    values: { ':holder': handling.messageId, ':until': round.until },
  });
  if (!recorded) {
    logger.warn('push outcomes not recorded: the claim was taken over', {
      notification_id: notification.id,
      user_id: round.userId,
    });
    return;
  }
  const recipient = { notification_id: notification.id, user_id: round.userId };
  for (const [tokenHash, push] of Object.entries(entries)) {
    logOutcome(notification.id, round.userId, tokenHash, push);
    await followUp(recipient, tokenHash, push);
  }
  if (failures.length > 0) throw failures[0];
};

/** The entry of an attempt that could not be sent: failed with `reason`. */
const unsent = (
  push: DevicePush,
  attempt: number,
  handling: MessageHandling,
  reason: string,
): DevicePush => ({
  provider: push.provider,
  app_id: push.app_id,
  status: 'failed',
  attempts: attempt,
  claimed_by: handling.messageId,
  reason,
  updated_at: new Date().toISOString(),
});

/** Attempt n ≥ 2 of one push, after a `retry` answer: claimed from `retrying` at n − 1 (or an expired claim of n). */
const retryPush = async (
  notification: NotificationRecord,
  message: Extract<PushMessage, { kind: 'attempt' }>,
  handling: MessageHandling,
): Promise<void> => {
  const key = pushRecordKey(notification.id, message.user_id);
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableName('pushes'), Key: key, ConsistentRead: true }),
  );
  const record = Item as RecipientPushes | undefined;
  const current = record?.devices[message.token_hash];
  if (!record || !current) return;
  if (current.status === 'sending' && current.attempts === message.attempt - 1) {
    // The attempt before is still being recorded (it queued this one first): look again later.
    throw new PushHeldByOtherReceive(
      pushIdFor(notification.id, message.token_hash),
      current.claim_expires_at ?? record.claim_expires_at ?? Date.now(),
    );
  }
  let attempt: number | undefined;
  const until = holdExpiry(handling).getTime();
  if (current.status === 'retrying' && current.attempts === message.attempt - 1) {
    const claimed = await updateRecord(key, {
      set: {},
      entries: {
        [message.token_hash]: {
          status: 'sending',
          attempts: message.attempt,
          claimed_by: handling.messageId,
          claim_expires_at: until,
          updated_at: new Date().toISOString(),
        },
      },
      condition: 'devices.#d0.#status = :retrying AND devices.#d0.attempts = :previous',
      values: { ':retrying': 'retrying', ':previous': message.attempt - 1 },
    });
    attempt = claimed ? message.attempt : undefined;
  } else if (current.attempts === message.attempt) {
    attempt = await resumeDevice(record, message.token_hash, current, handling, until);
  }
  if (attempt === undefined) return;
  const holding = { record, tokenHash: message.token_hash, attempt, handling };
  if (isExpired(notification.expires_at)) {
    await recordAttempt(holding, unsent(current, attempt, handling, 'expired before it could be sent'));
    return;
  }
  // A retry may come minutes after the delivery: the preferences of now decide whether it still goes out.
  const preferences = await preferencesOf([message.user_id]);
  if (!channelsFor(notification, preferences.get(message.user_id)).includes('push')) {
    const reason = 'push turned off by the recipient before this attempt';
    await recordAttempt(holding, unsent(current, attempt, handling, reason));
    return;
  }
  const device = await deviceOf(message.user_id, message.token_hash);
  if (!device) {
    await recordAttempt(holding, unsent(current, attempt, handling, 'the device is no longer registered'));
    return;
  }
  const badge = await badgeFor([device]);
  const outcome = await sendPush(device.target, pushContentFor(notification, device, badge));
  const entry = entryFor(device, attempt, outcome, handling, new Date().toISOString());
  if (!(await recordAttempt(holding, entry))) return;
  logOutcome(notification.id, message.user_id, message.token_hash, entry);
  await followUp(record, message.token_hash, entry);
};

/**
 * A later attempt found already claimed: the attempt this receive now holds (an expired claim taken over), or
 * undefined when there is nothing for it to send. The message that recorded its outcome does what follows from it
 * again, as it may have stopped before.
 */
const resumeDevice = async (
  record: RecipientPushes,
  tokenHash: string,
  current: DevicePush,
  handling: MessageHandling,
  newUntil: number,
): Promise<number | undefined> => {
  const mine = current.claimed_by === handling.messageId;
  if (current.status !== 'sending') {
    if (mine) await followUp(record, tokenHash, current);
    return undefined;
  }
  const until = current.claim_expires_at ?? 0;
  if (until > Date.now()) {
    if (mine) throw new PushHeldByOtherReceive(pushIdFor(record.notification_id, tokenHash), until);
    return undefined;
  }
  const taken = await updateRecord(record, {
    set: {},
    entries: { [tokenHash]: { claimed_by: handling.messageId, claim_expires_at: newUntil } },
    condition:
      'devices.#d0.#status = :sending AND devices.#d0.attempts = :attempts AND devices.#d0.claim_expires_at = :until',
    values: { ':sending': 'sending', ':attempts': current.attempts, ':until': until },
  });
  return taken ? current.attempts : undefined;
};

/** Records the outcome of a later attempt this receive holds; false when its claim was taken over meanwhile. */
const recordAttempt = async (
  holding: {
    readonly record: Pick<RecipientPushes, 'notification_id' | 'record_key'>;
    readonly tokenHash: string;
    readonly attempt: number;
    readonly handling: MessageHandling;
  },
  entry: DevicePush,
): Promise<boolean> => {
  const recorded = await updateRecord(holding.record, {
    set: {},
    entries: { [holding.tokenHash]: entry },
    replace: true,
    condition:
      'devices.#d0.#status = :sending AND devices.#d0.attempts = :attempts AND devices.#d0.claimed_by = :holder',
    values: { ':sending': 'sending', ':attempts': holding.attempt, ':holder': holding.handling.messageId },
  });
  if (!recorded) {
    logger.warn('push outcome not recorded: the claim was taken over', {
      notification_id: holding.record.notification_id,
      push_id: pushIdFor(holding.record.notification_id, holding.tokenHash),
      attempt: holding.attempt,
    });
  }
  return recorded;
};

/** Backoff before attempt `attempt + 1`: exponential with full jitter in its upper half. */
export const backoffSecs = (attempt: number, random: () => number = Math.random): number => {
  const base = Math.min(SQS_MAX_DELAY_SECS, BACKOFF_BASE_SECS * 2 ** (attempt - 1));
  return base * (0.5 + 0.5 * random());
};

/** What a provider's answer to attempt `attempt` makes of the device's entry (docs/push-delivery.md, "Outcomes"). */
const entryFor = (
  device: DeviceTarget,
  attempt: number,
  outcome: PushOutcome,
  handling: MessageHandling,
  now: string,
): DevicePush => {
  const { target } = device;
  const base = {
    provider: target.provider,
    app_id: target.app_id,
    attempts: attempt,
    claimed_by: handling.messageId,
    updated_at: now,
  };
  switch (outcome.kind) {
    case 'delivered':
      return {
        ...base,
        status: 'delivered',
        ...(outcome.provider_id ? { provider_id: outcome.provider_id } : {}),
      };
    case 'retry': {
      if (attempt >= MAX_PUSH_ATTEMPTS) {
        const reason = `gave up after ${attempt} attempts: ${outcome.reason}`;
        return { ...base, status: 'failed', reason, dead_letter: true };
      }
      const delaySecs = Math.max(outcome.retry_after_secs ?? 0, backoffSecs(attempt));
      const nextAt = new Date(Date.parse(now) + delaySecs * 1000).toISOString();
      return { ...base, status: 'retrying', reason: outcome.reason, next_attempt_at: nextAt };
    }
    case 'gone':
      // An APNs 410 prunes only a registration older than its timestamp: a token registered again since is alive.
      if (
        target.provider === 'apns' &&
        outcome.gone_at !== undefined &&
        Date.parse(target.registered_at) >= Date.parse(outcome.gone_at)
      ) {
        const reason = `${outcome.reason} (the token was registered again since ${outcome.gone_at}: kept)`;
        return { ...base, status: 'failed', reason };
      }
      return {
        ...base,
        status: 'pruned',
        reason: outcome.reason,
        prune: { reason: outcome.reason, token: target.token, registered_at: target.registered_at },
      };
    case 'credentials':
      return {
        ...base,
        status: 'failed',
        reason: `credentials refused: ${outcome.reason}`,
        dead_letter: true,
      };
    case 'rejected':
      return { ...base, status: 'failed', reason: outcome.reason };
  }
};

const logOutcome = (notificationId: string, userId: string, tokenHash: string, push: DevicePush): void => {
  const about = {
    notification_id: notificationId,
    push_id: pushIdFor(notificationId, tokenHash),
    user_id: userId,
    provider: push.provider,
    app_id: push.app_id,
    attempt: push.attempts,
    status: push.status,
    ...(push.reason ? { reason: push.reason } : {}),
  };
  if (push.status === 'delivered') logger.info('push delivered', about);
  else if (push.status === 'retrying')
    logger.warn('push to be retried', { ...about, next_attempt_at: push.next_attempt_at });
  else if (push.dead_letter) logger.error('push failed', about);
  else if (push.status === 'failed') logger.warn('push rejected', about);
};

type RecordRef = Pick<RecipientPushes, 'notification_id' | 'user_id'>;

/**
 * What follows from a recorded outcome: the next attempt queued, the dead letter queued, the device pruned. Each is
 * safe to do again, so the message that recorded the outcome does it again when it comes back.
 */
const followUp = async (record: RecordRef, tokenHash: string, push: DevicePush): Promise<void> => {
  if (push.prune) await completePrune(record, tokenHash, push, push.prune);
  else if (push.status === 'retrying') await queueNextAttempt(record, tokenHash, push);
  else if (push.status === 'failed' && push.dead_letter && !push.dead_letter_queued) {
    await queueDeadLetter(record, tokenHash, push.reason ?? 'failed');
  }
};

/**
 * A token the provider called dead, recorded with its pending prune: the registration pushed to is deleted and the
 * pruning published on the bus as `notify.device.pruned` under the push's id (published again after a crash, it is
 * the same event to webhooks), then the entry recorded `pruned`. Done again until recorded, so a crash between any
 * two steps loses neither the deletion nor the announcement. A token registered again since (by anyone) is kept and
 * not announced: the entry records `failed`.
 */
const completePrune = async (
  record: RecordRef,
  tokenHash: string,
  push: DevicePush,
  prune: PendingPrune,
): Promise<void> => {
  const pushId = pushIdFor(record.notification_id, tokenHash);
  const pruned = await pruneDevice({
    user_id: record.user_id,
    token_hash: tokenHash,
    registration: prune.registered_at,
  });
  const { prune: _done, ...rest } = push;
  const now = new Date().toISOString();
  let entry: DevicePush;
  if (pruned === 'kept') {
    entry = {
      ...rest,
      status: 'failed',
      reason: `${prune.reason} (registered again meanwhile: kept)`,
      updated_at: now,
    };
  } else {
    await putEvent(NOTIFY_SOURCE, DEVICE_PRUNED_EVENT, {
      id: pushId,
      version: 1,
      priority: 'normal',
      archive: false,
      data: {
        user_id: record.user_id,
        token: prune.token,
        provider: push.provider,
        app_id: push.app_id,
        registered_at: prune.registered_at,
        reason: prune.reason,
        notification_id: record.notification_id,
        push_id: pushId,
      },
    });
    entry = { ...rest, status: 'pruned', updated_at: now };
  }
  await updateRecord(pushRecordKey(record.notification_id, record.user_id), {
    set: {},
    entries: { [tokenHash]: entry },
    replace: true,
    condition: 'attribute_exists(devices.#d0.prune) AND devices.#d0.claimed_by = :holder',
    values: { ':holder': push.claimed_by },
  });
  const about = { notification_id: record.notification_id, push_id: pushId, user_id: record.user_id };
  if (pruned === 'kept')
    logger.warn('dead token registered again meanwhile: kept', { ...about, reason: prune.reason });
  else logger.info('device pruned', { ...about, provider: push.provider, reason: prune.reason });
};

/**
 * Queues the dead letter, then notes its id on the entry: a redelivery of the message that failed the push queues
 * one only when the note is missing. Letters queued twice (a crash between the two steps, or two copies of the
 * message at once) leave one in the DLQ: the first noted stands, the others are dropped when they arrive.
 */
const queueDeadLetter = async (record: RecordRef, tokenHash: string, reason: string): Promise<void> => {
  const deadLetterId = randomUUID();
  await enqueue(pushQueue, [
    {
      kind: 'dead-letter',
      notification_id: record.notification_id,
      user_id: record.user_id,
      token_hash: tokenHash,
      reason,
      dead_letter_id: deadLetterId,
    },
  ]);
  await updateRecord(pushRecordKey(record.notification_id, record.user_id), {
    set: {},
    entries: { [tokenHash]: { dead_letter_queued: true, dead_letter_id: deadLetterId } },
    condition: 'devices.#d0.#status = :failed AND attribute_not_exists(devices.#d0.dead_letter_id)',
    values: { ':failed': 'failed' },
  });
};

/** The attempt after a recorded retry, due at its `next_attempt_at`. */
const queueNextAttempt = (record: RecordRef, tokenHash: string, push: DevicePush): Promise<void> => {
  const dueAt = push.next_attempt_at ? Date.parse(push.next_attempt_at) : Date.now();
  const message: PushMessage = {
    kind: 'attempt',
    notification_id: record.notification_id,
    user_id: record.user_id,
    token_hash: tokenHash,
    attempt: push.attempts + 1,
  };
  return enqueueAfter(pushQueue, [message], Math.max(0, (dueAt - Date.now()) / 1000));
};

/**
 * A conditional update of a recipient's push record; false when the condition does not hold (someone else moved
 * it on). `entries`: per device (token hash, `#d<n>` in the condition in that order), the fields to set, or with
 * `replace` the whole entry.
 */
const updateRecord = async (
  record: Pick<RecipientPushes, 'notification_id' | 'record_key'>,
  update: {
    readonly set: Record<string, unknown>;
    readonly entries: Record<string, Partial<DevicePush>>;
    readonly replace?: boolean;
    readonly remove?: readonly string[];
    readonly condition: string;
    readonly values: Record<string, unknown>;
  },
): Promise<boolean> => {
  const names: Record<string, string> = update.condition.includes('#status') ? { '#status': 'status' } : {};
  const values: Record<string, unknown> = { ...update.values, ':updated': new Date().toISOString() };
  const assignments = ['updated_at = :updated'];
  let index = 0;
  for (const [field, value] of Object.entries(update.set)) {
    names[`#f${index}`] = field;
    values[`:f${index}`] = value;
    assignments.push(`#f${index} = :f${index}`);
    index += 1;
  }
  for (const [deviceIndex, [tokenHash, entry]] of Object.entries(update.entries).entries()) {
    names[`#d${deviceIndex}`] = tokenHash;
    if (update.replace) {
      values[`:d${deviceIndex}`] = entry;
      assignments.push(`devices.#d${deviceIndex} = :d${deviceIndex}`);
      continue;
    }
    for (const [field, value] of Object.entries(entry)) {
      names[`#f${index}`] = field;
      values[`:f${index}`] = value;
      assignments.push(`devices.#d${deviceIndex}.#f${index} = :f${index}`);
      index += 1;
    }
  }
  const removals = update.remove ?? [];
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('pushes'),
        Key: { notification_id: record.notification_id, record_key: record.record_key },
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
