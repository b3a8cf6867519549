import { ServiceError } from '../../core/errors';
import { logger } from '../../core/logger';
import type { Principal } from '../../core/principal';
import * as z from '../../core/zod';
import { type Authenticated, joinRoom, subscribe, unsubscribe } from './channels';
import { ackFrame, errorFrame, type OutboundFrame, type WsErrorCode } from './frames';
import {
  authenticateConnection,
  claimWelcome,
  getConnection,
  sessionFrameOf,
  setConnectionStatus,
} from './lifecycle';
import { updatePresence } from './presence';
import { resumeSession, SessionExpiredError } from './sessions';

/** API Gateway's frame limit; a larger message can still reach a handler when sent in fragments. */
export const MAX_CLIENT_FRAME_BYTES = 32 * 1024;

const frameId = z.optional(z.string().check(z.maxLength(64)));
const name = z
  .string()
  .check(z.minLength(1), z.maxLength(256), z.regex(/^\S+$/, 'must not contain whitespace'));
const channel = z.string().check(z.minLength(1), z.maxLength(300));

/** Client frames (contract §4); unknown extra fields are ignored, as clients evolve faster than servers. */
export const CLIENT_FRAMES = {
  auth: z.object({ id: frameId, token: z.string().check(z.minLength(1), z.maxLength(16 * 1024)) }),
  subscribe: z.object({ id: frameId, channel }),
  unsubscribe: z.object({ id: frameId, channel }),
  'join.room': z.object({ id: frameId, room_id: name }),
  'join.topic': z.object({ id: frameId, topic: name }),
  'presence.update': z.object({ id: frameId, status: z.enum(['online', 'away', 'busy']) }),
  reconnect: z.object({ id: frameId, session_id: z.string().check(z.minLength(1), z.maxLength(64)) }),
  heartbeat: z.object({ id: frameId }),
} as const;

export type ClientFrameType = keyof typeof CLIENT_FRAMES;

export const isClientFrameType = (type: unknown): type is ClientFrameType =>
  typeof type === 'string' && Object.hasOwn(CLIENT_FRAMES, type);

/** What a frame operation needs from its surroundings (the handler supplies AWS-backed ones). */
export interface FrameContext {
  readonly connectionId: string;
  /** Posts a frame to this connection. */
  readonly send: (frame: OutboundFrame) => Promise<unknown>;
  /** Validates a bearer token (throws a 401 ServiceError when invalid). */
  readonly verifyToken: (token: string) => Promise<Principal>;
}

class FrameError extends Error {
  constructor(
    readonly code: WsErrorCode,
    message: string,
    /** The client frame's id, when it is known only where the error is raised. */
    readonly frameId?: string,
  ) {
    super(message);
  }
}

/** The client frame's `id` when it is a usable one, for answers to frames that failed validation. */
const idOf = (value: unknown): string | undefined => {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  return typeof id === 'string' && id.length <= 64 ? id : undefined;
};

