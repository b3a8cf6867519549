// Response schemas of the presence and broadcast routes (lambdas/core/response-schemas.ts says why apart).
import { timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { PRESENCE_STATES } from './server-frames';

export const userPresenceSchema = z.strictObject({
  user_id: z.string(),
  status: z.enum(PRESENCE_STATES),
  last_seen_at: z.nullable(timestamp).check(z.describe('now while connected; null if never seen')),
  connections: z.int().check(z.gte(0), z.describe('open connections')),
});

export const scopePresenceSchema = z.strictObject({
  scope: z.string(),
  members: z.array(
    z.strictObject({ user_id: z.string(), status: z.enum(PRESENCE_STATES), last_seen_at: timestamp }),
  ),
  next_cursor: z
    .nullable(z.string())
    .check(z.describe('pass as `cursor` for the members that follow; null on the last page')),
});

export const broadcastAcceptedSchema = z.strictObject({
  recipients: z.int().check(z.gte(0), z.describe('connections the frame is sent to')),
});
