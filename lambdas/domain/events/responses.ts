// Response schema of POST /events (lambdas/core/response-schemas.ts says why it lives apart).
import * as z from '../../core/zod';

export const eventAcceptedSchema = z.strictObject({
  id: z.string().check(z.describe('the event id: `id` of its `event` frames and webhook deliveries')),
  archived: z.boolean(),
});
