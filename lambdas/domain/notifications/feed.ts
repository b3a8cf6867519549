import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { timeOfId } from '../../core/ids';
import { countQuery, queryPage, queryPages } from '../../core/paging';
import type * as z from '../../core/zod';
import type { FeedStateFilter } from './feed-query';
import {
  decodeCursor,
  encodeCursor,
  linksOf,
  type NotificationRecord,
  type ReceiverRecord,
  receiverIdFor,
} from './model';
import type { feedCountsSchema, feedPageSchema, receiverSchema } from './responses';

/**
 * The in-app feed. Read state has two sources: a receiver's own `read_at`, and the user's read-all
 * watermark (every receiver delivered at or before it is read). That makes read-all one write however
 * many items are unread, and the unread count one strongly consistent Query on the `unread` local index.
 */

export interface FeedState {
  /** The greatest receiver id read-all covered. */
  readonly read_all_watermark?: string;
  readonly read_all_at?: string;
  /**
   * The recent read-alls, oldest first: `[watermark, time]`. An item a read-all read keeps that read-all's time,
   * the first whose watermark covers it (states written before these were kept have the last read-all alone).
   */
  readonly read_all_marks?: readonly (readonly [string, string])[];
}

/**
 * How many read-alls' times a feed state keeps (≈ 70 bytes each, so the item stays within one read unit, which
 * the fan-out reads for every recipient). Past that the oldest is dropped: the items only it covered take the
 * next one's time, which is later than when they were read — only for items read 20 read-alls ago.
 */
export const MAX_READ_ALL_MARKS = 20;

/** The read-alls' marks; the last watermark with its time where no mark has it (written by an older version). */
const readAllMarks = (state: FeedState): readonly (readonly [string, string])[] => {
  const marks = state.read_all_marks ?? [];
  const { read_all_watermark: watermark, read_all_at: at } = state;
  if (!watermark || !at || marks.at(-1)?.[0] === watermark) return marks;
  return [...marks, [watermark, at]];
};

/** One item of GET /notifications (the schema is the API documents' too). */
export type FeedItem = z.output<typeof receiverSchema>;

export const feedState = async (userId: string): Promise<FeedState> => {
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('feedState'), Key: { user_id: userId }, ConsistentRead: true }),
  );
  return (result.Item as FeedState | undefined) ?? {};
};

/** The users' read-all watermarks (strongly consistent), for those who have one. */
export const readAllWatermarks = async (userIds: readonly string[]): Promise<Map<string, string>> => {
  const states = await batchGetAll(
    tableName('feedState'),
    userIds.map((userId) => ({ user_id: userId })),
    { projection: 'user_id, read_all_watermark', consistent: true },
  );
  return new Map(
    states.flatMap((state) =>
      typeof state.read_all_watermark === 'string'
        ? [[state.user_id as string, state.read_all_watermark] as const]
        : [],
    ),
  );
};

/**
 * An unread key of now, and above `watermark` when given, for a receiver of `notificationId`: for an item that
 * becomes unread although a read-all may already cover its id (a late arrival, a wake-up, an unarchived item).
 * Time-ordered like receiver ids, so later read-alls cover it as usual.
 */
export const unreadKeyAbove = (notificationId: string, userId: string, watermark?: string): string =>
  receiverIdFor(
    notificationId,
    userId,
    Math.max(Date.now(), watermark === undefined ? 0 : timeOfId(watermark) + 1),
  );

/**
 * After writing an unread key chosen above the watermark read before: a read-all that ran meanwhile may have
 * moved the watermark over it without seeing the item. Then the key goes above the new watermark (conditional
 * on the key, so a read in between wins), until no read-all has covered it. So an item never becomes read
 * unseen by the read that covers it. (A read-all that did see it may have counted it: the overlap
 * docs/notifications.md describes.)
 */
export const keepUnreadAboveWatermark = async (
  userId: string,
  receiverId: string,
  notificationId: string,
  unreadKey: string,
  watermark?: string,
): Promise<void> => {
  let current = unreadKey;
  let after = watermark ?? (await readAllWatermarks([userId])).get(userId);
  while (after !== undefined && current <= after) {
    const above = unreadKeyAbove(notificationId, userId, after);
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName('receivers'),
          Key: { user_id: userId, receiver_id: receiverId },
          UpdateExpression: 'SET unread_key = :above',
          // Only while the key is still the covered one: a read in the meantime removed it (and stays).
          ConditionExpression: 'unread_key = :covered',
          ExpressionAttributeValues: { ':above': above, ':covered': current },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      return;
    }
    current = above;
    after = (await readAllWatermarks([userId])).get(userId); // a read-all may have moved past this key too
  }
};

