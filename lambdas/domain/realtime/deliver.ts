import { PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../core/clients';
import { connectionsApi } from '../../core/clients-connections';
import { forEachLimited } from '../../core/concurrency';
import { newId } from '../../core/ids';
import { logger } from '../../core/logger';
import { countMetric, SERVICE_METRICS } from '../../core/metrics';
import { type ItemKey, type QueryInput, queryAll, queryOnce, queryPages } from '../../core/paging';
import { realtimeSettings } from './config';
import type { OutboundFrame } from './frames';
import { readSessionMeta } from './session-meta';
import { FRAME_PREFIX, NOT_EXPIRED, notExpiredNames, nowSecs, table } from './tables';

/** A row of the channel-membership table. */
export interface Membership {
  readonly channel: string;
  readonly connection_id: string;
  readonly user_id: string;
  readonly session_id: string;
  /** The connection ended; frames go to its session's replay buffer until the session expires. */
  readonly detached?: boolean;
  readonly ttl: number;
}

/**
 * A connection API Gateway said is closed (410) during a delivery. Delivery only reports it (the frame is kept
 * in its session's replay buffer first); the caller ends it with `endGoneConnections` (lifecycle.ts).
 */
export interface GoneConnection {
  readonly connection_id: string;
  /** The membership it was found through: dropped when the connection left no record to end. */
  readonly channel?: string;
}

export interface DeliveryResult {
  /** Frames posted to open connections. */
  readonly delivered: number;
  /** Connections found closed (410), for the caller to end; their sessions keep the frame. */
  readonly gone: GoneConnection[];
}

/** Posts at most this many frames at once per invocation (keeps sockets and memory bounded). */
const POST_CONCURRENCY = 32;
/** Memberships read per Query page. */
export const MEMBERS_PAGE = 500;

const encoder = new TextEncoder();

/** API Gateway's answer for a connection that is closed (410 GoneException). */
export const isGone = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === 'GoneException' ||
    (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 410);

/** Sends one frame to one connection; `gone` when API Gateway says it is closed (410). */
export const postFrame = async (connectionId: string, frame: OutboundFrame): Promise<'sent' | 'gone'> => {
  try {
    await connectionsApi().send(
      new PostToConnectionCommand({
        ConnectionId: connectionId,
        Data: encoder.encode(JSON.stringify(frame)),
      }),
    );
    return 'sent';
  } catch (error) {
    if (isGone(error)) return 'gone';
    throw error;
  }
};

/** Most times one frame follows a session from connection to connection before it is given up (logged). */
const MAX_KEEP_ATTEMPTS = 3;

/**
 * Keeps a frame for a session whose connection `endedConnection` has ended, for `reconnect` (an item per frame:
 * no 400 KB item). A resume can run between the caller's read of the membership and this write: it attaches
 * the session to a new connection, then reads and empties the buffer. So the frame is written first and the
 * session read after: a session still detached (or still on `endedConnection`, whose end is the caller's to
 * do) will replay it, since its resume reads the buffer after attaching; a session attached elsewhere may have
 * read the buffer already, so the frame's item is taken back (a delete that returns it; the resume deletes what
 * it replayed) and posted to the session's connection, unless that connection is in `postedTo` (it got the
 * frame in the same delivery, by a membership of its own). Never lost; at worst sent twice. When that connection
 * is gone too, the frame is kept for it in turn and it is reported, for the caller to end.
 */
export const bufferFrame = async (
  sessionId: string,
  frame: OutboundFrame,
  ttl: number,
  endedConnection: string,
  postedTo: ReadonlySet<string> = new Set(),
): Promise<GoneConnection[]> => {
  const gone: GoneConnection[] = [];
  let from = endedConnection;
  for (let attempt = 1; attempt <= MAX_KEEP_ATTEMPTS; attempt++) {
    const key = { session_id: sessionId, item: `${FRAME_PREFIX}${newId()}` };
    await documentClient().send(
      new PutCommand({ TableName: table('sessions'), Item: { ...key, frame: JSON.stringify(frame), ttl } }),
    );
    const session = await readSessionMeta(sessionId);
    if (!session || session.ended_at !== undefined || session.connection_id === from) return gone;
    const taken = await documentClient().send(
      new DeleteCommand({ TableName: table('sessions'), Key: key, ReturnValues: 'ALL_OLD' }),
    );
    // Gone: the resume replayed it.
    if (!taken.Attributes) return gone;
    // The connection that resumed it got the frame by a membership of its own in this delivery.
    if (postedTo.has(session.connection_id)) return gone;
    if ((await postFrame(session.connection_id, frame)) === 'sent') return gone;
    // The next attempt keeps the frame for the session while it is still on this connection.
    gone.push({ connection_id: session.connection_id });
    from = session.connection_id;
  }
  logger.error('frame for a session dropped: its connections kept ending', { session_id: sessionId });
  return gone;
};

const isOwnPresence = (frame: OutboundFrame, userId: string): boolean =>
  frame.type === 'presence' && (frame as { user_id?: unknown }).user_id === userId;

/** A range of connection ids within a channel's partition (both ends included), read as one segment. */
export interface ConnectionRange {
  readonly from: string;
  readonly to: string;
}

/** The Query for a channel's unexpired memberships: its whole partition, or a range of it. */
const membersQuery = (channel: string, limit: number, range?: ConnectionRange): QueryInput => ({
  TableName: table('channels'),
  KeyConditionExpression: range
    ? 'channel = :channel AND connection_id BETWEEN :from AND :to'
    : 'channel = :channel',
  FilterExpression: NOT_EXPIRED,
  ExpressionAttributeNames: notExpiredNames,
  ExpressionAttributeValues: {
    ':channel': channel,
    ':now': nowSecs(),
    ...(range ? { ':from': range.from, ':to': range.to } : {}),
  },
  Limit: limit,
});

/** Every unexpired membership of a channel known to be small (a user's few connections and detached sessions). */
export const channelMembers = (channel: string): Promise<Membership[]> =>
  queryAll<Membership>(membersQuery(channel, MEMBERS_PAGE));

/** One page of a channel's unexpired memberships, for a chain of pages that goes on in another invocation. */
export const membersPage = async (
  channel: string,
  startKey?: ItemKey,
  limit = MEMBERS_PAGE,
  range?: ConnectionRange,
): Promise<{ members: Membership[]; next?: ItemKey }> => {
  const read = await queryOnce<Membership>(membersQuery(channel, limit, range), startKey);
  return { members: read.items, ...(read.nextKey ? { next: read.nextKey } : {}) };
};

/**
 * Delivers one frame to the given memberships: posted to open connections, buffered for detached sessions.
 * A connection found gone keeps the frame in its session's buffer and is reported, for the caller to end.
 */
export const deliverToMembers = async (
  members: readonly Membership[],
  frame: OutboundFrame,
): Promise<DeliveryResult> => {
  let delivered = 0;
  const gone: GoneConnection[] = [];
  const bufferedSessions = new Set<string>();
  const posted = new Set<string>();
  const buffer = async (member: Membership, ttl: number) => {
    if (bufferedSessions.has(member.session_id)) return;
    bufferedSessions.add(member.session_id);
    gone.push(...(await bufferFrame(member.session_id, frame, ttl, member.connection_id, posted)));
  };
  // Open connections first: a detached session resumed meanwhile by one of them is then known to have the frame.
  await forEachLimited(
    members.filter((member) => !member.detached),
    POST_CONCURRENCY,
    async (member) => {
      const outcome = await postFrame(member.connection_id, frame);
      if (outcome === 'sent') {
        delivered += 1;
        posted.add(member.connection_id);
        return;
      }
      gone.push({ connection_id: member.connection_id, channel: member.channel });
      await buffer(member, nowSecs() + realtimeSettings().sessionTtlSecs);
    },
  );
  // A session's own presence changes (its leave while away) are not news to it on reconnect.
  const detached = members.filter((member) => member.detached && !isOwnPresence(frame, member.user_id));
  await forEachLimited(detached, POST_CONCURRENCY, (member) => buffer(member, member.ttl));
  countMetric(SERVICE_METRICS.framesSent, delivered);
  return { delivered, gone };
};

/**
 * Sends `frame` to every connection subscribed to `channel` (`user:<id>`, `room:<id>`, `topic:<name>`).
 * Finds them with a Query on the channel's partition, so the cost grows with that channel's connections only.
 * Closed connections (410) never fail the call: they are reported for the caller to end; sessions whose
 * connection ended less than the session TTL ago get the frame in their replay buffer.
 */
export const deliverToChannel = async (channel: string, frame: OutboundFrame): Promise<DeliveryResult> => {
  let delivered = 0;
  const gone: GoneConnection[] = [];
  for await (const members of queryPages<Membership>(membersQuery(channel, MEMBERS_PAGE))) {
    const result = await deliverToMembers(members, frame);
    delivered += result.delivered;
    gone.push(...result.gone);
  }
  return { delivered, gone };
};
