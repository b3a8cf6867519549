import * as z from '../../core/zod';
import { TIME_OF_DAY } from '../time-zones';
import { DEFAULT_DIGEST_ITEMS } from './digest-rules';

/** Contract §3 "Digests": the bounds of a digest's window and size. */
export const MAX_DIGEST_WINDOW_SECS = 7 * 24 * 3600;
export const MAX_DIGEST_ITEMS = 50;
export const DIGEST_KEY = /^[A-Za-z0-9_:.-]{1,64}$/;

export const windowSecsSchema = z
  .int()
  .check(
    z.gte(1),
    z.lte(MAX_DIGEST_WINDOW_SECS),
    z.describe('The batch closes this many seconds after its first notification.'),
  );

export const timeOfDaySchema = z
  .string()
  .check(
    z.regex(TIME_OF_DAY, 'must be a time of day HH:MM (00:00 to 23:59)'),
    z.describe(
      "The batch closes at the next HH:MM in the recipient's `time_zone` (preferences; default UTC).",
    ),
  );

/** Exactly one of `window_secs` and `at` (a refinement shared by the notification's and the user's digests). */
export const oneClose = z.superRefine(
  (spec: { window_secs?: number | undefined; at?: string | undefined }, context) => {
    if ((spec.window_secs === undefined) === (spec.at === undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['window_secs'],
        message: 'give exactly one of window_secs and at',
      });
    }
  },
);

/**
 * How a batch closes and what its digest says: a sender's `digest` adds its `key`; a default rule's has none
 * (preferences/schema.ts, apart: esbuild keeps a module's top-level zod calls, and notifications.create needs
 * only the sender's).
 */
export const digestFields = {
  window_secs: z.optional(windowSecsSchema),
  at: z.optional(timeOfDaySchema),
  max_items: z._default(
    z
      .int()
      .check(z.gte(1), z.lte(MAX_DIGEST_ITEMS), z.describe('Items the digest lists (the count is exact).')),
    DEFAULT_DIGEST_ITEMS,
  ),
  title: z.optional(
    z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(256),
        z.describe('Title of the digest; `{count}` is replaced by the number of notifications in it.'),
      ),
  ),
};

export const digestSchema = z
  .strictObject({
    key: z
      .string()
      .check(
        z.regex(DIGEST_KEY, 'must be 1 to 64 characters of A-Z, a-z, 0-9, _, :, . and -'),
        z.describe('Notifications with the same key to the same recipient join one batch (e.g. `post-42`).'),
      ),
    ...digestFields,
  })
  .check(
    oneClose,
    z.describe(
      'Batch this notification per recipient: the first with a key opens a batch, later ones join it, and when ' +
        'it closes one notification goes out carrying the count and up to `max_items` items (docs/digests.md). ' +
        'Exactly one of `window_secs` and `at`, else a 400 on `digest.window_secs`.',
    ),
  );