/**
 * Read one by one (`read_at`), or by the first read-all whose watermark covers the receiver's unread key. An
 * archived or snoozed item carries no unread key: hidden, it is read only by its own `read_at` (item-states.ts).
 */
export const readAtOf = (receiver: ReceiverRecord, state: FeedState): string | null => {
  if (receiver.read_at) return receiver.read_at;
  const key = receiver.unread_key;
  if (!key) return null;
  return readAllMarks(state).find(([watermark]) => key <= watermark)?.[1] ?? null;
};

export const NOT_EXPIRED = 'attribute_not_exists(expires_at) OR expires_at > :now';
const notExpiredFilter = { FilterExpression: NOT_EXPIRED };

/** In the default feed: neither archived nor snoozed. */
const IN_FEED = 'attribute_not_exists(archived_at) AND attribute_not_exists(snoozed_until)';

/**
 * Unread, for an item of the default feed: an unread key above the read-all watermark (what the `unread` index
 * and so the unread count select).
 */
/** Unread as stateFilter('unread') selects: an unread key above the user's read-all watermark. */
export const isUnread = (unreadKey: string | undefined, watermark: string | undefined): boolean =>
  unreadKey !== undefined && (watermark === undefined || unreadKey > watermark);

const UNREAD_WITH_WATERMARK = 'attribute_exists(unread_key) AND unread_key > :watermark';

/** The filter of a state (absent: the default feed), given the user's read-all watermark. */
export const stateFilter = (state: FeedStateFilter | undefined, watermark: string | undefined): string => {
  const unread = watermark === undefined ? 'attribute_exists(unread_key)' : UNREAD_WITH_WATERMARK;
  switch (state) {
    case undefined:
      return IN_FEED;
    case 'unseen':
      return `${IN_FEED} AND attribute_not_exists(seen_at)`;
    case 'unread':
      return `${IN_FEED} AND ${unread}`;
    case 'read':
      return `${IN_FEED} AND NOT (${unread})`;
    case 'archived':
      return 'attribute_exists(archived_at) AND attribute_not_exists(snoozed_until)';
    case 'snoozed':
      return 'attribute_exists(snoozed_until)';
    case 'all':
      return 'attribute_not_exists(snoozed_until)';
  }
};

/** A category and a tag a listing or a bulk change is narrowed to (each optional). */
export interface Narrowing {
  readonly category?: string | undefined;
  readonly tag?: string | undefined;
}

/**
 * A state filter narrowed to a category and a tag: a filter expression with its values. Filtered, not keyed:
 * a page reads on until it is full (core/paging.ts), so a rare category costs reads, never a missed item, and
 * the cursor stays the last receiver id (items arriving above it are for the first page).
 */
export const withNarrowing = (
  filter: string,
  narrowing: Narrowing,
): { readonly expression: string; readonly values: Record<string, string> } => {
  const clauses = [filter];
  const values: Record<string, string> = {};
  if (narrowing.category !== undefined) {
    clauses.push('category = :category');
    values[':category'] = narrowing.category;
  }
  if (narrowing.tag !== undefined) {
    clauses.push('contains(tags, :tag)');
    values[':tag'] = narrowing.tag;
  }
  return { expression: clauses.join(' AND '), values };
};

