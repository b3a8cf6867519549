import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { queryOnce } from '../../core/paging';
import { isTimeZone } from '../time-zones';
import {
  type CurrentRecord,
  currentEntry,
  type DigestItem,
  finishClosing,
  joinedEntry,
  KEEP_AFTER_CLOSE_SECS,
  legacyBatchEntry,
  legacyMemberEntry,
  readDigestRecord,
  type WindowRecord,
  windowEntry,
} from './digest-batches';
import type { DigestChoice } from './digest-rules';
import { nextTimeOfDay } from './digest-time';
import { sendOnFanoutAt } from './fanout-schedule';
import type { DigestSpec, NotificationRecord } from './model';

/*
 * Joining a digest batch (docs/digests.md "Exactly once"; the records: digest-batches.ts). A member is one
 * conditional put of its own record under the batch, then one read of the scope's `current#` record: still open
 * with that batch, the close (which marks it closing before it reads the members) will find the member; else the
 * batch's closed member list says whether it got in, and one that did not joins the next batch.
 */

/**
 * How long before its `deliver_at` a notification may have first joined: a scheduled one is delivered up to
 * 500 ms early, and the rest allows for the clocks of two functions disagreeing. A batch the scope had closed by
 * then cannot hold it, so a retried join looks back no further.
 */
const JOIN_HORIZON_MS = 1000;
/** Joins retried on a conflict (another member opening the batch at once) before the message fails and comes back. */
const MAX_JOIN_ATTEMPTS = 20;
/**
 * A batch still open this long after its close time lost its close (a close message taken by a function of the
 * previous release during a deployment, a redriven DLQ never done): a member joining it sends the close again.
 * Longer than a close's own retries take, so a close on its way is not doubled in the normal course.
 */
const OVERDUE_CLOSE_MS = 15 * 60_000;

/**
 * The recipient's time zone for `at` (preferences `time_zone`, an IANA name), else UTC. Read through this one
 * accessor, which asks nothing more of the preferences than the field.
 */
export const timeZoneOf = (preferences: object | undefined): string => {
  const zone = (preferences as { readonly time_zone?: unknown } | undefined)?.time_zone;
  return typeof zone === 'string' && isTimeZone(zone) ? zone : 'UTC';
};

/**
 * When a batch opened at `openedAt` closes: at its fixed close, after its window, or at the next `at` in the
 * recipient's zone.
 */
export const closesAt = (spec: DigestSpec, openedAt: number, timeZone: string): number => {
  if (spec.closes_at !== undefined) return spec.closes_at;
  return spec.window_secs !== undefined
    ? openedAt + spec.window_secs * 1000
    : nextTimeOfDay(openedAt, spec.at ?? '00:00', timeZone);
};

/**
 * The one-time schedule that closes a batch at a time: a retry with the same time finds the one it created; an
 * opener retried after a crash (a later time) makes its own, so it never depends on one that already fired.
 */
const closeScheduleName = (userId: string, scope: string, batchId: string, closes: number): string =>
  `digest-${createHash('sha256').update(`${userId}\n${scope}\n${batchId}\n${closes}`).digest('hex').slice(0, 48)}`;

/** The close of a batch on `fanout` at `closes`. */
const scheduleClose = (userId: string, scope: string, batchId: string, closes: number) =>
  sendOnFanoutAt(closeScheduleName(userId, scope, batchId, closes), closes, {
    kind: 'digest-close',
    user_id: userId,
    scope,
    batch_id: batchId,
  });

const itemOf = (notification: NotificationRecord): DigestItem => ({
  notification_id: notification.id,
  event_type: notification.event_type,
  source: notification.source,
  title: notification.title,
  created_at: notification.created_at,
});

