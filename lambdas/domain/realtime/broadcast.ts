import { forEachLimited } from '../../core/concurrency';
import { unavailable } from '../../core/errors';
import { logger } from '../../core/logger';
import { countQuery, queryOnce } from '../../core/paging';
import { enqueue } from '../../core/sqs-send';
import { type BroadcastChunk, broadcastQueue } from './broadcast-queue';
import { parseChannel } from './channel-names';
import { shardNames } from './config';
import { type ConnectionRange, deliverToMembers, MEMBERS_PAGE, membersPage, postFrame } from './deliver';
import type { BroadcastFrame } from './frames';
import { endConnection, endGoneConnections } from './lifecycle';
import { BY_SHARD_INDEX, NOT_EXPIRED, notExpiredNames, nowSecs, table } from './tables';

/** Audiences up to this size are delivered by the request itself; larger ones go through the queue. */
export const INLINE_AUDIENCE = 100;

/**
 * A large channel (a room of 100,000) is one partition; read page after page by one chain of chunks it takes
 * about a minute on AWS (docs/scale.md, hot keys). It is split instead into segments of about this many
 * members, ranges of connection ids, each its own chain: the segments run in parallel.
 */
export const SEGMENT_MEMBERS = 5_000;
export const MAX_SEGMENTS = 32;
/**
 * The characters connection ids mostly start with (base64 letters and digits), in DynamoDB's byte order: the
 * cuts between segments. Rarer first characters (`+`, `/`, anything else) still fall in some segment.
 */
const ID_FIRST_CHARACTERS = [...'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'];
/** Below and above every connection id: the segments together cover any string. */
const LOWEST = '\u0000';
const HIGHEST = '\u{10FFFF}';

/**
 * `segments` contiguous ranges of connection ids that together cover every possible id, cut at first characters
 * of API Gateway ids so that random ids spread evenly. One segment (or none asked) means the whole partition.
 */
export const connectionRanges = (segments: number): ConnectionRange[] => {
  const count = Math.min(Math.max(1, Math.floor(segments)), ID_FIRST_CHARACTERS.length);
  if (count === 1) return [];
  const starts = Array.from(
    { length: count - 1 },
    (_, index) =>
      ID_FIRST_CHARACTERS[Math.round(((index + 1) * ID_FIRST_CHARACTERS.length) / count)] as string,
  );
  // Up to (not including) the next start: its preceding character followed by the highest one.
  const before = (start: string) => `${String.fromCharCode(start.charCodeAt(0) - 1)}${HIGHEST}`;
  return [LOWEST, ...starts].map((from, index) => {
    const next = starts[index];
    return { from, to: next === undefined ? HIGHEST : before(next) };
  });
};

/**
 * Connections subscribed to the channel, and sessions that were (detached rows): those get the frame when they
 * reconnect, so they are recipients too, and an audience of detached sessions only is still delivered.
 */
export const channelAudience = (channel: string): Promise<number> =>
  countQuery({
    TableName: table('channels'),
    KeyConditionExpression: 'channel = :channel',
    FilterExpression: NOT_EXPIRED,
    ExpressionAttributeNames: notExpiredNames,
    ExpressionAttributeValues: { ':channel': channel, ':now': nowSecs() },
  });

/** Authenticated open connections, counted shard by shard on the `byShard` index. */
export const everyoneAudience = async (): Promise<number> => {
  let total = 0;
  for (const shard of shardNames()) {
    total += await countQuery({
      TableName: table('connections'),
      IndexName: BY_SHARD_INDEX,
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': 'shard' },
      FilterExpression: 'attribute_exists(user_id)',
      ExpressionAttributeValues: { ':shard': shard },
    });
  }
  return total;
};

export interface BroadcastPlan {
  readonly recipients: number;
  /** Chunks to enqueue; empty when delivered inline. */
  readonly chunks: BroadcastChunk[];
}

/**
 * POST /broadcast: counts the audience, delivers small channel audiences at once, and turns larger ones (and
 * "everyone") into queue chunks, one per segment of the channel or per connection shard; each chunk enqueues its
 * own successor, so the segments and shards are delivered in parallel.
 */
export const planBroadcast = async (
  channel: string | undefined,
  frame: BroadcastFrame,
  segmentMembers = SEGMENT_MEMBERS,
): Promise<BroadcastPlan> => {
  if (channel !== undefined) {
    parseChannel(channel);
    const recipients = await channelAudience(channel);
    if (recipients === 0) return { recipients, chunks: [] };
    if (recipients <= INLINE_AUDIENCE) {
      await runChunk({ kind: 'channel', channel, frame });
      return { recipients, chunks: [] };
    }
    const ranges = connectionRanges(Math.min(MAX_SEGMENTS, Math.ceil(recipients / segmentMembers)));
    if (ranges.length === 0) return { recipients, chunks: [{ kind: 'channel', channel, frame }] };
    return { recipients, chunks: ranges.map((range) => ({ kind: 'channel', channel, frame, range })) };
  }
  const recipients = await everyoneAudience();
  if (recipients === 0) return { recipients, chunks: [] };
  return { recipients, chunks: shardNames().map((shard) => ({ kind: 'shard', shard, frame })) };
};

/** Delivers one chunk (up to MEMBERS_PAGE connections) and returns the chunk that continues it, if any. */
export const runChunk = async (chunk: BroadcastChunk): Promise<BroadcastChunk | undefined> => {
  if (chunk.kind === 'channel') {
    const page = await membersPage(chunk.channel, chunk.startKey, MEMBERS_PAGE, chunk.range);
    await endGoneConnections((await deliverToMembers(page.members, chunk.frame)).gone);
    return page.next ? { ...chunk, startKey: page.next } : undefined;
  }
  const page = await queryOnce<{ connection_id: string }>(
    {
      TableName: table('connections'),
      IndexName: BY_SHARD_INDEX,
      KeyConditionExpression: '#shard = :shard',
      ExpressionAttributeNames: { '#shard': 'shard' },
      FilterExpression: 'attribute_exists(user_id)',
      ExpressionAttributeValues: { ':shard': chunk.shard },
      Limit: MEMBERS_PAGE,
    },
    chunk.startKey,
  );
  const ids = page.items.map((item) => item.connection_id);
  await forEachLimited(ids, 32, async (connectionId) => {
    if ((await postFrame(connectionId, chunk.frame)) === 'gone') {
      logger.info('connection gone during broadcast', { connection_id: connectionId });
      await endConnection(connectionId, 'gone');
    }
  });
  return page.nextKey ? { ...chunk, startKey: page.nextKey } : undefined;
};

/** Puts chunks on the `broadcast` queue; one that does not get there would silently shrink the audience. */
const enqueueChunks = async (chunks: readonly BroadcastChunk[]): Promise<void> => {
  try {
    await enqueue(broadcastQueue, chunks);
  } catch (error) {
    logger.error('broadcast chunks not queued', { error: error as Error });
    throw unavailable('The broadcast could not be queued, try again later');
  }
};

/** POST /broadcast: plans it (small audiences delivered at once), queues the rest; the recipient count. */
export const broadcast = async (channel: string | undefined, frame: BroadcastFrame): Promise<number> => {
  const plan = await planBroadcast(channel, frame);
  if (plan.chunks.length > 0) await enqueueChunks(plan.chunks);
  return plan.recipients;
};

/** The `broadcast.fanout` worker: one chunk delivered, the rest of its chain queued as the next chunk. */
export const continueBroadcast = async (chunk: BroadcastChunk): Promise<void> => {
  const next = await runChunk(chunk);
  if (next) await enqueueChunks([next]);
};
