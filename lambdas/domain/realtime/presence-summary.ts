import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { presenceSettings } from '../../../common/presence-settings';
import { documentClient } from '../../core/clients';
import { newId } from '../../core/ids';
import { logger } from '../../core/logger';
import { type ItemKey, queryOnce } from '../../core/paging';
import { enqueue } from '../../core/sqs-send';
import type { PresenceFrame } from './frames';
import { type PresenceSummaryMessage, presenceSummaryQueue } from './presence-summary-message';
import { NOT_EXPIRED, notExpiredNames, nowSecs, table } from './tables';

/**
 * Presence in large rooms (docs/realtime.md): a room whose audience is above `scale.presence.announce_max`
 * does not get a `presence` frame per change — that is one post per subscriber per change, O(members) in the
 * request and O(members²) for a join storm. Its changes are counted on one item instead, and the first
 * unannounced change arms one `presence.summary` on the `broadcast` queue, `summary_secs` later, which the
 * broadcast worker sends through the room's broadcast segments (presence-summary-broadcast.ts).
 */

/** What a summary counts: the changes that would have been `presence` frames. */
export interface PendingSummary {
  readonly joins: number;
  readonly leaves: number;
  readonly updates: number;
  /** When the first change it counts happened (ISO 8601). */
  readonly since: string;
  /** When the counts were taken (ISO 8601): the summary's `at`, where the next one starts. */
  readonly at: string;
  readonly claim?: string;
}

/**
 * The counting item: its own partition of `presence`, so the room's member rows stay what GET /presence reads.
 * `summary:` is no channel kind, so no room id can name the same scope.
 */
const summaryKey = (room: string) => ({ scope: `summary:${room}`, member: 'pending' });

/** A counting item outlives the longest quiet spell between a room's changes that still matters. */
const SUMMARY_TTL_SECS = 24 * 3600;

/**
 * An arming older than its delay by this much is taken as lost (its message was never sent, or sits in a
 * backlog): the next change arms again, and the old message, if it comes, finds another claim and does nothing.
 */
const LOST_ARMING_MS = 5 * 60_000;

/**
 * True when more than `max` connections (or detached sessions) are subscribed to the room: reads at most
 * `max + 1` rows, never the whole partition.
 */
export const audienceAbove = async (room: string, max: number): Promise<boolean> => {
  let seen = 0;
  let startKey: ItemKey | undefined;
  do {
    const read = await queryOnce(
      {
        TableName: table('channels'),
        KeyConditionExpression: 'channel = :channel',
        FilterExpression: NOT_EXPIRED,
        ExpressionAttributeNames: notExpiredNames,
        ExpressionAttributeValues: { ':channel': room, ':now': nowSecs() },
        Select: 'COUNT',
        Limit: max + 1 - seen,
      },
      startKey,
    );
    seen += read.count;
    startKey = read.nextKey;
  } while (seen <= max && startKey);
  return seen > max;
};

/** Arms the room's summary: claims the counting item, then queues the message that sends it. */
const armSummary = async (room: string, nowMs: number): Promise<void> => {
  const { summarySecs } = presenceSettings();
  const claim = newId();
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: summaryKey(room),
        UpdateExpression: 'SET claim = :claim, claimed_at = :now',
        ConditionExpression: 'attribute_not_exists(claim) OR claimed_at < :lost',
        ExpressionAttributeValues: {
          ':claim': claim,
          ':now': nowMs,
          ':lost': nowMs - summarySecs * 1000 - LOST_ARMING_MS,
        },
      }),
    );
  } catch (error) {
    // Another change armed it meanwhile: its summary counts this change too.
    if (error instanceof ConditionalCheckFailedException) return;
    throw error;
  }
  const message: PresenceSummaryMessage = { kind: 'presence.summary', room, claim };
  try {
    await enqueue(presenceSummaryQueue, [message], summarySecs);
  } catch (error) {
    // Unclaimed, the counts wait for the room's next change to arm them again.
    logger.error('presence summary not queued', { error: error as Error, room });
    await releaseClaim(room, claim);
    throw error;
  }
};

