import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { isTimeZone } from '../time-zones';
import type { DigestChoice } from './digest-rules';
import { nextTimeOfDay } from './digest-time';
import { sendOnFanoutAt } from './fanout-schedule';
import type { DigestSpec, NotificationRecord } from './model';

/*
 * Joining a digest batch (docs/digests.md). The `digests` table holds, per user:
 *   `open#<scope>`            the open batch of a key: which batch a notification joins now;
 *   `batch#<scope>#<batch>`   a batch: its count, first items, and the settings its digest goes out with;
 *   `member#<notification>`   that the notification joined a batch for this user (once, whatever retries).
 * A join is one transaction: the member record (conditional: absent) with the batch's update (conditional: the
 * batch still open and its count the one read), so a notification joins exactly one batch once, and a close
 * (which closes the batch in a transaction of its own) either sees the member or the member joins the next batch.
 */

/** What a digest lists of one of its notifications. */
export interface DigestItem {
  readonly notification_id: string;
  readonly event_type: string;
  readonly source: string;
  readonly title: string;
  readonly created_at: string;
}

/** The batch record: what the close needs to send the digest. */
export interface BatchRecord {
  readonly user_id: string;
  readonly entry: string;
  readonly key: string;
  readonly batch_id: string;
  readonly state: 'open' | 'closed';
  readonly opened_at: number;
  readonly closes_at: number;
  readonly count: number;
  readonly items: readonly DigestItem[];
  /** The newest member: the default title names it. */
  readonly latest: DigestItem;
  readonly max_items: number;
  readonly title?: string;
  /**
   * The notification that opened the batch: the digest goes out with its channels, priority, type, source and
   * category (so the feed's category filter and counts find it).
   */
  readonly opener: Pick<
    NotificationRecord,
    | 'source'
    | 'event_type'
    | 'category'
    | 'channels'
    | 'priority'
    | 'push'
    | 'fallback'
    | 'preference_defaults'
    | 'created_by'
  >;
  readonly ttl: number;
}

/** Batch and member records outlive the close by a week: a redelivered close or member finds them. */
const KEEP_AFTER_CLOSE_SECS = 7 * 24 * 3600;
/** Joins retried on a conflict (two members of one batch at once) before the message fails and comes back. */
const MAX_JOIN_ATTEMPTS = 20;

export const openEntry = (scope: string) => `open#${scope}`;
export const batchEntry = (scope: string, batchId: string) => `batch#${scope}#${batchId}`;
const memberEntry = (notificationId: string) => `member#${notificationId}`;

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

export const readBatch = async (userId: string, entry: string): Promise<BatchRecord | undefined> => {
  const result = await documentClient().send(
    new GetCommand({
      TableName: tableName('digests'),
      Key: { user_id: userId, entry },
      ConsistentRead: true,
    }),
  );
  return result.Item as BatchRecord | undefined;
};

/** The cancellation reasons of a transaction, by item (in the order of its items). */
const cancelled = async (write: () => Promise<unknown>): Promise<(string | undefined)[] | undefined> => {
  try {
    await write();
    return undefined;
  } catch (error) {
    if (!(error instanceof TransactionCanceledException)) throw error;
    return (error.CancellationReasons ?? []).map((reason) => reason.Code);
  }
};

/**
 * Puts `notification` into the recipient's open batch for the scope, or opens one (and schedules its close).
 * Safe to run twice and at once: the member record lets the notification in once; the batch's conditions make
 * concurrent members take turns; a member arriving as the batch closes joins the next batch.
 */
