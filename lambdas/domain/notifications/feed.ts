import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { notFound } from '../../core/errors';
import { countQuery, queryPage } from '../../core/paging';
import type * as z from '../../core/zod';
import {
  decodeCursor,
  encodeCursor,
  isExpired,
  isReceiverId,
  type NotificationRecord,
  type ReceiverRecord,
} from './model';
import type { feedPageSchema, receiverSchema } from './responses';

/**
 * The in-app feed. Read state has two sources: a receiver's own `read_at`, and the user's read-all
 * watermark (every receiver delivered at or before it is read). That makes read-all one write however
 * many items are unread, and the unread count one strongly consistent Query on the `unread` local index.
 */

interface FeedState {
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

const feedState = async (userId: string): Promise<FeedState> => {
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

/** Read one by one (`read_at`), or by the first read-all whose watermark covers the receiver's unread key. */
const readAtOf = (receiver: ReceiverRecord, state: FeedState): string | null => {
  if (receiver.read_at) return receiver.read_at;
  const key = receiver.unread_key;
  if (!key) return null;
  return readAllMarks(state).find(([watermark]) => key <= watermark)?.[1] ?? null;
};

const notExpiredFilter = {
  FilterExpression: 'attribute_not_exists(expires_at) OR expires_at > :now',
};

/** GET /notifications: newest first, expired receivers left out, `limit` items per page. */
export const listFeed = async (
  userId: string,
  options: { readonly limit: number; readonly cursor?: string },
): Promise<z.output<typeof feedPageSchema>> => {
  const startAfter = options.cursor ? await decodeCursor(userId, options.cursor) : undefined;
  const [state, { receivers, nextAfter }] = await Promise.all([
    feedState(userId),
    pageOfReceivers(userId, options.limit, startAfter),
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
      },
    ];
  });
  return { items, next_cursor: nextAfter ? await encodeCursor(userId, nextAfter) : null };
};

/** Up to `limit` unexpired receivers after `startAfter`, and the receiver id the next page starts after. */
const pageOfReceivers = async (
  userId: string,
  limit: number,
  startAfter?: string,
): Promise<{ receivers: ReceiverRecord[]; nextAfter: string | undefined }> => {
  const { items, nextKey } = await queryPage<ReceiverRecord & Record<string, unknown>>(
    {
      TableName: tableName('receivers'),
      KeyConditionExpression: 'user_id = :user',
      ...notExpiredFilter,
      ExpressionAttributeValues: { ':user': userId, ':now': new Date().toISOString() },
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
      projection: 'id, #source, event_type, title, body, #data, priority, channels, created_at, expires_at',
      names: { '#source': 'source', '#data': 'data' },
    },
  );
  return new Map(items.map((item) => [item.id as string, item as unknown as NotificationRecord]));
};

/** POST /notifications/{receiver_id}/read: idempotent, the first `read_at` stays; foreign or unknown → 404. */
export const markRead = async (
  userId: string,
  receiverId: string,
): Promise<{ id: string; read_at: string }> => {
  if (!isReceiverId(receiverId)) throw notFound('No such notification');
  const table = tableName('receivers');
  const [current, state] = await Promise.all([
    documentClient().send(
      new GetCommand({ TableName: table, Key: { user_id: userId, receiver_id: receiverId } }),
    ),
    feedState(userId),
  ]);
  const receiver = current.Item as ReceiverRecord | undefined;
  if (!receiver || isExpired(receiver.expires_at)) throw notFound('No such notification');
  const alreadyRead = readAtOf(receiver, state);
  if (alreadyRead) return { id: receiverId, read_at: alreadyRead };
  const readAt = new Date().toISOString();
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table,
        Key: { user_id: userId, receiver_id: receiverId },
        UpdateExpression: 'SET read_at = :readAt REMOVE unread_key',
        ConditionExpression: 'attribute_exists(receiver_id) AND attribute_not_exists(read_at)',
        ExpressionAttributeValues: { ':readAt': readAt },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { id: receiverId, read_at: readAt };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      // Removed (by its retention) since it was read: gone, as if the read had not found it.
      if (!error.Item) throw notFound('No such notification');
      // A concurrent read won the race: report its timestamp, as the second call of an idempotent operation.
      const winner = unmarshall(error.Item) as ReceiverRecord;
      if (winner.read_at) return { id: receiverId, read_at: winner.read_at };
    }
    throw error;
  }
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
