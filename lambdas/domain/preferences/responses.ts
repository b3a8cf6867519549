// Response schemas of the preference routes (lambdas/core/response-schemas.ts says why they live apart).
import { timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { fallbackSchema } from '../notifications/fallback-schema';
import {
  channelSwitches,
  defaultDigestSchema,
  quietHoursDefaults,
  quietHoursSchema,
  throttleSchema,
} from './schema';

const switches = channelSwitches;

/** A rule names an event-type pattern or a category pattern (one of the two). */
const ruleNames = {
  event_type: z.optional(z.string()),
  category: z.optional(z.string()),
};

export const defaultsSchema = z.strictObject({
  rules: z.array(
    z.strictObject({
      ...ruleNames,
      channels: switches,
      required: z.boolean(),
      throttle: z.optional(throttleSchema),
      digest: z.optional(defaultDigestSchema),
      fallback: z.optional(fallbackSchema),
    }),
  ),
  quiet_hours: quietHoursDefaults,
  updated_at: z.nullable(timestamp),
});

export const preferencesSchema = z.strictObject({
  user_id: z.string(),
  rules: z.array(z.strictObject({ ...ruleNames, channels: switches })),
  muted_topics: z.array(z.string()),
  digests: z.array(
    z.strictObject({
      event_type: z.optional(z.string()),
      category: z.optional(z.string()),
      window_secs: z.optional(z.int()),
      at: z.optional(z.string()),
    }),
  ),
  time_zone: z.nullable(z.string()),
  quiet_hours: z.nullable(quietHoursSchema),
  updated_at: z.nullable(timestamp).check(z.describe('null while the user has set nothing')),
  defaults: defaultsSchema,
});
