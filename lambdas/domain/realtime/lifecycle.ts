import { DeleteConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../core/clients';
import { connectionsApi } from '../../core/clients-connections';
import { forEachLimited } from '../../core/concurrency';
import { newId } from '../../core/ids';
import { logger } from '../../core/logger';
import type { UserPrincipal } from '../../core/principal';
import { userChannel } from './channel-names';
import { realtimeSettings, shardOf } from './config';
import { type GoneConnection, isGone, postFrame } from './deliver';
import type { ErrorFrame, PresenceStatus, SessionFrame } from './frames';
import { type ConnectionStatus, presenceOnConnect, presenceOnDisconnect } from './presence';
import { liveItemTtl, nowSecs, SESSION_META, table } from './tables';

/** A row of the connections table. */
export interface ConnectionRecord {
  readonly connection_id: string;
  /** Partition of the `byShard` index. */
  readonly shard: string;
  /** Epoch seconds from which the sweeper must look at this connection (auth deadline, token expiry, silence). */
  readonly check_at: number;
  /** Epoch milliseconds. */
  readonly connected_at: number;
  readonly ttl: number;
  /** Set once authenticated. */
  readonly user_id?: string;
  readonly session_id?: string;
  /**
   * Epoch seconds when the token stops passing verification: its `exp` plus the clock skew the verifier
   * tolerates, so a token `auth` accepted is not closed as expired by the next sweep.
   */
  readonly token_expires_at?: number;
  /** String sets (ADD/DELETE keep concurrent frames of one connection from losing each other's changes). */
  readonly channels?: Set<string>;
  readonly rooms?: Set<string>;
  readonly status?: PresenceStatus;
  /** How many `presence.update`s set `status` (none: 0); presence rows carry it (presence.ts). */
  readonly status_version?: number;
  /** Whether the `session` frame went out. */
  readonly welcomed?: boolean;
  /** Set when the auth deadline closes it: a racing `auth` frame can no longer authenticate it. */
  readonly auth_closed?: boolean;
}

export type EndReason = 'disconnect' | 'gone' | 'idle' | 'auth_timeout' | 'token_expired' | 'taken_over';

export const getConnection = async (connectionId: string): Promise<ConnectionRecord | undefined> => {
  const result = await documentClient().send(
    new GetCommand({
      TableName: table('connections'),
      Key: { connection_id: connectionId },
      ConsistentRead: true,
    }),
  );
  const item = result.Item as ConnectionRecord | undefined;
  return item && item.ttl > nowSecs() ? item : undefined;
};

export const sessionFrameOf = (connection: { session_id: string; user_id: string }): SessionFrame => ({
  type: 'session',
  session_id: connection.session_id,
  user_id: connection.user_id,
  heartbeat_interval_ms: realtimeSettings().heartbeatIntervalMs,
});

const checkAtFor = (tokenExpiresAt: number) =>
  Math.min(tokenExpiresAt, nowSecs() + realtimeSettings().idleTimeoutSecs);

/**
 * Membership row of a connection: live by default; `detached` once the connection ended, so frames go to its
 * session's replay buffer until the session expires (`ttl`).
 */
export const putMembership = async (
  channel: string,
  connectionId: string,
  userId: string,
  sessionId: string,
  detachedUntil?: number,
): Promise<void> => {
  await documentClient().send(
    new PutCommand({
      TableName: table('channels'),
      Item: {
        channel,
        connection_id: connectionId,
        user_id: userId,
        session_id: sessionId,
        ...(detachedUntil === undefined ? { ttl: liveItemTtl() } : { detached: true, ttl: detachedUntil }),
      },
    }),
  );
};

/** Creates a new session for an authenticated connection: meta item, `user:<id>` membership, presence. */
const startSession = async (connectionId: string, userId: string): Promise<string> => {
  const sessionId = newId();
  await documentClient().send(
    new PutCommand({
      TableName: table('sessions'),
      Item: {
        session_id: sessionId,
        item: SESSION_META,
        user_id: userId,
        connection_id: connectionId,
        ttl: liveItemTtl(),
      },
    }),
  );
  await putMembership(userChannel(userId), connectionId, userId, sessionId);
  await presenceOnConnect(userId, connectionId);
  return sessionId;
};

/**
 * `$connect`: records the connection. With a principal it is authenticated at once (its new session's id is
 * returned); without, the sweeper closes it unless `auth` arrives within the auth timeout.
 */
export const openConnection = async (
  connectionId: string,
  principal?: UserPrincipal,
): Promise<string | undefined> => {
  const connectedAt = Date.now();
  const base = {
    connection_id: connectionId,
    shard: shardOf(connectionId),
    connected_at: connectedAt,
    ttl: liveItemTtl(),
  };
  if (!principal) {
    await documentClient().send(
      new PutCommand({
        TableName: table('connections'),
        Item: { ...base, check_at: nowSecs() + realtimeSettings().authTimeoutSecs },
      }),
    );
    return undefined;
  }
  const sessionId = await startSession(connectionId, principal.id);
  await documentClient().send(
    new PutCommand({
      TableName: table('connections'),
      Item: {
        ...base,
        check_at: checkAtFor(principal.acceptedUntil),
        user_id: principal.id,
        session_id: sessionId,
        token_expires_at: principal.acceptedUntil,
        channels: new Set([userChannel(principal.id)]),
        status: 'online',
      },
    }),
  );
  return sessionId;
};

export type AuthOutcome =
  | { readonly kind: 'authenticated'; readonly session: SessionFrame }
  | { readonly kind: 'refreshed' }
  | { readonly kind: 'other_user' }
  | { readonly kind: 'gone' };

/**
 * The `auth` frame: authenticates an anonymous connection (new session, `user:<id>` subscription), or, for the
 * same user, replaces the token so the connection outlives the old one's expiry. Another user's token is refused.
 */
export const authenticateConnection = async (
  connectionId: string,
  principal: UserPrincipal,
): Promise<AuthOutcome> => {
  const connection = await getConnection(connectionId);
  if (!connection || connection.auth_closed) return { kind: 'gone' };
  if (connection.user_id !== undefined) {
    if (connection.user_id !== principal.id) return { kind: 'other_user' };
    await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connectionId },
        UpdateExpression: 'SET token_expires_at = :exp, check_at = :check',
        ConditionExpression: 'attribute_exists(connection_id)',
        ExpressionAttributeValues: {
          ':exp': principal.acceptedUntil,
          ':check': checkAtFor(principal.acceptedUntil),
        },
      }),
    );
    return { kind: 'refreshed' };
  }
  try {
    // Claim the connection first, so two racing `auth` frames cannot start two sessions.
    await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connectionId },
        UpdateExpression:
          'SET user_id = :user, token_expires_at = :exp, check_at = :check, #status = :online',
        ConditionExpression:
          'attribute_exists(connection_id) AND attribute_not_exists(user_id) AND attribute_not_exists(auth_closed)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':user': principal.id,
          ':exp': principal.acceptedUntil,
          ':check': checkAtFor(principal.acceptedUntil),
          ':online': 'online',
        },
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      return authenticateConnection(connectionId, principal);
    throw error;
  }
  const sessionId = await startSession(connectionId, principal.id);
  await documentClient().send(
    new UpdateCommand({
      TableName: table('connections'),
      Key: { connection_id: connectionId },
      UpdateExpression: 'SET session_id = :session, welcomed = :true ADD channels :channels',
      ExpressionAttributeValues: {
        ':session': sessionId,
        ':channels': new Set([userChannel(principal.id)]),
        ':true': true,
      },
    }),
  );
  return { kind: 'authenticated', session: sessionFrameOf({ session_id: sessionId, user_id: principal.id }) };
};

