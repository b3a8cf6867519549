import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { presenceSettings } from '../../../common/presence-settings';
import { documentClient } from '../../core/clients';
import { invalidCursor, validationError } from '../../core/errors';
import { describeBound, withinBound } from '../../core/identifiers';
import { queryAll, queryPage, queryPages } from '../../core/paging';
import { nameIssue } from '../../core/text-policy';
import type * as z from '../../core/zod';
import { userChannel } from './channel-names';
import { deliverToChannel, type GoneConnection } from './deliver';
import type { PresenceFrame, PresenceState, PresenceStatus } from './frames';
import { audienceAbove, recordPresenceChange } from './presence-summary';
import type { scopePresenceSchema, userPresenceSchema } from './responses';
import { LAST_SEEN_MEMBER, liveItemTtl, NOT_EXPIRED, notExpiredNames, nowSecs, table } from './tables';

/**
 * Presence rows (table `presence`):
 * - `user:<id>` / `<connection id>`: one per open connection of the user, with that connection's status;
 * - `user:<id>` / `~last_seen`: when the user's last connection ended;
 * - `room:<id>` / `<user id>#<connection id>`: one per connection that joined the room.
 * A user's status aggregates its rows: `busy` if any connection says busy (a deliberate choice wins),
 * else `online` if any is online, else `away`; no rows → `offline`.
 *
 * A connection's rows carry the `status_version` of the connection's status they hold (its item counts its
 * `presence.update`s): a row is written only over an older version, so frames of one connection handled at
 * once, in any order (API Gateway invokes them concurrently), leave every row with the connection's last status.
 */
interface PresenceRow {
  readonly scope: string;
  readonly member: string;
  readonly user_id: string;
  readonly connection_id: string;
  readonly status: PresenceStatus;
  readonly status_version?: number;
}

/** A connection's status as its item holds it: the status and how many `presence.update`s set it. */
export interface ConnectionStatus {
  readonly status: PresenceStatus;
  readonly version: number;
}

/** The condition of every write of a connection's presence row: no newer status is there. */
const NOT_NEWER = 'attribute_not_exists(status_version) OR status_version <= :version';

/**
 * Writes a connection's row in a scope with its status, unless the row holds a newer one (or, `existing`, is
 * gone: the connection ended); false then.
 */
const writeStatusRow = async (
  scope: string,
  member: string,
  userId: string,
  connectionId: string,
  { status, version }: ConnectionStatus,
  existing = false,
): Promise<boolean> => {
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: { scope, member },
        UpdateExpression:
          'SET #status = :status, status_version = :version, user_id = :user, connection_id = :connection, #ttl = :ttl',
        ConditionExpression: existing ? `attribute_exists(#member) AND (${NOT_NEWER})` : NOT_NEWER,
        ExpressionAttributeNames: {
          '#status': 'status',
          '#ttl': 'ttl',
          ...(existing ? { '#member': 'member' } : {}),
        },
        ExpressionAttributeValues: {
          ':status': status,
          ':version': version,
          ':user': userId,
          ':connection': connectionId,
          ':ttl': liveItemTtl(),
        },
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
};

/** Last-seen times are kept a month after a user's last connection. */
const LAST_SEEN_SECS = 30 * 24 * 3600;

const roomMember = (userId: string, connectionId: string) => `${userId}#${connectionId}`;

export const aggregateStatus = (statuses: readonly PresenceStatus[]): PresenceState => {
  if (statuses.length === 0) return 'offline';
  if (statuses.includes('busy')) return 'busy';
  if (statuses.includes('online')) return 'online';
  return 'away';
};

/** Which of a scope's rows, by member key: those starting with a prefix, after a key, or between two keys. */
type MemberRange =
  | { readonly prefix: string }
  | { readonly after: string }
  | { readonly from: string; readonly to: string };