export const joinDigest = async (
  notification: NotificationRecord,
  userId: string,
  digest: DigestChoice,
  preferences: object | undefined,
): Promise<'joined' | 'opened' | 'already'> => {
  const { scope, spec } = digest;
  const timeZone = timeZoneOf(preferences);
  const item = itemOf(notification);
  const table = tableName('digests');
  for (let attempt = 1; attempt <= MAX_JOIN_ATTEMPTS; attempt += 1) {
    const open = await readBatch(userId, openEntry(scope));
    const batchId = open?.batch_id ?? notification.id;
    const entry = batchEntry(scope, batchId);
    const batch = open ? await readBatch(userId, entry) : undefined;
    const closes = batch?.closes_at ?? closesAt(spec, Date.now(), timeZone);
    const ttl = Math.ceil(closes / 1000) + KEEP_AFTER_CLOSE_SECS;
    const member = {
      Put: {
        TableName: table,
        Item: { user_id: userId, entry: memberEntry(notification.id), batch_id: batchId, scope, ttl },
        ConditionExpression: 'attribute_not_exists(user_id)',
      },
    };
    let reasons: (string | undefined)[] | undefined;
    if (batch) {
      reasons = await cancelled(() =>
        documentClient().send(
          new TransactWriteCommand({
            TransactItems: [
              member,
              {
                Update: {
                  TableName: table,
                  Key: { user_id: userId, entry },
                  UpdateExpression:
                    batch.items.length < batch.max_items
                      ? 'SET #count = :next, latest = :item, #items = list_append(#items, :items)'
                      : 'SET #count = :next, latest = :item',
                  ConditionExpression: '#state = :open AND #count = :count',
                  ExpressionAttributeNames: {
                    '#count': 'count',
                    '#state': 'state',
                    ...(batch.items.length < batch.max_items ? { '#items': 'items' } : {}),
                  },
                  ExpressionAttributeValues: {
                    ':next': batch.count + 1,
                    ':count': batch.count,
                    ':open': 'open',
                    ':item': item,
                    ...(batch.items.length < batch.max_items ? { ':items': [item] } : {}),
                  },
                },
              },
            ],
          }),
        ),
      );
      if (reasons === undefined) return 'joined';
    } else if (!open) {
      // The close is scheduled before the batch exists: a crash in between leaves a schedule that finds no
      // batch (and does nothing), never a batch that no schedule closes.
      await scheduleClose(userId, scope, batchId, closes);
      const record: BatchRecord = {
        user_id: userId,
        entry,
        key: spec.key,
        batch_id: batchId,
        state: 'open',
        opened_at: Date.now(),
        closes_at: closes,
        count: 1,
        items: [item],
        latest: item,
        max_items: spec.max_items,
        ...(spec.title !== undefined ? { title: spec.title } : {}),
        opener: {
          source: notification.source,
          event_type: notification.event_type,
          channels: notification.channels,
          priority: notification.priority,
          created_by: notification.created_by,
          ...(notification.category !== undefined ? { category: notification.category } : {}),
          ...(notification.push ? { push: notification.push } : {}),
          ...(notification.fallback ? { fallback: notification.fallback } : {}),
          ...(notification.preference_defaults
            ? { preference_defaults: notification.preference_defaults }
            : {}),
        },
        ttl,
      };
      reasons = await cancelled(() =>
        documentClient().send(
          new TransactWriteCommand({
            TransactItems: [
              member,
              {
                Put: {
                  TableName: table,
                  Item: {
                    user_id: userId,
                    entry: openEntry(scope),
                    batch_id: batchId,
                    closes_at: closes,
                    ttl,
                  },
                  ConditionExpression: 'attribute_not_exists(user_id)',
                },
              },
              {
                Put: { TableName: table, Item: record, ConditionExpression: 'attribute_not_exists(user_id)' },
              },
            ],
          }),
        ),
      );
      if (reasons === undefined) return 'opened';
    }
    // Joined before (a redelivery, a second message naming the user): nothing more to do.
    if (reasons?.[0] === 'ConditionalCheckFailed') return 'already';
    // Otherwise the batch moved on (another member, a close, a new batch opened): read again and retry.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 10)));
  }
  throw new Error(`digest ${scope} of ${userId}: too many concurrent joins, the message is retried`);
};