/**
 * Sets (or, `remove`, takes away) a flag on a connection's item when `condition` holds; false when it does not
 * (someone else claimed it, or the connection is gone).
 */
const updateFlag = async (
  connectionId: string,
  flag: 'auth_closed' | 'welcomed',
  condition: string,
  values: Readonly<Record<string, string | boolean>> = {},
  remove = false,
): Promise<boolean> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connectionId },
        UpdateExpression: remove ? `REMOVE ${flag}` : `SET ${flag} = :true`,
        ConditionExpression: condition,
        ExpressionAttributeValues: { ...(remove ? {} : { ':true': true }), ...values },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

const claimFlag = (
  connectionId: string,
  flag: 'auth_closed' | 'welcomed',
  condition: string,
  values: Readonly<Record<string, string>> = {},
): Promise<boolean> => updateFlag(connectionId, flag, condition, values);

/**
 * The auth deadline's claim on a connection: true when it was still unauthenticated and is now marked closing,
 * so an `auth` frame racing the deadline either wins before this or is refused after it.
 */
export const claimAuthDeadline = (connectionId: string): Promise<boolean> =>
  claimFlag(connectionId, 'auth_closed', 'attribute_exists(connection_id) AND attribute_not_exists(user_id)');

/** Marks the `session` frame sent; false when another path sent it first. */
export const claimWelcome = (connectionId: string, sessionId?: string): Promise<boolean> =>
  sessionId === undefined
    ? claimFlag(connectionId, 'welcomed', 'attribute_exists(session_id) AND attribute_not_exists(welcomed)')
    : claimFlag(connectionId, 'welcomed', 'session_id = :session AND attribute_not_exists(welcomed)', {
        ':session': sessionId,
      });

/** Gives a welcome claim back (the frame could not be posted), so that another path can send the frame. */
export const releaseWelcome = async (connectionId: string, sessionId: string): Promise<void> => {
  // False when the connection is gone or on another session by now: nothing to give back.
  await updateFlag(
    connectionId,
    'welcomed',
    'session_id = :session AND welcomed = :welcomed',
    { ':session': sessionId, ':welcomed': true },
    true,
  );
};

const dropMemberships = async (channels: readonly string[], connectionId: string): Promise<void> => {
  await Promise.all(
    channels.map((channel) =>
      documentClient().send(
        new DeleteCommand({ TableName: table('channels'), Key: { channel, connection_id: connectionId } }),
      ),
    ),
  );
};

