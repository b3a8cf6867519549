import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { queryAll } from '../../core/paging';
import type { NotificationRecord } from './model';

/*
 * The records of digest batches in the `digests` table (docs/digests.md "Exactly once"), per user and scope:
 *   `current#<scope>`                   the scope's latest batch and whether it is open (the one writer of opens);
 *   `window#<scope>#<batch>`            a batch: how it closes, the settings its digest goes out with, its state
 *                                       (`open`, `closing`, `closed`) and, once closed, its members and digest;
 *   `joined#<scope>#<batch>#<notif.>`   one member of a batch: one conditional put per notification.
 * Batches opened by the previous shape (`open#`, `batch#`, `member#`) are closed as they were; none is opened.
 */

/** What a digest lists of one of its notifications. */
export interface DigestItem {
  readonly notification_id: string;
  readonly event_type: string;
  readonly source: string;
  readonly title: string;
  readonly created_at: string;
}

/** A batch as its digest is built from it: how it closes, who it goes to and what it counts. */
export interface BatchRecord {
  readonly user_id: string;
  readonly entry: string;
  readonly key: string;
  readonly batch_id: string;
  readonly state: 'open' | 'closing' | 'closed';
  readonly opened_at: number;
  readonly closes_at: number;
  readonly count: number;
  readonly items: readonly DigestItem[];
  /** The newest member: the default title names it. */
  readonly latest: DigestItem;
  readonly max_items: number;
  readonly title?: string;
  /**
   * The notification that opened the batch: the digest goes out with its channels, priority, type, source,
   * category and tags (so the feed's filters and counts find it), and is throttled by its throttle.
   */
  readonly opener: Pick<
    NotificationRecord,
    | 'source'
    | 'event_type'
    | 'category'
    | 'tags'
    | 'channels'
    | 'priority'
    | 'push'
    | 'fallback'
    | 'throttle'
    | 'preference_defaults'
    | 'created_by'
  >;
  readonly ttl: number;
}

/** A `window#` batch: its settings from the opening; its members and digest contents once closed. */
export type WindowRecord = Omit<BatchRecord, 'count' | 'items' | 'latest'> &
  Partial<Pick<BatchRecord, 'count' | 'items' | 'latest'>> & {
    readonly scope: string;
    /** The batch of the scope before this one (absent for the scope's first). */
    readonly previous?: string;
    /** Set by the closing write: the state's change, on the closer's clock. */
    readonly closed_at?: number;
    /** On a scope's first batch: whether batches of the previous shape of the scope were kept when it opened. */
    readonly legacy?: boolean;
    /** Once closed: the ids of every member, the final word on who is in it. */
    readonly members?: readonly string[];
  };

/** The scope's latest batch: opening a batch is a conditional write of this record. */
export interface CurrentRecord {
  readonly batch_id: string;
  readonly state: 'open' | 'closed';
  readonly opened_at: number;
  readonly closes_at: number;
  /** When the batch was closed (the closing write, on the closer's clock). */
  readonly closed_at?: number;
  /** The batch before it, and when that one was closed (absent for the scope's first batch). */
  readonly previous?: string;
  readonly previous_closed_at?: number;
  /** As on the batch: for the scope's first batch, whether previous-shape batches of the scope were kept. */
  readonly legacy?: boolean;
}

/** A member of a batch. */
export interface JoinedRecord {
  readonly notification_id: string;
  readonly item: DigestItem;
  /** When it joined (the joiner's clock): the digest lists its members in this order. */
  readonly joined_at: number;
}

/** Batch and member records outlive the close by a week: a redelivered close or member finds them. */
export const KEEP_AFTER_CLOSE_SECS = 7 * 24 * 3600;

export const currentEntry = (scope: string) => `current#${scope}`;
export const windowEntry = (scope: string, batchId: string) => `window#${scope}#${batchId}`;
export const joinedPrefix = (scope: string, batchId: string) => `joined#${scope}#${batchId}#`;
export const joinedEntry = (scope: string, batchId: string, notificationId: string) =>
  `${joinedPrefix(scope, batchId)}${notificationId}`;
/** The previous shape: its open pointer, batch (count and items kept in it) and per-user member records. */
export const legacyOpenEntry = (scope: string) => `open#${scope}`;
export const legacyBatchEntry = (scope: string, batchId: string) => `batch#${scope}#${batchId}`;
export const legacyMemberEntry = (notificationId: string) => `member#${notificationId}`;

/** One record of the user's, strongly consistent (every decision of the join and the close reads the latest). */
export const readDigestRecord = async <T>(userId: string, entry: string): Promise<T | undefined> => {
  const result = await documentClient().send(
    new GetCommand({
      TableName: tableName('digests'),
      Key: { user_id: userId, entry },
      ConsistentRead: true,
    }),
  );
  return result.Item as T | undefined;
};

/** The batch a close message names, in either shape. */
export const findBatch = async (
  userId: string,
  scope: string,
  batchId: string,
): Promise<
  | { readonly shape: 'window'; readonly batch: WindowRecord }
  | { readonly shape: 'legacy'; readonly batch: BatchRecord }
  | undefined
> => {
  const batch = await readDigestRecord<WindowRecord>(userId, windowEntry(scope, batchId));
  if (batch) return { shape: 'window', batch };
  const legacy = await readDigestRecord<BatchRecord>(userId, legacyBatchEntry(scope, batchId));
  return legacy ? { shape: 'legacy', batch: legacy } : undefined;
};

/**
 * Ends the close of a `closing` batch (any other is answered as it is): reads its members (no join counts itself in once the batch is closing,
 * so this read sees every member that will ever be in it) and writes them into the batch as `closed`. Whoever
 * finds the batch closing may do it, the close or a join waiting to know whether it got in: the conditional
 * write lets one list stand, and later puts under the batch (members that saw it closing) are not in it.
 */
export const finishClosing = async (batch: WindowRecord): Promise<WindowRecord> => {
  if (batch.state !== 'closing') return batch;
  const joined = await queryAll<JoinedRecord>({
    TableName: tableName('digests'),
    KeyConditionExpression: 'user_id = :user AND begins_with(entry, :prefix)',
    ExpressionAttributeValues: {
      ':user': batch.user_id,
      ':prefix': joinedPrefix(batch.scope, batch.batch_id),
    },
    ConsistentRead: true,
  });
  const ordered = [...joined].sort(
    (a, b) => a.joined_at - b.joined_at || a.notification_id.localeCompare(b.notification_id),
  );
  const items = ordered.slice(0, batch.max_items).map((member) => member.item);
  const latest = ordered.at(-1)?.item;
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: tableName('digests'),
        Key: { user_id: batch.user_id, entry: batch.entry },
        UpdateExpression:
          'SET #state = :closed, #count = :count, #items = :items, latest = :latest, members = :members',
        ConditionExpression: '#state = :closing',
        ExpressionAttributeNames: { '#state': 'state', '#count': 'count', '#items': 'items' },
        ExpressionAttributeValues: {
          ':closed': 'closed',
          ':closing': 'closing',
          ':count': ordered.length,
          ':items': items,
          // A batch has at least its opener; `latest` stays a member's item even in a batch read empty.
          ':latest': latest ?? null,
          ':members': ordered.map((member) => member.notification_id),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return result.Attributes as WindowRecord;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Another finisher wrote its list first: that one stands.
    const closed = await readDigestRecord<WindowRecord>(batch.user_id, batch.entry);
    if (closed?.state !== 'closed') throw error;
    return closed;
  }
};
