import { jsonLimits } from '../../core/json-limits';
import * as z from '../../core/zod';
import { channelPattern, describeChannels } from './channel-names';

/** A broadcast frame must fit one WebSocket frame (API Gateway's 32 KiB). */
export const MAX_BROADCAST_PAYLOAD_BYTES = 32 * 1024;

/** Body of POST /broadcast. */
export const broadcastSchema = z.strictObject({
  channel: z.optional(z.string().check(z.regex(channelPattern(), `must be ${describeChannels()}`))),
  payload: z
    .looseObject({ type: z.string().check(z.minLength(1), z.maxLength(64)) })
    .check(...jsonLimits<{ type: string }>(MAX_BROADCAST_PAYLOAD_BYTES)),
});
