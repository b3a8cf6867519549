// Apart from schema.ts: POST /notifications takes a throttle too, and esbuild keeps a module's top-level zod calls, so
// importing it from schema.ts would carry the preference schemas into notifications.create.
import * as z from '../../core/zod';

/** Counters list the notifications they counted, so a limit stays small enough for a small item. */
export const MAX_THROTTLE_LIMIT = 100;
export const MAX_THROTTLE_WINDOW_SECS = 7 * 24 * 3600;

/** At most `limit` pushes or toasts per recipient in each fixed window of `window_secs`. */
export const throttleSchema = z
  .strictObject({
    limit: z.int().check(z.gte(1), z.lte(MAX_THROTTLE_LIMIT)),
    window_secs: z.int().check(z.gte(1), z.lte(MAX_THROTTLE_WINDOW_SECS)),
  })
  .check(
    z.describe(
      'At most `limit` pushes or toasts per recipient per window of `window_secs` (fixed windows from the epoch); ' +
        'over it the feed item and a `realtime` frame only. docs/delivery-rules.md.',
    ),
  );