/** Puts the member's record under a batch; false when it is there already (a retried join). */
const putMember = async (
  userId: string,
  scope: string,
  batchId: string,
  closes: number,
  item: DigestItem,
): Promise<boolean> => {
  try {
    await documentClient().send(
      new PutCommand({
        TableName: tableName('digests'),
        Item: memberRecord(userId, scope, batchId, closes, item),
        ConditionExpression: 'attribute_not_exists(user_id)',
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

const memberRecord = (userId: string, scope: string, batchId: string, closes: number, item: DigestItem) => ({
  user_id: userId,
  entry: joinedEntry(scope, batchId, item.notification_id),
  notification_id: item.notification_id,
  item,
  joined_at: Date.now(),
  ttl: Math.ceil(closes / 1000) + KEEP_AFTER_CLOSE_SECS,
});

/**
 * Whether the member just put under `batchId` is in it. The scope still open with that batch: yes, as the close
 * marks it closing (in the same write that closes `current#`) before it reads the members. Otherwise the close
 * may have read the member or not: the batch's member list, once closed, says which.
 */
const counted = async (userId: string, scope: string, batchId: string, notificationId: string) => {
  const current = await readDigestRecord<CurrentRecord>(userId, currentEntry(scope));
  if (current?.batch_id === batchId && current.state === 'open') return true;
  const batch = await readDigestRecord<WindowRecord>(userId, windowEntry(scope, batchId));
  if (!batch || batch.state === 'open')
    throw new Error(`digest batch ${batchId} of ${userId}: not found closing`);
  return (await finishClosing(batch)).members?.includes(notificationId) ?? false;
};

/**
 * Whether the open batch is the only one that can hold a notification that could first join at `since`: it opened
 * before then, or the batch before it was closed before then (and so were all older ones), or it is the scope's
 * first and no batch of the previous shape was kept.
 */
const alone = (current: CurrentRecord, since: number): boolean => {
  if (current.opened_at <= since) return true;
  if (current.previous === undefined) return current.legacy === false;
  return current.previous_closed_at !== undefined && current.previous_closed_at < since;
};

/**
 * The batches of the scope that were open at some time since `since`, newest first (each closed before the next
 * opened): whether the notification is a member of one that is closed, else the open one, if any. The history
 * kept runs out (a scope's first batch, batch records expired): a member record of the previous shape counts too.
 */
const lookBack = async (
  userId: string,
  scope: string,
  notificationId: string,
  current: CurrentRecord | undefined,
  since: number,
): Promise<'member' | { readonly open?: WindowRecord }> => {
  let open: WindowRecord | undefined;
  for (let batchId = current?.batch_id; batchId !== undefined; ) {
    const batch = await readDigestRecord<WindowRecord>(userId, windowEntry(scope, batchId));
    if (!batch) break;
    if (batch.state === 'open') open = batch;
    else if (batch.closed_at !== undefined && batch.closed_at < since) return { open };
    else if ((await finishClosing(batch)).members?.includes(notificationId)) return 'member';
    if (batch.opened_at <= since) return { open };
    if (batch.previous === undefined && batch.legacy === false) return { open };
    batchId = batch.previous;
  }
  if (await readDigestRecord(userId, legacyMemberEntry(notificationId))) return 'member';
  return { open };
};

/** Whether the scope has batches of the previous shape (kept a week after their close), whose members may be retried. */
const keptLegacyBatches = async (userId: string, scope: string): Promise<boolean> => {
  const { items } = await queryOnce({
    TableName: tableName('digests'),
    KeyConditionExpression: 'user_id = :user AND begins_with(entry, :prefix)',
    ExpressionAttributeValues: { ':user': userId, ':prefix': legacyBatchEntry(scope, '') },
    ConsistentRead: true,
    Limit: 1,
  });
  return items.length > 0;
};

/**
 * Opens a batch with the notification as its first member: the write of `current#` is conditional on the batch
 * read as the latest being closed still (or on there being none), so one opener wins and batches follow one
 * another. The close is scheduled first: a crash in between leaves a schedule that finds no batch.
 */
const openBatch = async (
  notification: NotificationRecord,
  userId: string,
  { scope, spec }: DigestChoice,
  preferences: object | undefined,
  current: CurrentRecord | undefined,
): Promise<boolean> => {
  const table = tableName('digests');
  const item = itemOf(notification);
  const batchId = notification.id;
  // After the previous batch's opening, whatever the clocks say: `opened_at` orders the scope's batches.
  const openedAt = Math.max(Date.now(), (current?.opened_at ?? 0) + 1);
  const closes = closesAt(spec, openedAt, timeZoneOf(preferences));
  const ttl = Math.ceil(closes / 1000) + KEEP_AFTER_CLOSE_SECS;
  const history = current
    ? {
        previous: current.batch_id,
        ...(current.closed_at !== undefined ? { previous_closed_at: current.closed_at } : {}),
      }
    : { legacy: await keptLegacyBatches(userId, scope) };
  await scheduleClose(userId, scope, batchId, closes);
  const batch: WindowRecord = {
    user_id: userId,
    entry: windowEntry(scope, batchId),
    scope,
    key: spec.key,
    batch_id: batchId,
    state: 'open',
    opened_at: openedAt,
    closes_at: closes,
    max_items: spec.max_items,
    ...history,
    ...(spec.title !== undefined ? { title: spec.title } : {}),
    opener: {
      source: notification.source,
      event_type: notification.event_type,
      channels: notification.channels,
      priority: notification.priority,
      created_by: notification.created_by,
      ...(notification.category !== undefined ? { category: notification.category } : {}),
      ...(notification.tags !== undefined ? { tags: notification.tags } : {}),
      ...(notification.push ? { push: notification.push } : {}),
      ...(notification.fallback ? { fallback: notification.fallback } : {}),
      ...(notification.throttle ? { throttle: notification.throttle } : {}),
      ...(notification.preference_defaults ? { preference_defaults: notification.preference_defaults } : {}),
    },
    ttl,
  };
  try {
    await documentClient().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: table,
              Item: {
                user_id: userId,
                entry: currentEntry(scope),
                batch_id: batchId,
                state: 'open',
                opened_at: openedAt,
                closes_at: closes,
                ...history,
                ttl,
              } satisfies CurrentRecord & Record<string, unknown>,
              ...(current
                ? {
                    ConditionExpression: '#state = :closed AND batch_id = :previous',
                    ExpressionAttributeNames: { '#state': 'state' },
                    ExpressionAttributeValues: { ':closed': 'closed', ':previous': current.batch_id },
                  }
                : { ConditionExpression: 'attribute_not_exists(user_id)' }),
            },
          },
          { Put: { TableName: table, Item: batch, ConditionExpression: 'attribute_not_exists(user_id)' } },
          {
            Put: {
              TableName: table,
              Item: memberRecord(userId, scope, batchId, closes, item),
              ConditionExpression: 'attribute_not_exists(user_id)',
            },
          },
        ],
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
};

/**
 * Puts `notification` into the recipient's open batch for the scope, or opens one (and schedules its close).
 * Safe to run twice and at once: a member is one record per batch and notification, put once; one that finds
 * its batch closing learns from the closed batch whether it got in, and joins the next batch if not; a retry
 * looks back over the batches that were open since the notification could first join.
 */
export const joinDigest = async (
  notification: NotificationRecord,
  userId: string,
  digest: DigestChoice,
  preferences: object | undefined,
): Promise<'joined' | 'opened' | 'already'> => {
  const { scope } = digest;
  const since = notification.deliver_at - JOIN_HORIZON_MS;
  for (let attempt = 1; attempt <= MAX_JOIN_ATTEMPTS; attempt += 1) {
    const current = await readDigestRecord<CurrentRecord>(userId, currentEntry(scope));
    const found =
      current?.state === 'open' && alone(current, since)
        ? { open: current }
        : await lookBack(userId, scope, notification.id, current, since);
    if (found === 'member') return 'already';
    if (found.open) {
      const { batch_id: batchId, closes_at: closes } = found.open;
      const put = await putMember(userId, scope, batchId, closes, itemOf(notification));
      if (await counted(userId, scope, batchId, notification.id)) {
        // A close sent twice closes once (the batch is marked closing first).
        if (Date.now() - closes > OVERDUE_CLOSE_MS) await scheduleClose(userId, scope, batchId, closes);
        return put ? 'joined' : 'already';
      }
      // The close read the members before this one was put: it joins the next batch.
    } else if (await openBatch(notification, userId, digest, preferences, current)) return 'opened';
    // Another opener was first, or the batch closed under it: read again and retry.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 10)));
  }
  throw new Error(`digest ${scope} of ${userId}: too many concurrent joins, the message is retried`);
};
