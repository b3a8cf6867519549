import { jsonLimits } from '../../core/json-limits';
import * as z from '../../core/zod';

/** A broadcast frame must fit one WebSocket frame (API Gateway's 32 KiB). */
export const MAX_BROADCAST_PAYLOAD_BYTES = 32 * 1024;

/** Body of POST /broadcast. */
export const broadcastSchema = z.strictObject({
  channel: z.optional(
    z
      .string()
      .check(z.regex(/^(user|room|topic):\S{1,256}$/, 'must be user:<id>, room:<id> or topic:<name>')),
  ),
  payload: z
    .looseObject({ type: z.string().check(z.minLength(1), z.maxLength(64)) })
    .check(...jsonLimits<{ type: string }>(MAX_BROADCAST_PAYLOAD_BYTES)),
});