/**
 * A session loses its connection: the meta item records when and what to restore, and the connection's
 * memberships become detached rows that buffer frames until the session expires. When the session has moved
 * on to another connection already, the memberships are simply deleted.
 */
export const detachSession = async (ended: {
  readonly sessionId: string;
  readonly connectionId: string;
  readonly userId: string;
  readonly channels: readonly string[];
  readonly rooms: readonly string[];
}): Promise<void> => {
  const sessionTtl = nowSecs() + realtimeSettings().sessionTtlSecs;
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('sessions'),
        Key: { session_id: ended.sessionId, item: SESSION_META },
        UpdateExpression: 'SET ended_at = :now, channels = :channels, rooms = :rooms, #ttl = :ttl',
        ConditionExpression: 'connection_id = :connection',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':now': Date.now(),
          ':channels': ended.channels,
          ':rooms': ended.rooms,
          ':ttl': sessionTtl,
          ':connection': ended.connectionId,
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    await dropMemberships(ended.channels, ended.connectionId);
    return;
  }
  await Promise.all(
    ended.channels.map((channel) =>
      putMembership(channel, ended.connectionId, ended.userId, ended.sessionId, sessionTtl),
    ),
  );
};

/**
 * Ends a connection for any reason, exactly once (the conditional delete decides who does the clean-up):
 * the connection item goes; its channel memberships become detached rows that buffer frames for the session
 * until it expires (or are deleted when the session has moved on); the session meta keeps the channels and
 * rooms for `reconnect`; presence rows go and its rooms see `leave`/`update`.
 */
export const endConnection = async (
  connectionId: string,
  reason: EndReason,
): Promise<ConnectionRecord | undefined> => {
  const deleted = await documentClient().send(
    new DeleteCommand({
      TableName: table('connections'),
      Key: { connection_id: connectionId },
      ReturnValues: 'ALL_OLD',
    }),
  );
  const connection = deleted.Attributes as ConnectionRecord | undefined;
  if (connection) logger.debug('connection ended', { connection_id: connectionId, reason });
  if (!connection?.session_id || !connection.user_id) return connection;
  const { session_id: sessionId, user_id: userId } = connection;
  const channels = [...(connection.channels ?? [])];
  const rooms = [...(connection.rooms ?? [])];
  await detachSession({ sessionId, connectionId, userId, channels, rooms });
  await endGoneConnections(await presenceOnDisconnect(userId, connectionId, rooms));
  return connection;
};

/**
 * A close the server starts: tells the client why (when there is something to tell; contract §4 — the close
 * code cannot say it), closes the socket (`@connections` DELETE), then cleans up without waiting for
 * `$disconnect`, which may never arrive on AWS (the clean-up is idempotent).
 */
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
  await endConnection(connectionId, reason);
};

/** Connections ended at once while ending the ones a delivery found gone. */
const GONE_CONCURRENCY = 16;

/**
 * Ends the connections a delivery found closed (410): their sessions already keep the frame, and ending them
 * detaches their memberships and updates presence. A connection with no record (already cleaned up, or never
 * fully written) leaves an orphaned membership: dropped, unless a concurrent end of that connection has just
 * turned it into a detached row (which buffers frames).
 */
export const endGoneConnections = async (gone: readonly GoneConnection[]): Promise<void> => {
  await forEachLimited(gone, GONE_CONCURRENCY, async ({ connection_id: connectionId, channel }) => {
    logger.info('connection gone during delivery', { connection_id: connectionId });
    if ((await endConnection(connectionId, 'gone')) || channel === undefined) return;
    try {
      await documentClient().send(
        new DeleteCommand({
          TableName: table('channels'),
          Key: { channel, connection_id: connectionId },
          ConditionExpression: 'attribute_not_exists(detached)',
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
    }
  });
};

/** The connection's status as its item holds it (an item written before any `presence.update`: version 0). */
export const connectionStatusOf = (
  connection: Pick<ConnectionRecord, 'status' | 'status_version'>,
): ConnectionStatus => ({
  status: connection.status ?? 'online',
  version: connection.status_version ?? 0,
});

/**
 * `presence.update`: the connection's status, with its next version, and the rooms it is in once the status is
 * set (a `join.room` handled at the same time either adds its room before this write, and is listed, or reads
 * this status after it).
 */
export const setConnectionStatus = async (
  connectionId: string,
  status: PresenceStatus,
): Promise<{ status: ConnectionStatus; rooms: string[] }> => {
  const result = await documentClient().send(
    new UpdateCommand({
      TableName: table('connections'),
      Key: { connection_id: connectionId },
      UpdateExpression: 'SET #status = :status ADD status_version :one',
      ConditionExpression: 'attribute_exists(connection_id)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ':one': 1 },
      ReturnValues: 'ALL_NEW',
    }),
  );
  const connection = result.Attributes as ConnectionRecord;
  return { status: connectionStatusOf(connection), rooms: [...(connection.rooms ?? [])] };
};
