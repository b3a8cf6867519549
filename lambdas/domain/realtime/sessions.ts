import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchDeleteAll } from '../../core/batch-write';
import { documentClient } from '../../core/clients';
import { queryPages } from '../../core/paging';
import type { Authenticated } from './channels';
import { MAX_CHANNELS_PER_CONNECTION, MAX_REPLAYED_FRAMES } from './config';
import type { OutboundFrame } from './frames';
import { errorFrame } from './frames';
import {
  type ConnectionRecord,
  closeConnection,
  connectionStatusOf,
  detachSession,
  endGoneConnections,
  putMembership,
} from './lifecycle';
import { joinRoomPresence } from './presence';
import { readSessionMeta, type SessionMeta } from './session-meta';
import { FRAME_PREFIX, liveItemTtl, nowSecs, SESSION_META, table } from './tables';

export class SessionExpiredError extends Error {
  constructor() {
    super('The session is unknown or has expired');
    this.name = 'SessionExpiredError';
  }
}

/**
 * What a resume replays: the session's newest 100 distinct buffered frames above `floor` (what an earlier resume
 * dropped), oldest first, a frame kept twice at the place of its first copy (`frames`); the keys the resume then
 * deletes (`keys`: the frames read, copies included); and, when more frames were kept than it replays, the oldest
 * key it read (`floor`): the frames below it are dropped, left to their TTL, and the next resume reads above it.
 * The buffer is read newest first, 100 items a page, only as far as the 100 frames: one Query for a usual resume.
 */
export const bufferedFrames = async (
  sessionId: string,
  floor?: string,
): Promise<{ keys: string[]; frames: OutboundFrame[]; floor?: string }> => {
  const keys: string[] = [];
  /** The frames to replay, with the position of their oldest copy read (0 is the newest item). */
  const window: { frame: OutboundFrame; position: number }[] = [];
  const byIdentity = new Map<string, { frame: OutboundFrame; position: number }>();
  const now = nowSecs();
  let full = false;
  const pages = queryPages<{ item: string; frame: string; ttl: number }>({
    TableName: table('sessions'),
    KeyConditionExpression: floor
      ? 'session_id = :session AND #item BETWEEN :floor AND :last'
      : 'session_id = :session AND begins_with(#item, :prefix)',
    ExpressionAttributeNames: { '#item': 'item' },
    ExpressionAttributeValues: floor
      ? { ':session': sessionId, ':floor': floor, ':last': `${FRAME_PREFIX}\uffff` }
      : { ':session': sessionId, ':prefix': FRAME_PREFIX },
    ScanIndexForward: false,
    Limit: MAX_REPLAYED_FRAMES,
    ConsistentRead: true,
  });
  reading: for await (const page of pages) {
    for (const item of page) {
      if (window.length === MAX_REPLAYED_FRAMES) {
        full = true;
        break reading;
      }
      const position = keys.push(item.item);
      if (item.ttl <= now) continue;
      const frame = JSON.parse(item.frame) as OutboundFrame;
      const identity = serviceIdentity(frame);
      const kept = identity === undefined ? undefined : byIdentity.get(identity);
      if (kept) {
        kept.position = position; // an older copy: the frame is replayed where it first came
        continue;
      }
      const entry = { frame, position };
      if (identity !== undefined) byIdentity.set(identity, entry);
      window.push(entry);
    }
  }
  return {
    keys,
    frames: window.sort((a, b) => b.position - a.position).map((entry) => entry.frame),
    ...(full ? { floor: keys.at(-1) } : {}),
  };
};

/** Frames whose `id` the service assigned: one notification or event, however many copies were kept. */
const SERVICE_IDENTIFIED = new Set(['notification', 'event']);

/**
 * Two copies of one SQS message handed out at once can both keep a frame (at least once, docs/notifications.md):
 * the replay sends and counts it once. Broadcast payloads are the caller's own and may repeat on purpose, so
 * only frames the service identified are told apart by their id.
 */
const serviceIdentity = (frame: OutboundFrame): string | undefined => {
  const id = (frame as { id?: unknown }).id;
  return SERVICE_IDENTIFIED.has(frame.type) && typeof id === 'string' ? `${frame.type}:${id}` : undefined;
};

/** The resuming connection ended (closed by the sweeper, or by the client) while the resume ran. */
export class ConnectionEndedError extends Error {
  constructor() {
    super('The connection has been closed');
    this.name = 'ConnectionEndedError';
  }
}

const deleteFrames = (sessionId: string, keys: readonly string[]): Promise<void> =>
  batchDeleteAll(
    table('sessions'),
    keys.map((item) => ({ session_id: sessionId, item })),
  );

/** How long a takeover waits for the end of the connection it closed to be recorded on the session. */
const TAKEOVER_WAIT_MS = 3000;
const TAKEOVER_POLL_MS = 50;

/**
 * The session's connection is still open: it is told why (`session_taken_over`) and closed, never left open
 * without a session. Its end is recorded on the session by whoever cleans it up: this request, a racing
 * takeover of the same connection, or, for a connection closed in the middle of its own resume of this session,
 * that resume (which puts the session back as it was). The session as it is once that is recorded, or as it is
 * when the session moved on to another connection (the caller then answers `session_expired`).
 */
