import { identifierSchema } from '../../core/identifier-schema';
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { refusedJson } from '../../core/refused-json';
import * as z from '../../core/zod';
import {
  CHANNEL_NAME_BOUND,
  CHANNEL_NAME_CHARACTERS,
  CHANNEL_NAME_CHARACTERS_MESSAGE,
  describeChannels,
  MAX_CHANNEL_LENGTH,
} from './channel-names';
import { type ErrorFrame, errorFrame, type WsErrorCode } from './frames';

/** API Gateway's frame limit; a larger message can still reach a handler when sent in fragments. */
export const MAX_CLIENT_FRAME_BYTES = 32 * 1024;

const frameId = z.optional(z.string().check(z.maxLength(IDENTIFIER_CHARACTERS.frameId)));
const name = identifierSchema('channelName').check(
  z.regex(CHANNEL_NAME_CHARACTERS, CHANNEL_NAME_CHARACTERS_MESSAGE),
);
// Its shape and the name's byte bound are parseChannel's to check, with one message for each.
const channel = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(MAX_CHANNEL_LENGTH),
    z.describe(`${describeChannels()}: ${CHANNEL_NAME_BOUND}`),
  );

/** Client frames (contract §4); unknown extra fields are ignored, as clients evolve faster than servers. */
export const CLIENT_FRAMES = {
  auth: z.object({ id: frameId, token: z.string().check(z.minLength(1), z.maxLength(16 * 1024)) }),
  subscribe: z.object({ id: frameId, channel }),
  unsubscribe: z.object({ id: frameId, channel }),
  'join.room': z.object({ id: frameId, room_id: name }),
  'join.topic': z.object({ id: frameId, topic: name }),
  'presence.update': z.object({ id: frameId, status: z.enum(['online', 'away', 'busy']) }),
  reconnect: z.object({
    id: frameId,
    session_id: z.string().check(z.minLength(1), z.maxLength(IDENTIFIER_CHARACTERS.sessionId)),
  }),
  heartbeat: z.object({ id: frameId }),
} as const;

export type ClientFrameType = keyof typeof CLIENT_FRAMES;

export const isClientFrameType = (type: unknown): type is ClientFrameType =>
  typeof type === 'string' && Object.hasOwn(CLIENT_FRAMES, type);

export class FrameError extends Error {
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
  return typeof id === 'string' && id.length <= IDENTIFIER_CHARACTERS.frameId ? id : undefined;
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
  const refused = refusedJson(value);
  if (refused) {
    throw new FrameError(
      'validation',
      `${refused.path.join('.') || '(frame)'}: ${refused.issue}`,
      idOf(value),
    );
  }
  return { type: (value as { type?: unknown }).type, id: idOf(value), value };
};

/**
 * Parses and validates one client frame routed as `routeKey` (a frame type, or `$default` for anything else).
 * Failures are FrameErrors carrying the frame's id when it had a usable one.
 */
export const readClientFrame = (
  routeKey: string,
  body: string | undefined | null,
): { type: ClientFrameType; id?: string; data: z.output<(typeof CLIENT_FRAMES)[ClientFrameType]> } => {
  const parsed = parseFrameBody(body);
  const { id } = parsed;
  if (typeof parsed.type !== 'string')
    throw new FrameError('validation', 'A frame must have a string "type"', id);
  if (!isClientFrameType(parsed.type) || routeKey === '$default' || routeKey !== parsed.type) {
    throw new FrameError('validation', `Unknown frame type "${parsed.type.slice(0, 64)}"`, id);
  }
  const type: ClientFrameType = parsed.type;
  const result = CLIENT_FRAMES[type].safeParse(parsed.value);
  if (!result.success)
    throw new FrameError('validation', `Invalid ${type} frame: ${describeIssues(result.error)}`, id);
  return { type, ...(id === undefined ? {} : { id }), data: result.data };
};

export const frameErrorOf = (error: FrameError, id?: string): ErrorFrame =>
  errorFrame(error.code, error.message, id ?? error.frameId);
