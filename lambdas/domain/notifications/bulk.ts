import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { notFound, ServiceError } from '../../core/errors';
import { queryPages } from '../../core/paging';
import type { NotificationBulkFrame } from '../realtime/frames';
import { feedState, NOT_EXPIRED, readAll, stateFilter, withNarrowing } from './feed';
import type { FeedStateFilter } from './feed-query';
import { announce, applyTransition, archive, markRead, markSeen, type Transition } from './item-states';
import { isExpired, isReceiverId, type ReceiverRecord } from './model';
import type { BulkAction } from './state-requests';

/*
 * One change to every item of the default feed that matches (POST /notifications/bulk, POST
 * /notifications/read-all). Marking everything read is the read-all watermark: one write however many items
 * are unread (feed.ts). The other changes go item by item over the items present when the call starts: a
 * strongly consistent Query of the matching items delivered by then, each changed by the conditional update
 * of a single change. An item that arrives during the call is delivered after its start and is left as it is,
 * as read-all leaves it unread; so is one that comes back to the default feed during the call (woken up,
 * unarchived), though delivered long before: its `returned_at` is after the start.
 */

const BULK: Record<
  BulkAction,
  {
    readonly change: NotificationBulkFrame['change'];
    readonly matching: FeedStateFilter | undefined;
    readonly transition: Transition;
  }
> = {
  mark_seen: { change: 'seen', matching: 'unseen', transition: markSeen },
  mark_read: { change: 'read', matching: 'unread', transition: markRead },
  archive: { change: 'archived', matching: undefined, transition: archive },
};

/** Receivers changed at once. */
const BULK_CONCURRENCY = 20;

/** `before` must name one of the user's unexpired items (else 404, as for a change of that item). */
const checkBefore = async (userId: string, before: string): Promise<void> => {
  if (!isReceiverId(before)) throw notFound('No such notification');
  const found = await documentClient().send(
    new GetCommand({
      TableName: tableName('receivers'),
      Key: { user_id: userId, receiver_id: before },
      ProjectionExpression: 'receiver_id, expires_at',
    }),
  );
  const item = found.Item as Pick<ReceiverRecord, 'expires_at'> | undefined;
  if (!item || isExpired(item.expires_at)) throw notFound('No such notification');
};

/**
 * In the default feed since before `startedAt`: delivered by then, and not back (unarchived, woken) since. An
 * item that comes back during the call is left as it is, like one that arrives during it.
 */
const PRESENT_AT_START =
  'delivered_at <= :startedAt AND (attribute_not_exists(returned_at) OR returned_at <= :startedAt)';

/**
 * Changes, one by one, the matching items of the default feed present at `startedAt` (older than `before`, of
 * `category`).
 */
const sweep = async (
  userId: string,
  action: BulkAction,
  startedAt: string,
  scope: BulkScope,
): Promise<number> => {
  const { before, category } = scope;
  const { matching, transition } = BULK[action];
  // An item that came back after the call started is left alone also when it comes back after the Query read it
  // (archived and unarchived meanwhile): the write then finds it changed and decides again on what is there.
  const presentTransition: Transition = (receiver, feed, now) =>
    receiver.returned_at !== undefined && receiver.returned_at > startedAt
      ? undefined
      : transition(receiver, feed, now);
  const feed = await feedState(userId);
  const filter = withNarrowing(stateFilter(matching, feed.read_all_watermark), { category });
  let updated = 0;
  const pages = queryPages<ReceiverRecord>({
    TableName: tableName('receivers'),
    KeyConditionExpression: before ? 'user_id = :user AND receiver_id < :before' : 'user_id = :user',
    FilterExpression: `(${NOT_EXPIRED}) AND ${filter.expression} AND ${PRESENT_AT_START}`,
    ExpressionAttributeValues: {
      ':user': userId,
      ':now': startedAt,
      ':startedAt': startedAt,
      ...filter.values,
      ...(before ? { ':before': before } : {}),
      ...(filter.expression.includes(':watermark') ? { ':watermark': feed.read_all_watermark } : {}),
    },
    ConsistentRead: true,
  });
  for await (const receivers of pages) {
    await forEachLimited(receivers, BULK_CONCURRENCY, async (receiver) => {
      try {
        if ((await applyTransition(receiver, feed, presentTransition)).changed) updated += 1;
      } catch (error) {
        // Removed by its retention since the Query: nothing left to change.
        if (!(error instanceof ServiceError && error.code === 'not_found')) throw error;
      }
    });
  }
  return updated;
};

/** Which items a bulk change reaches: those older than `before`, of `category` (each optional). */
export interface BulkScope {
  readonly before?: string | undefined;
  readonly category?: string | undefined;
}

/**
 * POST /notifications/bulk (and POST /notifications/read-all: `mark_read` of every item). The user's
 * connections get one `notification.bulk` frame saying what changed.
 */
export const bulkChange = async (
  userId: string,
  action: BulkAction,
  scope: BulkScope = {},
): Promise<{ updated: number }> => {
  const startedAt = new Date().toISOString();
  const { before, category } = scope;
  if (before !== undefined) await checkBefore(userId, before);
  // The watermark reads every item below it: marking one category read goes item by item.
  const updated =
    action === 'mark_read' && before === undefined && category === undefined
      ? (await readAll(userId)).updated
      : await sweep(userId, action, startedAt, scope);
  await announce(userId, {
    type: 'notification.bulk',
    change: BULK[action].change,
    ids: null,
    before: before ?? null,
    category: category ?? null,
    at: startedAt,
    updated,
  });
  return { updated };
};
