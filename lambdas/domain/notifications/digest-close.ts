import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import type { MessageHandling } from '../../core/message-handling';
import { deliverChunk, deliveryByMessage } from './delivery';
import {
  type BatchRecord,
  currentEntry,
  findBatch,
  finishClosing,
  legacyOpenEntry,
  readDigestRecord,
} from './digest-batches';
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
/** Closes retried on a conflict (another receive closing at that moment) before the message fails and comes back. */
const MAX_CLOSE_ATTEMPTS = 20;
const MAX_BODY = 4096;

const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

/** `{count}` in the sender's title; by default the newest member's title and how many more there are. */
const digestTitle = (batch: BatchRecord): string => {
  if (batch.title !== undefined)
    return clip(batch.title.replaceAll('{count}', String(batch.count)), MAX_TITLE);
  if (batch.count === 1) return batch.latest.title;
  const more = ` (and ${batch.count - 1} more)`;
  return `${clip(batch.latest.title, MAX_TITLE - more.length)}${more}`;
};

/**
 * The items' titles, one a line: as many whole titles as fit a body's 4,096 characters, then how many members the
 * body leaves out.
 */
const digestBody = (batch: BatchRecord): string => {
  if (batch.count === 1) return '';
  const titles = batch.items.map((item) => item.title);
  let listed = titles.length;
  const bodyOf = () =>
    [
      ...titles.slice(0, listed),
      ...(listed < titles.length ? [`(and ${batch.count - listed} more)`] : []),
    ].join('\n');
  // A title is at most 256 characters: a body of one title and the last line always fits.
  while (listed > 1 && bodyOf().length > MAX_BODY) listed -= 1;
  return bodyOf();
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
  body: digestBody(batch),
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

/** Closes a batch of the previous shape, as it was: its count and items are kept in the batch record itself. */
const closeLegacyBatch = async (opened: BatchRecord): Promise<BatchRecord> => {
  const table = tableName('digests');
  let batch: BatchRecord | undefined = opened;
  for (let attempt = 1; attempt <= MAX_CLOSE_ATTEMPTS && batch; attempt += 1) {
    if (batch.state === 'closed') return batch;
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: { user_id: batch.user_id, entry: batch.entry },
                UpdateExpression: 'SET #state = :closed',
                ConditionExpression: '#state = :open',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':closed': 'closed', ':open': 'open' },
              },
            },
            {
              Delete: {
                TableName: table,
                Key: { user_id: batch.user_id, entry: legacyOpenEntry(scopeOfLegacy(batch)) },
                ConditionExpression: 'attribute_not_exists(user_id) OR batch_id = :batch',
                ExpressionAttributeValues: { ':batch': batch.batch_id },
              },
            },
          ],
        }),
      );
    } catch (error) {
      // A member of the previous shape's code joining at the same moment: read again and decide.
      if (!(error instanceof TransactionCanceledException)) throw error;
    }
    batch = await readDigestRecord<BatchRecord>(batch.user_id, batch.entry);
  }
  throw new Error(
    `digest batch ${opened.entry} of ${opened.user_id} could not be closed; the message is retried`,
  );
};

/** The scope of a previous-shape batch, from its entry `batch#<scope>#<batch id>`. */
const scopeOfLegacy = (batch: BatchRecord) =>
  batch.entry.slice('batch#'.length, batch.entry.length - batch.batch_id.length - 1);

/**
 * Closes the batch: one write marks it closing and the scope's `current#` closed (from then on no member counts
 * itself in, and the next notification opens a new batch); then its members are read and written into it as
 * closed. Already closed: nothing to do. Answers the batch closed, with every member it got.
 */
const closeBatch = async (
  userId: string,
  scope: string,
  batchId: string,
): Promise<BatchRecord | undefined> => {
  const table = tableName('digests');
  for (let attempt = 1; attempt <= MAX_CLOSE_ATTEMPTS; attempt += 1) {
    const found = await findBatch(userId, scope, batchId);
    if (!found) return undefined;
    if (found.shape === 'legacy') return closeLegacyBatch(found.batch);
    const { batch } = found;
    if (batch.state !== 'open') return (await finishClosing(batch)) as BatchRecord;
    const now = Date.now();
    try {
      await documentClient().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: table,
                Key: { user_id: userId, entry: batch.entry },
                UpdateExpression: 'SET #state = :closing, closed_at = :now',
                ConditionExpression: '#state = :open',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: { ':closing': 'closing', ':open': 'open', ':now': now },
              },
            },
            {
              Update: {
                TableName: table,
                Key: { user_id: userId, entry: currentEntry(scope) },
                UpdateExpression: 'SET #state = :closed, closed_at = :now',
                ConditionExpression: 'batch_id = :batch AND #state = :open',
                ExpressionAttributeNames: { '#state': 'state' },
                ExpressionAttributeValues: {
                  ':closed': 'closed',
                  ':open': 'open',
                  ':batch': batchId,
                  ':now': now,
                },
              },
            },
          ],
        }),
      );
    } catch (error) {
      // Another receive of the close message closing it at the same moment: read again and decide.
      if (!(error instanceof TransactionCanceledException)) throw error;
    }
  }
  throw new Error(`digest batch ${batchId} of ${userId} could not be closed; the message is retried`);
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