/** GET /notifications: newest first, expired receivers left out, `limit` items per page, of one state. */
export const listFeed = async (
  userId: string,
  options: {
    readonly limit: number;
    readonly cursor?: string;
    readonly state?: FeedStateFilter;
    readonly category?: string;
    readonly tag?: string;
  },
): Promise<z.output<typeof feedPageSchema>> => {
  const startAfter = options.cursor ? await decodeCursor(userId, options.cursor) : undefined;
  // Only the read-state filters need the watermark before the Query; the others read both at once.
  const reading = feedState(userId);
  const watermark =
    options.state === 'unread' || options.state === 'read' ? (await reading).read_all_watermark : undefined;
  const [state, { receivers, nextAfter }] = await Promise.all([
    reading,
    pageOfReceivers(
      userId,
      options.limit,
      withNarrowing(stateFilter(options.state, watermark), options),
      watermark,
      startAfter,
    ),
  ]);
  const notifications = await notificationsById(receivers.map((receiver) => receiver.notification_id));
  const items = receivers.flatMap((receiver): FeedItem[] => {
    const notification = notifications.get(receiver.notification_id);
    if (!notification) return []; // retention removed the notification first; the receiver follows soon
    return [
      {
        id: receiver.receiver_id,
        notification_id: notification.id,
        source: notification.source,
        event_type: notification.event_type,
        title: notification.title,
        body: notification.body,
        data: notification.data,
        priority: notification.priority,
        channels: [...notification.channels],
        created_at: notification.created_at,
        read_at: readAtOf(receiver, state),
        expires_at: notification.expires_at,
        seen_at: receiver.seen_at ?? null,
        archived_at: receiver.archived_at ?? null,
        snoozed_until: receiver.snoozed_until ?? null,
        ...linksOf(notification),
        interacted_at: receiver.interacted_at ?? null,
        interacted_action: receiver.interacted_action ?? null,
        revision: receiver.revision ?? 0,
        category: receiver.category ?? null,
        tags: [...(receiver.tags ?? [])],
      },
    ];
  });
  return { items, next_cursor: nextAfter ? await encodeCursor(userId, nextAfter) : null };
};

/** Up to `limit` unexpired receivers matching `filter` after `startAfter`, and where the next page starts. */
const pageOfReceivers = async (
  userId: string,
  limit: number,
  filter: ReturnType<typeof withNarrowing>,
  watermark: string | undefined,
  startAfter?: string,
): Promise<{ receivers: ReceiverRecord[]; nextAfter: string | undefined }> => {
  const { items, nextKey } = await queryPage<ReceiverRecord & Record<string, unknown>>(
    {
      TableName: tableName('receivers'),
      KeyConditionExpression: 'user_id = :user',
      FilterExpression: `(${NOT_EXPIRED}) AND ${filter.expression}`,
      ExpressionAttributeValues: {
        ':user': userId,
        ':now': new Date().toISOString(),
        ...filter.values,
        ...(filter.expression.includes(':watermark') ? { ':watermark': watermark } : {}),
      },
      ScanIndexForward: false,
    },
    {
      limit,
      startKey: startAfter ? { user_id: userId, receiver_id: startAfter } : undefined,
      keyOf: (receiver) => ({ user_id: receiver.user_id, receiver_id: receiver.receiver_id }),
    },
  );
  return { receivers: items, nextAfter: nextKey?.receiver_id as string | undefined };
};

/** The notifications of a page's receivers, by id. */
const notificationsById = async (ids: readonly string[]): Promise<Map<string, NotificationRecord>> => {
  const items = await batchGetAll(
    tableName('notifications'),
    [...new Set(ids)].map((id) => ({ id })),
    {
      projection:
        'id, #source, event_type, title, body, #data, priority, channels, created_at, expires_at, #url, #actions',
      names: { '#source': 'source', '#data': 'data', '#url': 'url', '#actions': 'actions' },
    },
  );
  return new Map(items.map((item) => [item.id as string, item as unknown as NotificationRecord]));
};

/**
 * Counts unread, unexpired receivers with `after < unread_key <= upTo` (strongly consistent, on the sparse
 * `unread` local index whose items carry only keys and `expires_at`).
 */
const countUnread = async (userId: string, after: string | undefined, upTo?: string): Promise<number> => {
  const now = new Date().toISOString();
  // A key condition takes one range clause. Receiver ids all have 36 characters, so `after + ' '` is
  // greater than `after` and not greater than any id after it: BETWEEN then excludes `after` itself.
  const keyCondition =
    after && upTo
      ? 'user_id = :user AND unread_key BETWEEN :after AND :upTo'
      : after
        ? 'user_id = :user AND unread_key > :after'
        : upTo
          ? 'user_id = :user AND unread_key <= :upTo'
          : 'user_id = :user';
  const afterValue = after && upTo ? `${after} ` : after;
  return countQuery({
    TableName: tableName('receivers'),
    IndexName: 'unread',
    ConsistentRead: true,
    KeyConditionExpression: keyCondition,
    ...notExpiredFilter,
    ExpressionAttributeValues: {
      ':user': userId,
      ':now': now,
      ...(afterValue ? { ':after': afterValue } : {}),
      ...(upTo ? { ':upTo': upTo } : {}),
    },
  });
};

