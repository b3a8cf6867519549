// Response schemas of the preference routes (lambdas/core/response-schemas.ts says why they live apart).
import { timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { channelSwitches } from './schema';

const switches = channelSwitches;

export const defaultsSchema = z.strictObject({
  rules: z.array(z.strictObject({ event_type: z.string(), channels: switches, required: z.boolean() })),
  updated_at: z.nullable(timestamp),
});

export const preferencesSchema = z.strictObject({
  user_id: z.string(),
  rules: z.array(z.strictObject({ event_type: z.string(), channels: switches })),
  muted_topics: z.array(z.string()),
  digests: z.array(
    z.strictObject({
      event_type: z.optional(z.string()),
      category: z.optional(z.string()),
      window_secs: z.optional(z.int()),
      at: z.optional(z.string()),
    }),
  ),
  updated_at: z.nullable(timestamp).check(z.describe('null while the user has set nothing')),
  defaults: defaultsSchema,
});
