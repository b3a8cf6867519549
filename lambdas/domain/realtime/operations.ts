import { isServerError, toServiceError } from '../../core/errors';
import { logger } from '../../core/logger';
import type { Principal } from '../../core/principal';
import type * as z from '../../core/zod';
import { topicChannel } from './channel-names';
import { type Authenticated, joinRoom, subscribe, unsubscribe } from './channels';
import {
  type CLIENT_FRAMES,
  type ClientFrameType,
  FrameError,
  frameErrorOf,
  readClientFrame,
} from './client-frames';
import { ackFrame, errorFrame, type OutboundFrame, type WsErrorCode } from './frames';
import {
  authenticateConnection,
  claimWelcome,
  endGoneConnections,
  getConnection,
  sessionFrameOf,
  setConnectionStatus,
} from './lifecycle';
import { updatePresence } from './presence';
import { ConnectionEndedError, resumeSession, SessionExpiredError } from './sessions';

/** What a frame operation needs from its surroundings (the handler supplies AWS-backed ones). */
export interface FrameContext {
  readonly connectionId: string;
  /** Posts a frame to this connection. */
  readonly send: (frame: OutboundFrame) => Promise<unknown>;
}

/** `heartbeat` has no function: API Gateway answers it (a MOCK route in lib/wiring/areas/realtime.ts). */
type HandledFrameType = Exclude<ClientFrameType, 'heartbeat'>;

/** What one frame type does, given its validated frame. */
export type FrameOperation<K extends HandledFrameType> = (
  ctx: FrameContext,
  frame: z.output<(typeof CLIENT_FRAMES)[K]>,
) => Promise<void>;

/**
 * The operations one route's function serves: its own frame type's alone, so that each frame route's bundle
 * carries only the code of its operation (only `auth` the token verifier; docs/performance.md).
 */
export type FrameOperations = { readonly [K in HandledFrameType]?: FrameOperation<K> };

const requireAuthenticated = async (ctx: FrameContext): Promise<Authenticated> => {
  const connection = await getConnection(ctx.connectionId);
  if (!connection?.user_id || !connection.session_id) {
    throw new FrameError('unauthorized', 'Authenticate first: send {"type":"auth","token":"<JWT>"}');
  }
  // The `session` frame normally comes from the welcome worker; if this frame overtook it, send it now.
  if (!connection.welcomed && (await claimWelcome(ctx.connectionId))) {
    await ctx.send(sessionFrameOf({ session_id: connection.session_id, user_id: connection.user_id }));
  }
  return connection as Authenticated;
};

/** `auth`: the token (checked by `verifyToken`, which throws a 401 ServiceError when invalid) names the user. */
export const authOperation =
  (verifyToken: (token: string) => Promise<Principal>): FrameOperation<'auth'> =>
  async (ctx, frame) => {
    const principal = await verifyToken(frame.token);
    if (principal.kind !== 'user')
      throw new FrameError('forbidden', 'Only user tokens may use WebSocket connections');
    const outcome = await authenticateConnection(ctx.connectionId, principal);
    if (outcome.kind === 'other_user') {
      throw new FrameError('forbidden', 'The token belongs to another user than this connection');
    }
    if (outcome.kind === 'gone') throw new FrameError('unauthorized', 'The connection has been closed');
    await ctx.send(ackFrame('auth', frame.id));
    if (outcome.kind === 'authenticated') await ctx.send(outcome.session);
  };

export const subscribeOperation: FrameOperation<'subscribe'> = async (ctx, frame) => {
  await subscribe(await requireAuthenticated(ctx), frame.channel);
  await ctx.send(ackFrame('subscribe', frame.id, { channel: frame.channel }));
};

export const unsubscribeOperation: FrameOperation<'unsubscribe'> = async (ctx, frame) => {
  await unsubscribe(await requireAuthenticated(ctx), frame.channel);
  await ctx.send(ackFrame('unsubscribe', frame.id, { channel: frame.channel }));
};

export const joinRoomOperation: FrameOperation<'join.room'> = async (ctx, frame) => {
  const room = await joinRoom(await requireAuthenticated(ctx), frame.room_id);
  await ctx.send(ackFrame('join.room', frame.id, { channel: room }));
};

export const joinTopicOperation: FrameOperation<'join.topic'> = async (ctx, frame) => {
  const channel = topicChannel(frame.topic);
  await subscribe(await requireAuthenticated(ctx), channel);
  await ctx.send(ackFrame('join.topic', frame.id, { channel }));
};

export const presenceUpdateOperation: FrameOperation<'presence.update'> = async (ctx, frame) => {
  const connection = await requireAuthenticated(ctx);
  const { status, rooms } = await setConnectionStatus(connection.connection_id, frame.status);
  await endGoneConnections(await updatePresence(connection.user_id, connection.connection_id, rooms, status));
  await ctx.send(ackFrame('presence.update', frame.id));
};

export const reconnectOperation: FrameOperation<'reconnect'> = async (ctx, frame) => {
  const connection = await requireAuthenticated(ctx);
  try {
    await resumeSession(
      connection,
      frame.session_id,
      (replayed) =>
        ctx.send(ackFrame('reconnect', frame.id, { replayed, session_id: frame.session_id })).then(() => {}),
      ctx.send,
    );
  } catch (error) {
    if (error instanceof SessionExpiredError) throw new FrameError('session_expired', error.message);
    if (error instanceof ConnectionEndedError) throw new FrameError('unauthorized', error.message);
    throw error;
  }
};

/**
 * Handles one client frame routed as `routeKey` (a frame type, or `$default` for anything else) with the
 * route's `operations`: validation, the operation, and the answer. Every failure becomes an `error` frame
 * carrying the client's id; nothing here closes the connection or lets an error escape (and no stack ever
 * reaches a frame).
 */
export const handleClientFrame = async (
  routeKey: string,
  body: string | null | undefined,
  ctx: FrameContext,
  operations: FrameOperations,
): Promise<void> => {
  let id: string | undefined;
  try {
    const frame = readClientFrame(routeKey, body);
    id = frame.id;
    // readClientFrame accepts a frame only on its own route, and no function serves the `heartbeat` route.
    const operation = operations[frame.type as HandledFrameType];
    // A route declared without its operation is a wiring mistake: logged below, `internal` to the client.
    if (!operation) throw new Error(`no operation for the ${frame.type} frame on route ${routeKey}`);
    await (operation as (ctx: FrameContext, frame: unknown) => Promise<void>)(ctx, frame.data);
  } catch (error) {
    await ctx.send(toErrorFrame(error, id));
  }
};

/**
 * The `error` frame for what handling a frame threw, by the mapping HTTP answers with (core/errors.ts
 * `toServiceError`): a dependency down or throttling is `unavailable`, as HTTP's 503; HTTP's codes without a frame
 * of their own are `validation`. What HTTP logs as a 5xx is logged here, with the error.
 */
const toErrorFrame = (error: unknown, id: string | undefined): OutboundFrame => {
  if (error instanceof FrameError) return frameErrorOf(error, id);
  const mapped = toServiceError(error);
  if (isServerError(mapped)) logger.error('frame failed', { error: error as Error });
  // Unexpected: the client learns only that this frame was not handled.
  if (mapped !== error && mapped.code === 'internal')
    return errorFrame('internal', 'Something went wrong; the frame was not processed', id);
  const code: WsErrorCode =
    mapped.code === 'method_not_allowed' ||
    mapped.code === 'conflict' ||
    mapped.code === 'unsupported_media_type'
      ? 'validation'
      : mapped.code;
  return errorFrame(code, mapped.message, id);
};