/** The Query of a scope's live rows (all of them, or a range of member keys), strongly consistent. */
const rowsQuery = (scope: string, range?: MemberRange) => {
  const [condition, bounds]: [string, Record<string, string>] =
    range === undefined
      ? ['', {}]
      : 'prefix' in range
        ? [' AND begins_with(#member, :low)', { ':low': range.prefix }]
        : 'after' in range
          ? [' AND #member > :low', { ':low': range.after }]
          : [' AND #member BETWEEN :low AND :high', { ':low': range.from, ':high': range.to }];
  return {
    TableName: table('presence'),
    KeyConditionExpression: `#scope = :scope${condition}`,
    FilterExpression: NOT_EXPIRED,
    ExpressionAttributeNames: {
      ...notExpiredNames,
      '#scope': 'scope',
      ...(range === undefined ? {} : { '#member': 'member' }),
    },
    ExpressionAttributeValues: { ':scope': scope, ':now': nowSecs(), ...bounds },
    ConsistentRead: true,
  };
};

const rowsOf = (scope: string, memberPrefix?: string): Promise<PresenceRow[]> =>
  queryAll<PresenceRow>(rowsQuery(scope, memberPrefix ? { prefix: memberPrefix } : undefined));

/** A user's rows in a room (the prefix may match a user id that extends this one, so filter exactly). */
const userRowsInRoom = async (room: string, userId: string) =>
  (await rowsOf(room, `${userId}#`)).filter((row) => row.user_id === userId);

const userConnectionRows = async (userId: string) =>
  (await rowsOf(userChannel(userId))).filter((row) => row.member !== LAST_SEEN_MEMBER);

const frame = (
  scope: string,
  userId: string,
  status: PresenceState,
  change: PresenceFrame['change'],
): PresenceFrame => ({
  type: 'presence',
  scope,
  user_id: userId,
  status,
  last_seen_at: new Date().toISOString(),
  change,
});

/**
 * Tells a room's subscribers; the connections found gone meanwhile, for the caller to end. A room above
 * `scale.presence.announce_max` subscribers gets the change counted for its next `presence.summary` instead
 * (presence-summary.ts): the request then costs a few writes, whatever the room's size.
 */
const announce = async (
  room: string,
  change: PresenceFrame,
): Promise<{ gone: GoneConnection[]; counted: boolean }> => {
  if (await audienceAbove(room, presenceSettings().announceMax)) {
    await recordPresenceChange(room, change.change);
    return { gone: [], counted: true };
  }
  return { gone: (await deliverToChannel(room, change)).gone, counted: false };
};

/** Rounds of re-reading after an announcement before a change is left to the writer that made it. */
const MAX_ANNOUNCE_ROUNDS = 3;

/**
 * Tells a room what changed for a user since `before` (the user's rows in the room before this request's
 * write), as the rows are now: `join` (first connection), `leave` (none left; the user's global status), or
 * `update` (the aggregate changed). The rows are read after the write, and again after each frame: a frame
 * of a concurrent change of the same user (another frame of the connection, handled at once) may have been
 * posted before this one with the later state, so a state that moved meanwhile is announced again and the
 * room's last frame about the user says what the rows say. A change counted for a summary is counted once.
 */
const announceChange = async (
  room: string,
  userId: string,
  before: readonly PresenceRow[],
): Promise<GoneConnection[]> => {
  const gone: GoneConnection[] = [];
  let told = { members: before.length, status: aggregateStatus(before.map((row) => row.status)) };
  for (let round = 0; round < MAX_ANNOUNCE_ROUNDS; round += 1) {
    const rows = await userRowsInRoom(room, userId);
    const status = aggregateStatus(rows.map((row) => row.status));
    let change: PresenceFrame | undefined;
    if (told.members === 0 && rows.length > 0) change = frame(room, userId, status, 'join');
    else if (told.members > 0 && rows.length === 0) {
      const global = aggregateStatus((await userConnectionRows(userId)).map((row) => row.status));
      change = frame(room, userId, global, 'leave');
    } else if (rows.length > 0 && status !== told.status) change = frame(room, userId, status, 'update');
    if (!change) break;
    const outcome = await announce(room, change);
    gone.push(...outcome.gone);
    if (outcome.counted) break;
    told = { members: rows.length, status };
  }
  return gone;
};