/** The newest receiver not read one by one (expired or not): where read-all puts the watermark. */
const newestUnreadKey = async (userId: string): Promise<string | undefined> => {
  const result = await documentClient().send(
    new QueryCommand({
      TableName: tableName('receivers'),
      IndexName: 'unread',
      ConsistentRead: true,
      KeyConditionExpression: 'user_id = :user',
      ExpressionAttributeValues: { ':user': userId },
      ScanIndexForward: false,
      Limit: 1,
    }),
  );
  return result.Items?.[0]?.unread_key as string | undefined;
};

/** The counts of GET /notifications/counts (overall and per category). */
export type FeedCounts = z.output<typeof feedCountsSchema>;

/**
 * GET /notifications/counts: the unseen, unread and total items of the default feed (unexpired, neither archived
 * nor snoozed), overall and per category, counted from the receivers themselves in one strongly consistent
 * Query, with the same filters and watermark the feed lists by. Nothing is kept apart that could drift from the
 * feed: a write that created, changed, retried or crashed half-way is counted exactly as the feed lists it.
 */
export const feedCounts = async (userId: string): Promise<FeedCounts> => {
  const watermark = (await feedState(userId)).read_all_watermark;
  type Tally = { unseen: number; unread: number; total: number };
  const counts: Tally = { unseen: 0, unread: 0, total: 0 };
  // A Map, not an object: a category may be named `__proto__` or `constructor`.
  const categories = new Map<string, Tally>();
  const pages = queryPages<Pick<ReceiverRecord, 'category' | 'seen_at' | 'unread_key'>>({
    TableName: tableName('receivers'),
    KeyConditionExpression: 'user_id = :user',
    FilterExpression: `(${NOT_EXPIRED}) AND ${IN_FEED}`,
    ProjectionExpression: 'category, seen_at, unread_key',
    ExpressionAttributeValues: { ':user': userId, ':now': new Date().toISOString() },
    ConsistentRead: true,
  });
  for await (const page of pages) {
    for (const item of page) {
      const unread = isUnread(item.unread_key, watermark);
      const unseen = item.seen_at === undefined;
      const tallies: Tally[] = [counts];
      if (item.category !== undefined) {
        const ofCategory = categories.get(item.category) ?? { unseen: 0, unread: 0, total: 0 };
        categories.set(item.category, ofCategory);
        tallies.push(ofCategory);
      }
      for (const tally of tallies) {
        tally.total += 1;
        if (unread) tally.unread += 1;
        if (unseen) tally.unseen += 1;
      }
    }
  }
  // fromEntries defines each key as the object's own, `__proto__` included.
  return { ...counts, categories: Object.fromEntries(categories) };
};

/** GET /notifications/unread-count. */
export const unreadCount = async (userId: string): Promise<number> => {
  const state = await feedState(userId);
  return countUnread(userId, state.read_all_watermark);
};

/**
 * POST /notifications/read-all: marks read the unread receivers present now, in one conditional write that
 * moves the watermark to the newest unread key, then counts what it covered. Fan-out checks the watermark
 * after writing a receiver and lifts the receiver's unread key above it if covered, so a receiver that lands
 * after the read-all stays unread (see docs/notifications.md for the one narrow overlap). The write is
 * conditional on the watermark it started from: of two concurrent read-alls one moves it and the other
 * starts over from there, so no item is counted by two.
 */
export const readAll = async (userId: string): Promise<{ updated: number }> => {
  for (;;) {
    const [state, newest] = await Promise.all([feedState(userId), newestUnreadKey(userId)]);
    const from = state.read_all_watermark;
    if (!newest || (from && newest <= from)) return { updated: 0 };
    const at = new Date().toISOString();
    try {
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName('feedState'),
          Key: { user_id: userId },
          UpdateExpression: 'SET read_all_watermark = :watermark, read_all_at = :at, read_all_marks = :marks',
          // The marks are written whole: the condition on the watermark read with them keeps them current.
          ConditionExpression: from
            ? 'read_all_watermark = :from'
            : 'attribute_not_exists(read_all_watermark)',
          ExpressionAttributeValues: {
            ':watermark': newest,
            ':at': at,
            ':marks': [...readAllMarks(state), [newest, at]].slice(-MAX_READ_ALL_MARKS),
            ...(from ? { ':from': from } : {}),
          },
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      continue; // a concurrent read-all moved the watermark first: start over from where it left it
    }
    return { updated: await countUnread(userId, from, newest) };
  }
};
