// Apart from schema.ts: POST /notifications takes a throttle too, and esbuild keeps a module's top-level zod calls, so
// importing it from schema.ts would carry the preference schemas into notifications.create. A default rule's throttle
// is in schema.ts for the same reason.
import * as z from '../../core/zod';

/** Counters list the notifications they counted, so a limit stays small enough for a small item. */
export const MAX_THROTTLE_LIMIT = 100;
export const MAX_THROTTLE_WINDOW_SECS = 7 * 24 * 3600;

/** What happens to a notification over the limit (docs/delivery-rules.md "Throttles"). */
export const THROTTLE_OVER = ['feed', 'digest'] as const;
/** What a notification's own throttle counts by; a default rule counts by its own kind. */
export const THROTTLE_PER = ['event_type', 'category'] as const;

export const throttleFields = {
  limit: z.int().check(z.gte(1), z.lte(MAX_THROTTLE_LIMIT)),
  window_secs: z.int().check(z.gte(1), z.lte(MAX_THROTTLE_WINDOW_SECS)),
  over: z.optional(
    z
      .enum(THROTTLE_OVER)
      .check(
        z.describe(
          'Over the limit: `feed` (default) the feed item and a `realtime` frame only; `digest` joins a digest ' +
            "of the recipient's over-limit notifications, sent when the window ends.",
        ),
      ),
  ),
};

export const THROTTLE_SUMMARY =
  'At most `limit` pushes or toasts per recipient per window of `window_secs` (fixed windows from the epoch); ' +
  'over it the feed item and a `realtime` frame only, or a digest at the end of the window (`over`). ' +
  'docs/delivery-rules.md.';

/** A notification's own throttle: counted under its event type, or its category (`per`). */
export const notificationThrottleSchema = z
  .strictObject({
    ...throttleFields,
    per: z.optional(
      z
        .enum(THROTTLE_PER)
        .check(
          z.describe(
            'What it counts by: `event_type` (default) or `category` (needs the notification to have one).',
          ),
        ),
    ),
  })
  .check(z.describe(THROTTLE_SUMMARY));