export const presenceOnConnect = async (userId: string, connectionId: string): Promise<void> => {
  await documentClient().send(
    new PutCommand({
      TableName: table('presence'),
      Item: {
        scope: userChannel(userId),
        member: connectionId,
        user_id: userId,
        connection_id: connectionId,
        status: 'online',
        ttl: liveItemTtl(),
      },
    }),
  );
};

/**
 * Makes the connection a member of `room:<id>`; the room's subscribers get `join` (first connection) or
 * `update`. Like every change below, it returns the connections its announcement found gone (the caller ends
 * them: delivery cannot, as ending a connection updates presence).
 */
export const joinRoomPresence = async (
  room: string,
  userId: string,
  connectionId: string,
  status: PresenceStatus,
  version = 0,
): Promise<GoneConnection[]> => {
  const before = await userRowsInRoom(room, userId);
  if (before.some((row) => row.connection_id === connectionId)) return [];
  await writeStatusRow(room, roomMember(userId, connectionId), userId, connectionId, { status, version });
  return announceChange(room, userId, before);
};

/** Removes the connection from the room; `leave` when it was the user's last connection there. */
export const leaveRoomPresence = async (
  room: string,
  userId: string,
  connectionId: string,
): Promise<GoneConnection[]> => {
  const before = await userRowsInRoom(room, userId);
  if (!before.some((row) => row.connection_id === connectionId)) return [];
  await documentClient().send(
    new DeleteCommand({
      TableName: table('presence'),
      Key: { scope: room, member: roomMember(userId, connectionId) },
    }),
  );
  return announceChange(room, userId, before);
};

/** `presence.update`: the connection's status changes everywhere; rooms whose aggregate changed get `update`. */
export const updatePresence = async (
  userId: string,
  connectionId: string,
  rooms: readonly string[],
  status: ConnectionStatus,
): Promise<GoneConnection[]> => {
  const gone: GoneConnection[] = [];
  // The user's row of the connection exists from its connect on; gone, the connection ended.
  await writeStatusRow(userChannel(userId), connectionId, userId, connectionId, status, true);
  for (const room of rooms) {
    const before = await userRowsInRoom(room, userId);
    // A newer status is there already: its own writer announces it.
    if (!(await writeStatusRow(room, roomMember(userId, connectionId), userId, connectionId, status)))
      continue;
    gone.push(...(await announceChange(room, userId, before)));
  }
  return gone;
};

/** The connection ended: its rows go, the user's last-seen time is kept, and its rooms see `leave`/`update`. */
export const presenceOnDisconnect = async (
  userId: string,
  connectionId: string,
  rooms: readonly string[],
): Promise<GoneConnection[]> => {
  await documentClient().send(
    new DeleteCommand({
      TableName: table('presence'),
      Key: { scope: userChannel(userId), member: connectionId },
    }),
  );
  await documentClient().send(
    new PutCommand({
      TableName: table('presence'),
      Item: {
        scope: userChannel(userId),
        member: LAST_SEEN_MEMBER,
        user_id: userId,
        last_seen_at: new Date().toISOString(),
        ttl: nowSecs() + LAST_SEEN_SECS,
      },
    }),
  );
  const gone: GoneConnection[] = [];
  for (const room of rooms) gone.push(...(await leaveRoomPresence(room, userId, connectionId)));
  return gone;
};

/** What GET /presence/{user_id} answers (the schema is the API documents' too). */
export type UserPresence = z.output<typeof userPresenceSchema>;

/** GET /presence/{user_id}: one Query on the user's scope. A connected user is seen now. */
export const userPresence = async (userId: string): Promise<UserPresence> => {
  const issue = withinBound('userId', userId) ? nameIssue(userId) : `must be ${describeBound('userId')}`;
  if (issue) throw validationError(`user_id ${issue}`, [{ field: 'user_id', issue }]);
  const rows = await rowsOf(userChannel(userId));
  const connections = rows.filter((row) => row.member !== LAST_SEEN_MEMBER);
  const lastSeen = rows.find((row) => row.member === LAST_SEEN_MEMBER) as
    | { last_seen_at?: string }
    | undefined;
  return {
    user_id: userId,
    status: aggregateStatus(connections.map((row) => row.status)),
    last_seen_at: connections.length > 0 ? new Date().toISOString() : (lastSeen?.last_seen_at ?? null),
    connections: connections.length,
  };
};

