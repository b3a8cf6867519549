import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { MessageHandling } from '../../core/message-handling';
import { deliverChunk, deliveryByMessage } from './delivery';
import { type BatchRecord, batchEntry, openEntry, readBatch } from './digest-join';
import { frameFits } from './frame-size';
import { FEED_RETENTION_MS, type NotificationRecord, receiverIdFor } from './model';
import { storeOnce } from './notification-store';

/*
 * The close of a digest batch (docs/digests.md): the batch is closed (no member joins it any more; the next one
 * opens a new batch), then its digest is stored once under an id derived from the batch and delivered to the
 * user as any notification is (one receiver, frames, push: each once). Every step is idempotent, so the close
 * message may run again from any point.
 */

const MAX_TITLE = 256;
/** Closes retried on a conflict (members joining at that moment) before the message fails and comes back. */
const MAX_CLOSE_ATTEMPTS = 20;
const MAX_BODY = 4096;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** `{count}` in the sender's title; by default the newest member's title and how many more there are. */
const digestTitle = (batch: BatchRecord): string => {
  if (batch.title !== undefined)
    return clip(batch.title.replaceAll('{count}', String(batch.count)), MAX_TITLE);
  if (batch.count === 1) return batch.latest.title;
  return clip(`${batch.latest.title} (and ${batch.count - 1} more)`, MAX_TITLE);
};

/**
 * The digest of a closed batch: the same id, time and content whichever attempt builds it. Its `notification`
 * frame fits one WebSocket frame: when the items (each title up to 256 characters) would not, it keeps the first
 * ones that do, in `data` and in the body; `count` stays exact.
 */
export const digestRecord = (batch: BatchRecord, now = Date.now()): NotificationRecord => {
  for (let kept = batch.items.length; kept > 0; kept -= 1) {
    const digest = digestOf({ ...batch, items: batch.items.slice(0, kept) }, now);
    if (frameFits(digest)) return digest;
  }
  return digestOf({ ...batch, items: [] }, now);
};

const digestOf = (batch: BatchRecord, now: number): NotificationRecord => ({
  // Derived from the user and the batch like a receiver id (a UUID v7 at the close time): one digest per batch.
  id: receiverIdFor(`digest\n${batch.entry}`, batch.user_id, batch.closes_at),
  ...batch.opener,
  title: digestTitle(batch),
  body: batch.count === 1 ? '' : clip(batch.items.map((item) => item.title).join('\n'), MAX_BODY),
  data: { digest: { key: batch.key, count: batch.count, items: batch.items } },
  recipient_count: 1,
  scheduled_at: null,
  expires_at: null,
  created_at: new Date(now).toISOString(),
  deliver_at: batch.closes_at,
  status: 'accepted',
  digest_of: { key: batch.key, batch_id: batch.batch_id, count: batch.count },
  ttl: Math.ceil((batch.closes_at + FEED_RETENTION_MS) / 1000),
});

/**
 * Closes the batch: no member joins it from here on (a join checks the batch's state in its transaction).
 * Already closed: nothing to do. Answers the batch as closed, with every member it got.
 */
const closeBatch = async (
  userId: string,
  scope: string,
  batchId: string,
): Promise<BatchRecord | undefined> => {
  const table = tableName('digests');
  const entry = batchEntry(scope, batchId);
  for (let attempt = 1; attempt <= MAX_CLOSE_ATTEMPTS; attempt += 1) {
    const batch = await readBatch(userId, entry);
    if (!batch || batch.state === 'closed') return batch;
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: { user_id: userId, entry },
                UpdateExpression: 'SET #state = :closed',
                ConditionExpression: '#state = :open',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':closed': 'closed', ':open': 'open' },
              },
            },
            {
              Delete: {
                TableName: table,
                Key: { user_id: userId, entry: openEntry(scope) },
                ConditionExpression: 'attribute_not_exists(user_id) OR batch_id = :batch',
                ExpressionAttributeValues: { ':batch': batchId },
              },
            },
          ],
        }),
      );
    } catch (error) {
      // A member joining at the same moment, or another receive closing it: read again and decide.
      if (!(error instanceof TransactionCanceledException)) throw error;
    }
  }
  throw new Error(`digest batch ${entry} of ${userId} could not be closed; the message is retried`);
};

/**
 * Handles a `digest-close` message: closes the batch and delivers its digest. A batch that does not exist is a
 * schedule whose batch was never opened (its opener crashed in between, or joined another batch): nothing to do.
 */
export const sendDigest = async (
  userId: string,
  scope: string,
  batchId: string,
  handling: MessageHandling,
): Promise<'delivered' | 'skipped'> => {
  const batch = await closeBatch(userId, scope, batchId);
  if (!batch) return 'skipped';
  const digest = await storeOnce(digestRecord(batch));
  await deliverChunk(digest, [userId], deliveryByMessage(handling));
  return 'delivered';
};