const describeIssues = (error: z.core.$ZodError): string =>
  error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.join('.') || '(frame)'}: ${issue.message}`)
    .join('; ');

/** Parses a frame body into JSON; errors become `validation`/`payload_too_large` error frames. */
export const parseFrameBody = (
  body: string | undefined | null,
): { type?: unknown; id?: string; value: unknown } => {
  const text = body ?? '';
  if (Buffer.byteLength(text) > MAX_CLIENT_FRAME_BYTES) {
    let id: string | undefined;
    try {
      id = idOf(JSON.parse(text));
    } catch {
      // No usable id in a message that is not JSON.
    }
    throw new FrameError('payload_too_large', `Frames are limited to ${MAX_CLIENT_FRAME_BYTES} bytes`, id);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FrameError('validation', 'The frame is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FrameError('validation', 'A frame must be a JSON object with a string "type"');
  }
  return { type: (value as { type?: unknown }).type, id: idOf(value), value };
};

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

const operations: {
  [K in ClientFrameType]: (ctx: FrameContext, frame: z.output<(typeof CLIENT_FRAMES)[K]>) => Promise<void>;
} = {
  heartbeat: async (ctx, frame) => {
    await ctx.send(
      frame.id === undefined ? { type: 'heartbeat.ack' } : { type: 'heartbeat.ack', id: frame.id },
    );
  },
  auth: async (ctx, frame) => {
    const principal = await ctx.verifyToken(frame.token);
    if (principal.kind !== 'user')
      throw new FrameError('forbidden', 'Only user tokens may use WebSocket connections');
    const outcome = await authenticateConnection(ctx.connectionId, principal);
    if (outcome.kind === 'other_user') {
      throw new FrameError('forbidden', 'The token belongs to another user than this connection');
    }
    if (outcome.kind === 'gone') throw new FrameError('unauthorized', 'The connection has been closed');
    await ctx.send(ackFrame('auth', frame.id));
    if (outcome.kind === 'authenticated') await ctx.send(outcome.session);
  },
  subscribe: async (ctx, frame) => {
    await subscribe(await requireAuthenticated(ctx), frame.channel);
    await ctx.send(ackFrame('subscribe', frame.id, { channel: frame.channel }));
  },
  unsubscribe: async (ctx, frame) => {
    await unsubscribe(await requireAuthenticated(ctx), frame.channel);
    await ctx.send(ackFrame('unsubscribe', frame.id, { channel: frame.channel }));
  },
  'join.room': async (ctx, frame) => {
    const room = await joinRoom(await requireAuthenticated(ctx), frame.room_id);
    await ctx.send(ackFrame('join.room', frame.id, { channel: room }));
  },
  'join.topic': async (ctx, frame) => {
    const channel = `topic:${frame.topic}`;
    await subscribe(await requireAuthenticated(ctx), channel);
    await ctx.send(ackFrame('join.topic', frame.id, { channel }));
  },
  'presence.update': async (ctx, frame) => {
    const connection = await requireAuthenticated(ctx);
    await setConnectionStatus(connection.connection_id, frame.status);
    await updatePresence(
      connection.user_id,
      connection.connection_id,
      [...(connection.rooms ?? [])],
      frame.status,
    );
    await ctx.send(ackFrame('presence.update', frame.id));
  },
  reconnect: async (ctx, frame) => {
    const connection = await requireAuthenticated(ctx);
    try {
      await resumeSession(
        connection,
        frame.session_id,
        (replayed) =>
          ctx
            .send(ackFrame('reconnect', frame.id, { replayed, session_id: frame.session_id }))
            .then(() => {}),
        ctx.send,
      );
    } catch (error) {
      if (error instanceof SessionExpiredError) throw new FrameError('session_expired', error.message);
      throw error;
    }
  },
};

/**
 * Handles one client frame routed as `routeKey` (a frame type, or `$default` for anything else):
 * validation, the operation, and the answer. Every failure becomes an `error` frame carrying the client's id;
 * nothing here closes the connection or lets an error escape (and no stack ever reaches a frame).
 */
export const handleClientFrame = async (
  routeKey: string,
  body: string | null | undefined,
  ctx: FrameContext,
): Promise<void> => {
  let id: string | undefined;
  try {
    const parsed = parseFrameBody(body);
    id = parsed.id;
    if (typeof parsed.type !== 'string')
      throw new FrameError('validation', 'A frame must have a string "type"');
    if (!isClientFrameType(parsed.type) || routeKey === '$default' || routeKey !== parsed.type) {
      throw new FrameError('validation', `Unknown frame type "${parsed.type.slice(0, 64)}"`);
    }
    const type: ClientFrameType = parsed.type;
    const result = CLIENT_FRAMES[type].safeParse(parsed.value);
    if (!result.success)
      throw new FrameError('validation', `Invalid ${type} frame: ${describeIssues(result.error)}`);
    await (operations[type] as (ctx: FrameContext, frame: unknown) => Promise<void>)(ctx, result.data);
  } catch (error) {
    await ctx.send(toErrorFrame(error, id));
  }
};

const toErrorFrame = (error: unknown, id: string | undefined): OutboundFrame => {
  if (error instanceof FrameError) return errorFrame(error.code, error.message, id ?? error.frameId);
  if (error instanceof ServiceError) {
    const code: WsErrorCode =
      error.code === 'method_not_allowed' ||
      error.code === 'conflict' ||
      error.code === 'unsupported_media_type'
        ? 'validation'
        : error.code;
    return errorFrame(code, error.message, id);
  }
  logger.error('frame failed', { error: error as Error });
  return errorFrame('internal', 'Something went wrong; the frame was not processed', id);
};