const takeOver = async (sessionId: string, holder: string): Promise<SessionMeta | undefined> => {
  await closeConnection(
    holder,
    'taken_over',
    errorFrame('session_taken_over', 'Another connection resumed this session; closing this one'),
  );
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  for (;;) {
    const meta = await readSessionMeta(sessionId);
    if (!meta || meta.connection_id !== holder || meta.ended_at !== undefined || Date.now() >= deadline)
      return meta;
    await new Promise((resolve) => setTimeout(resolve, TAKEOVER_POLL_MS));
  }
};

/**
 * `reconnect {session_id}`: the connection takes over a session that ended less than the session TTL ago
 * (or whose old connection is still open: that one is told and closed first). Its channels and rooms are
 * restored, then `sendAck(n)` and the up to 100 frames sent to them meanwhile, in order.
 * Only the session's own user may resume it; anything else is `session_expired` (existence is not leaked).
 */
export const resumeSession = async (
  connection: Authenticated,
  sessionId: string,
  sendAck: (replayed: number) => Promise<void>,
  send: (frame: OutboundFrame) => Promise<unknown>,
): Promise<number> => {
  if (sessionId === connection.session_id) {
    await sendAck(0);
    return 0;
  }
  let meta = await readSessionMeta(sessionId);
  if (!meta || meta.user_id !== connection.user_id) throw new SessionExpiredError();
  if (meta.ended_at === undefined) {
    meta = await takeOver(sessionId, meta.connection_id);
    if (!meta || meta.ended_at === undefined) throw new SessionExpiredError();
  }
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('sessions'),
        Key: { session_id: sessionId, item: SESSION_META },
        UpdateExpression: 'SET connection_id = :connection, #ttl = :ttl REMOVE ended_at',
        ConditionExpression: 'connection_id = :previous AND attribute_exists(ended_at)',
        ExpressionAttributeNames: { '#ttl': 'ttl' },
        ExpressionAttributeValues: {
          ':connection': connection.connection_id,
          ':previous': meta.connection_id,
          ':ttl': liveItemTtl(),
        },
      }),
    );
  } catch (error) {
    // Another connection resumed it first.
    if (error instanceof ConditionalCheckFailedException) throw new SessionExpiredError();
    throw error;
  }
  const previousConnection = meta.connection_id;
  const restoredChannels = meta.channels ?? [];
  // The connection's own channels first; the union stays within the per-connection cap.
  const channels = new Set(
    [...new Set([...(connection.channels ?? []), ...restoredChannels])].slice(0, MAX_CHANNELS_PER_CONNECTION),
  );
  const rooms = (meta.rooms ?? []).filter((room) => channels.has(room));
  // The connection's own fresh session is abandoned: its memberships now belong to the resumed one.
  await Promise.all(
    [...channels].map((channel) =>
      putMembership(channel, connection.connection_id, connection.user_id, sessionId),
    ),
  );
  await Promise.all(
    restoredChannels.map((channel) =>
      documentClient().send(
        new DeleteCommand({
          TableName: table('channels'),
          Key: { channel, connection_id: previousConnection },
        }),
      ),
    ),
  );
  let attached: ConnectionRecord;
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connection.connection_id },
        UpdateExpression:
          rooms.length > 0
            ? 'SET session_id = :session ADD channels :channels, rooms :rooms'
            : 'SET session_id = :session ADD channels :channels',
        ConditionExpression: 'attribute_exists(connection_id)',
        ExpressionAttributeValues: {
          ':session': sessionId,
          ':channels': channels,
          ...(rooms.length > 0 ? { ':rooms': new Set(rooms) } : {}),
        },
        // The status the restored rooms' presence rows start from, as of their registration (as join.room).
        ReturnValues: 'ALL_NEW',
      }),
    );
    attached = result.Attributes as ConnectionRecord;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // The connection ended meanwhile (its clean-up saw only its fresh session): the resumed session becomes
    // detached again, with what it had, so that another connection can still resume it and miss nothing.
    await detachSession({
      sessionId,
      connectionId: connection.connection_id,
      userId: connection.user_id,
      channels: [...channels],
      rooms,
    });
    throw new ConnectionEndedError();
  }
  await documentClient().send(
    new DeleteCommand({
      TableName: table('sessions'),
      Key: { session_id: connection.session_id, item: SESSION_META },
    }),
  );
  const { status, version } = connectionStatusOf(attached);
  for (const room of rooms) {
    await endGoneConnections(
      await joinRoomPresence(room, connection.user_id, connection.connection_id, status, version),
    );
  }
  const { keys, frames, floor } = await bufferedFrames(sessionId, meta.replay_floor);
  await sendAck(frames.length);
  for (const frame of frames) await send(frame);
  if (floor) await raiseReplayFloor(sessionId, floor);
  await deleteFrames(sessionId, keys);
  return frames.length;
};

/** What this resume dropped stays dropped: a later resume of the session reads only above `floor`. */
const raiseReplayFloor = async (sessionId: string, floor: string): Promise<void> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('sessions'),
        Key: { session_id: sessionId, item: SESSION_META },
        UpdateExpression: 'SET replay_floor = :floor',
        ConditionExpression: 'attribute_exists(session_id)',
        ExpressionAttributeValues: { ':floor': floor },
      }),
    );
  } catch (error) {
    // The session expired meanwhile: nothing will resume it.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
};
