import { GetConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { connectionsApi } from '../../core/clients-connections';
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import { messageQueue } from '../../core/message-queue';
import { queryAll } from '../../core/paging';
import { enqueue } from '../../core/sqs-send';
import * as z from '../../core/zod';
import { realtimeSettings, shardNames } from './config';
import { isGone } from './deliver';
import { errorFrame } from './frames';
import {
  type ConnectionRecord,
  claimAuthDeadline,
  closeConnection,
  endConnection,
  getConnection,
} from './lifecycle';
import type { AliveUntil } from './sweep-schedule';
import { BY_SHARD_INDEX, table } from './tables';

/** What the `byShard` index projects: enough to judge a connection without reading its item. */
type IndexRow = Pick<
  ConnectionRecord,
  'connection_id' | 'shard' | 'check_at' | 'connected_at' | 'user_id' | 'token_expires_at'
>;

/** Rows whose `check_at` has passed, from one shard of the index (a key-range Query, eventually consistent). */
const dueInShard = (shard: string, nowSecs: number): Promise<IndexRow[]> =>
  queryAll<IndexRow>({
    TableName: table('connections'),
    IndexName: BY_SHARD_INDEX,
    KeyConditionExpression: '#shard = :shard AND check_at <= :now',
    ExpressionAttributeNames: { '#shard': 'shard' },
    ExpressionAttributeValues: { ':shard': shard, ':now': nowSecs },
  });

/** When API Gateway last saw traffic from the client; undefined when the connection is gone. */
const lastActiveAt = async (connectionId: string): Promise<number | undefined> => {
  try {
    const result = await connectionsApi().send(new GetConnectionCommand({ ConnectionId: connectionId }));
    return result.LastActiveAt?.getTime() ?? result.ConnectedAt?.getTime() ?? Date.now();
  } catch (error) {
    if (isGone(error)) return undefined;
    throw error;
  }
};

/** `known_alive`: an earlier sweep's GetConnection showed it cannot be silent long enough yet; not asked. */
export type SweepVerdict = 'auth_timeout' | 'token_expired' | 'idle' | 'gone' | 'alive' | 'known_alive';

/** Milliseconds until an unauthenticated connection's auth deadline (≤ 0: it has passed). */
const untilAuthDeadline = (connection: Pick<ConnectionRecord, 'connected_at'>, nowMs: number): number =>
  connection.connected_at + realtimeSettings().authTimeoutSecs * 1000 - nowMs;

/** Closes a connection past its auth deadline unless an `auth` frame authenticated it meanwhile. */
const closeUnauthenticated = async (connectionId: string): Promise<boolean> => {
  if (!(await claimAuthDeadline(connectionId))) return false;
  await closeConnection(
    connectionId,
    'auth_timeout',
    errorFrame(
      'unauthorized',
      `No auth frame within ${realtimeSettings().authTimeoutSecs} s; closing the connection`,
    ),
  );
  return true;
};

/**
 * The auth deadline's own timer (docs/realtime.md): `$connect` arms it for a connection without a token, as a
 * message delayed by the auth timeout, so the close comes within seconds of the deadline on AWS too, where the
 * sweeps come 20 s apart (too late for 15 s). Closes the connection if it is still unauthenticated; the seconds left when the
 * message came early (the caller re-arms it), else undefined.
 */
export const enforceAuthDeadline = async (
  connectionId: string,
  nowMs = Date.now(),
): Promise<number | undefined> => {
  const connection = await getConnection(connectionId);
  if (!connection || connection.user_id !== undefined) return undefined;
  const left = untilAuthDeadline(connection, nowMs);
  if (left > 0) return Math.ceil(left / 1000);
  await closeUnauthenticated(connectionId);
  return undefined;
};

/** The `wsAuthDeadline` queue: the auth deadline timers, one message per connection opened without a token. */
export const authDeadlineQueue = messageQueue('wsAuthDeadline', z.object({ connection_id: z.string() }));

/** Arms (or re-arms) the auth deadline timer of a connection opened without a token. */
export const armAuthDeadline = (connectionId: string, delaySecs: number): Promise<void> =>
  enqueue(authDeadlineQueue, [{ connection_id: connectionId }], delaySecs);

type Judgement = 'alive' | 'auth_timeout' | 'token_expired' | 'ask_gateway';

/** What a connection's recorded deadlines say, before asking API Gateway about its activity. */
const judge = (connection: IndexRow, nowMs: number): Judgement => {
  // Unauthenticated: the timer armed at $connect normally closes it first; the sweep is the backstop.
  if (!connection.user_id) return untilAuthDeadline(connection, nowMs) > 0 ? 'alive' : 'auth_timeout';
  if ((connection.token_expires_at ?? Number.POSITIVE_INFINITY) * 1000 <= nowMs) return 'token_expired';
  return 'ask_gateway';
};

const inspect = async (
  row: IndexRow,
  nowMs: number,
  known: AliveUntil,
  learnt: Map<string, number>,
): Promise<SweepVerdict> => {
  const settings = realtimeSettings();
  let judgement = judge(row, nowMs);
  if (judgement === 'alive') return 'alive';
  if (judgement !== 'ask_gateway') {
    // The index copy may be a moment old (an `auth` frame just now): act only on what the item says.
    const connection = await getConnection(row.connection_id);
    if (!connection) return 'gone';
    judgement = judge(connection, nowMs);
  }
  if (judgement === 'alive') return 'alive';
  if (judgement === 'auth_timeout') {
    return (await closeUnauthenticated(row.connection_id)) ? 'auth_timeout' : 'alive';
  }
  if (judgement === 'token_expired') {
    await closeConnection(
      row.connection_id,
      'token_expired',
      errorFrame(
        'token_expired',
        'The token has expired; closing the connection (send a fresh auth frame before expiry)',
      ),
    );
    return 'token_expired';
  }
  // LastActiveAt only moves forward: silence cannot reach the idle timeout before what a sweep learnt.
  if ((known.get(row.connection_id) ?? 0) * 1000 > nowMs) return 'known_alive';
  const lastActive = await lastActiveAt(row.connection_id);
  if (lastActive === undefined) {
    await endConnection(row.connection_id, 'gone');
    return 'gone';
  }
  const silentEnoughAt = lastActive + settings.idleTimeoutSecs * 1000;
  if (silentEnoughAt > nowMs) {
    learnt.set(row.connection_id, Math.floor(silentEnoughAt / 1000));
    return 'alive';
  }
  await closeConnection(
    row.connection_id,
    'idle',
    errorFrame('idle_timeout', `No frame for ${settings.idleTimeoutSecs} s; closing the connection`),
  );
  return 'idle';
};

const noVerdicts = (): Record<SweepVerdict, number> => ({
  auth_timeout: 0,
  token_expired: 0,
  idle: 0,
  gone: 0,
  alive: 0,
  known_alive: 0,
});

/** Connections of one shard checked at once (GetConnection calls in flight). */
const SWEEP_CONCURRENCY = 32;

/** What one shard's sweep did, and which connections it found alive until when (for the next sweep). */
export interface ShardSweep {
  readonly counts: Record<SweepVerdict, number>;
  readonly alive: Map<string, number>;
}

/**
 * Sweeps one shard: its connections whose `check_at` has passed (auth deadline, token expiry, or the idle
 * timeout since they authenticated) are judged from the index row; only the authenticated ones within their
 * token's life cost a GetConnection (API Gateway's LastActiveAt: heartbeats write nothing, and a MOCK route
 * answers them), and not those that `known` (an earlier sweep of the minute) shows cannot be silent long enough
 * yet; only a close reads the item. A live connection keeps its past `check_at`, where moving it would cost
 * ~3 WRU. Safe to run twice and overlapping: every close is idempotent (`endConnection`) or claimed
 * (`claimAuthDeadline`).
 */
export const sweepShard = async (
  shard: string,
  nowMs = Date.now(),
  known: AliveUntil = new Map(),
): Promise<ShardSweep> => {
  const counts = noVerdicts();
  // What the earlier sweeps knew and this one learnt: handed on to the next sweep of the minute.
  const alive = new Map(known);
  const due = await dueInShard(shard, Math.floor(nowMs / 1000));
  await forEachLimited(due, SWEEP_CONCURRENCY, async (row) => {
    try {
      counts[await inspect(row, nowMs, known, alive)] += 1;
    } catch (error) {
      // One connection's failure must not stop the sweep of the others; the next sweep retries it.
      logger.error('sweep of a connection failed', {
        connection_id: row.connection_id,
        error: error as Error,
      });
    }
  });
  return { counts, alive };
};

/** Every shard, one after the other, in this process: for tests and tools (deployed sweeps go by shard). */
export const sweep = async (nowMs = Date.now()): Promise<Record<SweepVerdict, number>> => {
  const counts = noVerdicts();
  for (const shard of shardNames()) {
    const { counts: shardCounts } = await sweepShard(shard, nowMs);
    for (const verdict of Object.keys(counts) as SweepVerdict[]) counts[verdict] += shardCounts[verdict];
  }
  return counts;
};
