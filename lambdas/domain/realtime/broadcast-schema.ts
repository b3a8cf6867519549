import { jsonLimits } from '../../core/json-limits';
import { NAME_BREAKING_MESSAGE, NAME_CHARACTERS } from '../../core/text-policy';
import * as z from '../../core/zod';
import { channelSchema } from './channel-schema';
import { SERVER_FRAME_TYPES } from './server-frame-types';

/** A broadcast frame must fit one WebSocket frame (API Gateway's 32 KiB). */
export const MAX_BROADCAST_PAYLOAD_BYTES = 32 * 1024;

const reserved: ReadonlySet<string> = new Set(SERVER_FRAME_TYPES);

/** A broadcast's `type`: never one of the protocol's own frames, which clients would read as such. */
export const broadcastTypeSchema = z.string().check(
  z.minLength(1),
  z.maxLength(64),
  // Clients dispatch on it and log it: a name under the text policy.
  z.regex(NAME_CHARACTERS, NAME_BREAKING_MESSAGE),
  z.describe(`any type but the protocol's own: ${SERVER_FRAME_TYPES.join(', ')}`),
  z.superRefine((type, context) => {
    if (reserved.has(type))
      context.addIssue({
        code: 'custom',
        message: `\`${type}\` is a frame of the protocol itself; choose another type`,
        input: type,
      });
  }),
);

/** Body of POST /broadcast. */
export const broadcastSchema = z.strictObject({
  channel: z.optional(channelSchema()),
  payload: z
    .looseObject({ type: broadcastTypeSchema })
    .check(...jsonLimits<{ type: string }>(MAX_BROADCAST_PAYLOAD_BYTES)),
});