export type ScopePresence = z.output<typeof scopePresenceSchema>;

/** Above every room row of a user (`<user id>#<connection id>`): the highest code point sorts last in UTF-8. */
const pastUser = (userId: string) => `${userId}#\u{10FFFF}`;

/** The page cursor: the user the page ended with, bound to the room (a cursor of another room is refused). */
const encodeScopeCursor = (scope: string, lastUser: string): string =>
  Buffer.from(JSON.stringify({ scope, after: lastUser })).toString('base64url');

const decodeScopeCursor = (scope: string, cursor: string): string => {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as {
      scope?: unknown;
      after?: unknown;
    };
    // Only a user id can end a page: anything else (past the bound, it would break the sort key's limit) was
    // not issued here.
    if (parsed.scope === scope && typeof parsed.after === 'string' && withinBound('userId', parsed.after))
      return parsed.after;
  } catch {
    // not JSON: refused below
  }
  throw invalidCursor();
};

/**
 * GET /presence?scope=room:<id>: the room's members (users with a connection in it) in user id order, about
 * `limit` at a time. A page is `limit` rows (connections) read in one Query, completed with the rest of its last
 * user's rows, so a user's connections are never split over two pages and each member is listed once. A
 * 100,000-member room would not fit one answer (Lambda's 6 MB), hence the pages.
 */
export const scopePresence = async (
  scope: string,
  options: { readonly limit: number; readonly cursor?: string | undefined },
): Promise<ScopePresence> => {
  const after = options.cursor === undefined ? undefined : decodeScopeCursor(scope, options.cursor);
  const page = await queryPage<PresenceRow & Record<string, unknown>>(
    rowsQuery(scope, after === undefined ? undefined : { after: pastUser(after) }),
    { limit: options.limit, keyOf: (row) => ({ scope: row.scope, member: row.member }) },
  );
  const rows: PresenceRow[] = [...page.items];
  const last = page.items.at(-1);
  // The page ends past every row of the users it lists that may have more rows after its last one: the last
  // row's user, or a user on the page whose id is a prefix of it (`pa` for `pa#x#<connection>`: their rows
  // interleave); the shortest such id reaches furthest.
  const endsWith = last
    ? [...new Set(rows.map((row) => row.user_id))]
        .filter((userId) => last.member.startsWith(`${userId}#`))
        .reduce((shortest, userId) => (userId.length < shortest.length ? userId : shortest), last.user_id)
    : undefined;
  if (page.nextKey && last && endsWith !== undefined) {
    const rest = await queryAll<PresenceRow>(rowsQuery(scope, { from: last.member, to: pastUser(endsWith) }));
    rows.push(...rest.filter((row) => row.member !== last.member));
  }
  const byUser = new Map<string, PresenceStatus[]>();
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.status]);
  const now = new Date().toISOString();
  const members = [...byUser]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([userId, statuses]) => ({ user_id: userId, status: aggregateStatus(statuses), last_seen_at: now }));
  return {
    scope,
    members,
    next_cursor: page.nextKey && endsWith !== undefined ? encodeScopeCursor(scope, endsWith) : null,
  };
};

/**
 * How many users have a connection in the room: what a `presence.summary` tells. Reads the room's rows a page
 * (1 MB) at a time, only their user ids: a 100,000-member room is ≈ 1,500 read units, once per summary.
 */
export const roomMemberCount = async (room: string): Promise<number> => {
  const users = new Set<string>();
  for await (const rows of queryPages<{ user_id: string }>({
    TableName: table('presence'),
    KeyConditionExpression: '#scope = :scope',
    FilterExpression: NOT_EXPIRED,
    ProjectionExpression: 'user_id',
    ExpressionAttributeNames: { ...notExpiredNames, '#scope': 'scope' },
    ExpressionAttributeValues: { ':scope': room, ':now': nowSecs() },
  }))
    for (const row of rows) users.add(row.user_id);
  return users.size;
};
