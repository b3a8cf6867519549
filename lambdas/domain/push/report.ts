import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { notFound, validationError } from '../../core/errors';
import { type ItemKey, queryAll, queryPage } from '../../core/paging';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import type { NotificationRecord } from '../notifications/model';
import { PUSH_KEY_PREFIX, type PushRecord, type PushStatus, SUMMARY_KEY, userPushPrefix } from './records';
import type { notificationSummarySchema, pushPageSchema } from './responses';

/*
 * What happened to a notification (docs/push-delivery.md, "What happened to a notification"): a summary per channel for whoever created it, and
 * the per-device push records, for the creator all of them and for a recipient its own. Both read the `pushes` table:
 * the notification's push records and one `summary` item the deliverers add their counts to.
 */

const loadNotification = async (id: string): Promise<NotificationRecord | undefined> => {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableName('notifications'), Key: { id } }),
  );
  return Item as NotificationRecord | undefined;
};

const createdBy = (principal: Principal): string => `${principal.kind}:${principal.id}`;

type Summary = z.output<typeof notificationSummarySchema>;

/** GET /sent-notifications/{notification_id}: the creator's summary; anyone else's, or an unknown id, is a 404. */
export const notificationSummary = async (principal: Principal, id: string): Promise<Summary> => {
  const notification = await loadNotification(id);
  if (!notification || notification.created_by !== createdBy(principal))
    throw notFound('Notification not found');
  const [summary, records] = await Promise.all([
    documentClient().send(
      new GetCommand({ TableName: tableName('pushes'), Key: { notification_id: id, device: SUMMARY_KEY } }),
    ),
    // Each push's status only: a notification's pushes are read in full (1 RCU per 4 KB of records, paged).
    queryAll<Pick<PushRecord, 'status'>>({
      TableName: tableName('pushes'),
      KeyConditionExpression: 'notification_id = :id AND begins_with(device, :prefix)',
      ProjectionExpression: '#status',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':id': id, ':prefix': PUSH_KEY_PREFIX },
    }),
  ]);
  const pushes: Record<PushStatus, number> = { sending: 0, delivered: 0, retrying: 0, failed: 0, pruned: 0 };
  for (const record of records) pushes[record.status] += 1;
  const counts = summary.Item ?? {};
  return {
    notification_id: id,
    status: notification.status,
    recipients: notification.recipient_count ?? null,
    feed_items: Number(counts.feed_items ?? 0),
    frames: Number(counts.frames ?? 0),
    pushes,
  };
};

const PUSH_CURSOR = /^p#[A-Za-z0-9_-]{22}#[A-Za-z0-9_-]{43}$/;

type PushPage = z.output<typeof pushPageSchema>;

/**
 * GET /sent-notifications/{notification_id}/pushes: one record per device, by key. The creator reads them all; any
 * other caller its own pushes only (a recipient: an empty page when it has none, so nothing tells it whether the
 * notification exists).
 */
export const listPushes = async (
  principal: Principal,
  id: string,
  query: { readonly limit: number; readonly cursor?: string | undefined },
): Promise<PushPage> => {
  const notification = await loadNotification(id);
  const creator = notification !== undefined && notification.created_by === createdBy(principal);
  if (!creator && principal.kind !== 'user') throw notFound('Notification not found');
  const prefix = creator ? PUSH_KEY_PREFIX : userPushPrefix(principal.id);
  if (query.cursor !== undefined && !(PUSH_CURSOR.test(query.cursor) && query.cursor.startsWith(prefix))) {
    throw validationError('Invalid query', [{ field: 'cursor', issue: 'is not a cursor of this listing' }]);
  }
  const page = await queryPage<PushRecord & ItemKey>(
    {
      TableName: tableName('pushes'),
      KeyConditionExpression: 'notification_id = :id AND begins_with(device, :prefix)',
      ExpressionAttributeValues: { ':id': id, ':prefix': prefix },
    },
    {
      limit: query.limit,
      startKey: query.cursor ? { notification_id: id, device: query.cursor } : undefined,
      keyOf: (item) => ({ notification_id: item.notification_id, device: item.device }),
    },
  );
  return {
    items: page.items.map((record) => ({
      push_id: record.push_id,
      user_id: record.user_id,
      provider: record.provider,
      app_id: record.app_id ?? null,
      status: record.status,
      attempts: record.attempts,
      provider_id: record.provider_id ?? null,
      reason: record.reason ?? null,
      next_attempt_at: record.status === 'retrying' ? (record.next_attempt_at ?? null) : null,
      created_at: record.created_at,
      updated_at: record.updated_at,
    })),
    next_cursor: page.nextKey ? (page.nextKey.device as string) : null,
  };
};
