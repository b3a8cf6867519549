import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { notFound } from '../../core/errors';
import { queryPage } from '../../core/paging';
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
}

/** One item of GET /notifications (the schema is the API documents' too). */
export type FeedItem = z.output<typeof receiverSchema>;

const feedState = async (userId: string): Promise<FeedState> => {
  const result = await documentClient().send(
    new GetCommand({ TableName: tableName('feedState'), Key: { user_id: userId }, ConsistentRead: true }),
  );
  return (result.Item as FeedState | undefined) ?? {};
};

const readAtOf = (receiver: ReceiverRecord, state: FeedState): string | null => {
  if (receiver.read_at) return receiver.read_at;
  if (state.read_all_watermark && state.read_all_at && receiver.receiver_id <= state.read_all_watermark) {
    return state.read_all_at;
  }
  return null;
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

/** BatchGetItem takes 100 keys and may leave some unprocessed: retry those. */
const notificationsById = async (ids: readonly string[]): Promise<Map<string, NotificationRecord>> => {
  const found = new Map<string, NotificationRecord>();
  const table = tableName('notifications');
  let keys = [...new Set(ids)].map((id) => ({ id }));
  for (let attempt = 0; keys.length > 0 && attempt < 5; attempt += 1) {
    const result = await documentClient().send(
      new BatchGetCommand({
        RequestItems: {
          [table]: {
            Keys: keys,
            ProjectionExpression:
              'id, #source, event_type, title, body, #data, priority, channels, created_at, expires_at',
            ExpressionAttributeNames: { '#source': 'source', '#data': 'data' },
          },
        },
      }),
    );
    for (const item of result.Responses?.[table] ?? [])
      found.set(item.id as string, item as NotificationRecord);
    keys = (result.UnprocessedKeys?.[table]?.Keys as { id: string }[] | undefined) ?? [];
  }
  if (keys.length > 0) throw new Error(`BatchGetItem left ${keys.length} keys unprocessed`);
  return found;
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
    // A concurrent read won the race: report its timestamp, as the second call of an idempotent operation.
    if (error instanceof ConditionalCheckFailedException && error.Item) {
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
  let count = 0;
  let exclusiveStartKey: Record<string, unknown> | undefined;
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
  do {
    const page = await documentClient().send(
      new QueryCommand({
        TableName: tableName('receivers'),
        IndexName: 'unread',
        ConsistentRead: true,
        Select: 'COUNT',
        KeyConditionExpression: keyCondition,
        ...notExpiredFilter,
        ExpressionAttributeValues: {
          ':user': userId,
          ':now': now,
          ...(afterValue ? { ':after': afterValue } : {}),
          ...(upTo ? { ':upTo': upTo } : {}),
        },
        ExclusiveStartKey: exclusiveStartKey,
      }),
    );
    count += page.Count ?? 0;
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  return count;
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
 * POST /notifications/read-all: marks read exactly the unread receivers present now, by moving the
 * watermark to the newest of them in one conditional write (it only moves forward). A receiver arriving
 * meanwhile stays unread. Answers how many items it marked.
 */
export const readAll = async (userId: string): Promise<{ updated: number }> => {
  const [state, newest] = await Promise.all([feedState(userId), newestUnreadKey(userId)]);
  if (!newest || (state.read_all_watermark && newest <= state.read_all_watermark)) return { updated: 0 };
  const updated = await countUnread(userId, state.read_all_watermark, newest);
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('feedState'),
        Key: { user_id: userId },
        UpdateExpression: 'SET read_all_watermark = :watermark, read_all_at = :at',
        ConditionExpression: 'attribute_not_exists(read_all_watermark) OR read_all_watermark < :watermark',
        ExpressionAttributeValues: { ':watermark': newest, ':at': new Date().toISOString() },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    return { updated: 0 }; // a concurrent read-all covered these items first
  }
  return { updated };
};