const releaseClaim = async (room: string, claim: string): Promise<void> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: summaryKey(room),
        UpdateExpression: 'REMOVE claim, claimed_at',
        ConditionExpression: 'claim = :claim',
        ExpressionAttributeValues: { ':claim': claim },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};

/**
 * Counts one change of a large room (one write) and, when no summary is armed, arms one (two more requests,
 * once per summary interval). Safe twice: a repeated change is counted twice, never lost.
 */
export const recordPresenceChange = async (room: string, change: PresenceFrame['change']): Promise<void> => {
  const nowMs = Date.now();
  const out = await documentClient().send(
    new UpdateCommand({
      TableName: table('presence'),
      Key: summaryKey(room),
      // All three counters, so that a summary's snapshot can copy each (pendingSummary).
      UpdateExpression:
        'ADD joins :joins, leaves :leaves, updates :updates SET since = if_not_exists(since, :now), #ttl = :ttl',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: {
        ':joins': change === 'join' ? 1 : 0,
        ':leaves': change === 'leave' ? 1 : 0,
        ':updates': change === 'update' ? 1 : 0,
        ':now': new Date(nowMs).toISOString(),
        ':ttl': nowSecs() + SUMMARY_TTL_SECS,
      },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const item = out.Attributes as { claim?: string; claimed_at?: number } | undefined;
  const armedAt = item?.claimed_at;
  const lostBefore = nowMs - presenceSettings().summarySecs * 1000 - LOST_ARMING_MS;
  if (item?.claim !== undefined && armedAt !== undefined && armedAt >= lostBefore) return;
  await armSummary(room, nowMs);
};

/**
 * The counts a summary message is to announce; undefined when its claim is no longer current (sent already).
 * The first read under a claim freezes them (a snapshot on the item), so a copy of the message (SQS at least
 * once) announces the very same summary under the same id, which clients drop, instead of larger counts that
 * a client dropping it by id would never see.
 */
export const pendingSummary = async (
  message: PresenceSummaryMessage,
): Promise<PendingSummary | undefined> => {
  try {
    const out = await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: summaryKey(message.room),
        UpdateExpression:
          'SET snap_joins = if_not_exists(snap_joins, joins), snap_leaves = if_not_exists(snap_leaves, leaves), ' +
          'snap_updates = if_not_exists(snap_updates, updates), snap_since = if_not_exists(snap_since, since), ' +
          'snap_at = if_not_exists(snap_at, :now)',
        ConditionExpression: 'claim = :claim',
        ExpressionAttributeValues: { ':claim': message.claim, ':now': new Date().toISOString() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const item = out.Attributes as Record<string, number | string | undefined>;
    return {
      joins: Number(item.snap_joins ?? 0),
      leaves: Number(item.snap_leaves ?? 0),
      updates: Number(item.snap_updates ?? 0),
      since: String(item.snap_since),
      at: String(item.snap_at),
      claim: message.claim,
    };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
};

/**
 * After the summary went out: subtracts what it announced and ends the claim. Changes counted meanwhile stay,
 * and arm the next summary. Safe twice: a second run finds another claim (or none) and does nothing.
 */
export const settleSummary = async (
  message: PresenceSummaryMessage,
  announced: PendingSummary,
  until: string,
): Promise<void> => {
  let left: { joins?: number; leaves?: number; updates?: number } | undefined;
  try {
    const out = await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: summaryKey(message.room),
        UpdateExpression:
          'ADD joins :joins, leaves :leaves, updates :updates SET since = :until ' +
          'REMOVE claim, claimed_at, snap_joins, snap_leaves, snap_updates, snap_since, snap_at',
        ConditionExpression: 'claim = :claim',
        ExpressionAttributeValues: {
          ':joins': -announced.joins,
          ':leaves': -announced.leaves,
          ':updates': -announced.updates,
          ':until': until,
          ':claim': message.claim,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    left = out.Attributes;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return;
    throw error;
  }
  if ((left?.joins ?? 0) + (left?.leaves ?? 0) + (left?.updates ?? 0) > 0)
    await armSummary(message.room, Date.now());
};
