import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { invalidCursor, notFound } from '../../core/errors';
import { queryAll, queryPages } from '../../core/paging';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import { readNotification } from '../notifications/notification-store';
import {
  PUSH_KEY_PREFIX,
  type PushStatus,
  pushIdFor,
  type RecipientPushes,
  recipientPushKey,
  SUMMARY_KEY,
  shownStatus,
} from './records';
import type { notificationSummarySchema, pushPageSchema } from './responses';

/*
 * What happened to a notification (docs/push-delivery.md, "What happened to a notification"): a summary per channel for whoever created it, and
 * the per-device push records, for the creator all of them and for a recipient its own. Both read the `pushes` table:
 * the notification's push records and one `summary` item the deliverers add their counts to.
 */

const createdBy = (principal: Principal): string => `${principal.kind}:${principal.id}`;

type Summary = z.output<typeof notificationSummarySchema>;

/** Below every push record's key and above none of the partition's other items (`summary`). */
const AFTER_PUSH_KEYS = 'p$';

/** GET /sent-notifications/{notification_id}: the creator's summary; anyone else's, or an unknown id, is a 404. */
export const notificationSummary = async (principal: Principal, id: string): Promise<Summary> => {
  const notification = await readNotification(id, 'eventual');
  if (!notification || notification.created_by !== createdBy(principal))
    throw notFound('Notification not found');
  const [summary, records] = await Promise.all([
    documentClient().send(
      new GetCommand({
        TableName: tableName('pushes'),
        Key: { notification_id: id, record_key: SUMMARY_KEY },
      }),
    ),
    // The devices' entries only: a notification's push records are read in full (1 RCU per 4 KB, paged).
    queryAll<Pick<RecipientPushes, 'devices'>>({
      TableName: tableName('pushes'),
      KeyConditionExpression: 'notification_id = :id AND begins_with(record_key, :prefix)',
      ProjectionExpression: 'devices',
      ExpressionAttributeValues: { ':id': id, ':prefix': PUSH_KEY_PREFIX },
    }),
  ]);
  const pushes: Record<PushStatus, number> = { sending: 0, delivered: 0, retrying: 0, failed: 0, pruned: 0 };
  for (const record of records) {
    for (const push of Object.values(record.devices ?? {})) pushes[shownStatus(push)] += 1;
  }
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

/** A cursor names the next device's push: its recipient's record key and the device's token hash. */
const PUSH_CURSOR = /^(p#[A-Za-z0-9_-]{22})#([A-Za-z0-9_-]{43})$/;

type PushPage = z.output<typeof pushPageSchema>;
type PushItem = PushPage['items'][number];

/** A record's pushes, one item per device, in token-hash order. */
const itemsOf = (record: RecipientPushes): { tokenHash: string; item: PushItem }[] =>
  Object.entries(record.devices)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tokenHash, push]) => ({
      tokenHash,
      item: {
        push_id: pushIdFor(record.notification_id, tokenHash),
        user_id: record.user_id,
        provider: push.provider,
        app_id: push.app_id ?? null,
        status: shownStatus(push),
        attempts: push.attempts,
        provider_id: push.provider_id ?? null,
        reason: push.reason ?? null,
        next_attempt_at: push.status === 'retrying' ? (push.next_attempt_at ?? null) : null,
        created_at: record.created_at,
        updated_at: push.updated_at,
      },
    }));

/**
 * GET /sent-notifications/{notification_id}/pushes: one item per device, by recipient key and token hash. The
 * creator reads them all; any other caller its own pushes only (a recipient: an empty page when it has none, so
 * nothing tells it whether the notification exists). Records hold a recipient's devices together, so a page may
 * end inside one: the cursor names the next device.
 */
export const listPushes = async (
  principal: Principal,
  id: string,
  query: { readonly limit: number; readonly cursor?: string | undefined },
): Promise<PushPage> => {
  const notification = await readNotification(id, 'eventual');
  const creator = notification !== undefined && notification.created_by === createdBy(principal);
  if (!creator && principal.kind !== 'user') throw notFound('Notification not found');
  const own = creator ? undefined : recipientPushKey(principal.id);
  const cursor = query.cursor === undefined ? undefined : PUSH_CURSOR.exec(query.cursor);
  if (query.cursor !== undefined && !(cursor && (own === undefined || cursor[1] === own))) {
    throw invalidCursor();
  }
  const from = cursor?.[1] ?? own ?? PUSH_KEY_PREFIX;
  const fromDevice = cursor?.[2];
  const items: { recordKey: string; tokenHash: string; item: PushItem }[] = [];
  for await (const page of queryPages<RecipientPushes>({
    TableName: tableName('pushes'),
    KeyConditionExpression: 'notification_id = :id AND record_key BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':id': id, ':from': from, ':to': own ?? AFTER_PUSH_KEYS },
    Limit: query.limit + 1,
  })) {
    for (const record of page) {
      for (const entry of itemsOf(record)) {
        if (record.record_key === from && fromDevice !== undefined && entry.tokenHash < fromDevice) continue;
        items.push({ recordKey: record.record_key, ...entry });
      }
    }
    if (items.length > query.limit) break;
  }
  const next = items[query.limit];
  return {
    items: items.slice(0, query.limit).map((entry) => entry.item),
    next_cursor: next ? `${next.recordKey}#${next.tokenHash}` : null,
  };
};
