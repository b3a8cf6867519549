import { DeleteConnectionCommand, GetConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { queueUrl } from '../../core/clients';
import { connectionsApi } from '../../core/clients-connections';
import { forEachLimited } from '../../core/concurrency';
import { logger } from '../../core/logger';
import { queryAll } from '../../core/paging';
import { sendAll } from '../../core/sqs-send';
import { realtimeSettings, shardNames } from './config';
import { postFrame } from './deliver';
import { type ErrorFrame, errorFrame } from './frames';
import {
  type ConnectionRecord,
  claimAuthDeadline,
  type EndReason,
  endConnection,
  getConnection,
} from './lifecycle';
import { BY_SHARD_INDEX, table } from './tables';

const isGone = (error: unknown) =>
  error instanceof Error &&
  (error.name === 'GoneException' ||
    (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410);

/** Connection ids whose `check_at` has passed, from one shard of the index (a key-range Query). */
const dueInShard = async (shard: string, nowSecs: number): Promise<string[]> => {
  const items = await queryAll<{ connection_id: string }>({
    TableName: table('connections'),
    IndexName: BY_SHARD_INDEX,
    KeyConditionExpression: '#shard = :shard AND check_at <= :now',
    ExpressionAttributeNames: { '#shard': 'shard' },
    ExpressionAttributeValues: { ':shard': shard, ':now': nowSecs },
  });
  return items.map((item) => item.connection_id);
};

/** Tells the client why (when there is something to tell), closes the socket, then cleans up ourselves. */
export const closeConnection = async (
  connectionId: string,
  reason: EndReason,
  frame?: ErrorFrame,
): Promise<void> => {
  try {
    if (frame) await postFrame(connectionId, frame);
    await connectionsApi().send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if (!isGone(error)) throw error;
  }
  // $disconnect may never arrive on AWS: the clean-up does not wait for it (it is idempotent).
  await endConnection(connectionId, reason);
};

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

export type SweepVerdict = 'auth_timeout' | 'token_expired' | 'idle' | 'gone' | 'alive';

/** Milliseconds until an unauthenticated connection's auth deadline (≤ 0: it has passed). */
const untilAuthDeadline = (connection: ConnectionRecord, nowMs: number): number =>
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
 * sweep runs once a minute. Closes the connection if it is still unauthenticated; the seconds left when the
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

/** Arms (or re-arms) the auth deadline timer of a connection opened without a token. */
export const armAuthDeadline = (connectionId: string, delaySecs: number): Promise<void> =>
  sendAll(queueUrl('wsAuthDeadline'), [JSON.stringify({ connection_id: connectionId })], delaySecs);

const inspect = async (connection: ConnectionRecord, nowMs: number): Promise<SweepVerdict> => {
  const settings = realtimeSettings();
  if (!connection.user_id) {
    // The timer armed at $connect normally closes it first; the sweep is the backstop.
    if (untilAuthDeadline(connection, nowMs) > 0) return 'alive';
    return (await closeUnauthenticated(connection.connection_id)) ? 'auth_timeout' : 'alive';
  }
  if ((connection.token_expires_at ?? Number.POSITIVE_INFINITY) * 1000 <= nowMs) {
    await closeConnection(
      connection.connection_id,
      'token_expired',
      errorFrame(
        'token_expired',
        'The token has expired; closing the connection (send a fresh auth frame before expiry)',
      ),
    );
    return 'token_expired';
  }
  const lastActive = await lastActiveAt(connection.connection_id);
  if (lastActive === undefined) {
    await endConnection(connection.connection_id, 'gone');
    return 'gone';
  }
  if (lastActive + settings.idleTimeoutSecs * 1000 > nowMs) return 'alive';
  await closeConnection(
    connection.connection_id,
    'idle',
    errorFrame('idle_timeout', `No frame for ${settings.idleTimeoutSecs} s; closing the connection`),
  );
  return 'idle';
};

/**
 * One sweep: every shard's connections whose `check_at` has passed (auth deadline, token expiry, or the idle
 * timeout since they connected) are inspected. Heartbeats write nothing, so silence is judged from API Gateway's
 * own LastActiveAt (GetConnection). A live connection keeps its past `check_at` and is simply looked at again
 * next sweep: that costs a Query row and a GetConnection, where moving it would cost a write.
 */
export const sweep = async (nowMs = Date.now()): Promise<Record<SweepVerdict, number>> => {
  const counts: Record<SweepVerdict, number> = {
    auth_timeout: 0,
    token_expired: 0,
    idle: 0,
    gone: 0,
    alive: 0,
  };
  const nowSecs = Math.floor(nowMs / 1000);
  for (const shard of shardNames()) {
    const due = await dueInShard(shard, nowSecs);
    await forEachLimited(due, 16, async (connectionId) => {
      try {
        const connection = await getConnection(connectionId);
        if (!connection) return;
        counts[await inspect(connection, nowMs)] += 1;
      } catch (error) {
        // One connection's failure must not stop the sweep of the others; the next sweep retries it.
        logger.error('sweep of a connection failed', { connection_id: connectionId, error: error as Error });
      }
    });
  }
  return counts;
};
