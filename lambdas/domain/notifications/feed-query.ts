import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';
import { categorySchema, tagSchema } from './categories';

// Apart from the creation schema: esbuild keeps a module's top-level zod calls, so notifications.create would
// carry this schema and the page limit's coercion unused.

/**
 * What GET /notifications lists besides the default feed (neither archived nor snoozed): `unseen`, `unread` and
 * `read` narrow the default feed; `archived` and `snoozed` list those items; `all` is everything not snoozed.
 */
export const FEED_STATES = ['unseen', 'unread', 'read', 'archived', 'snoozed', 'all'] as const;
export type FeedStateFilter = (typeof FEED_STATES)[number];

/** The query of GET /notifications: a page of the caller's feed, optionally narrowed by state. */
export const feedQuerySchema = z.strictObject({
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
  limit: pageLimit(100, 20),
  state: z.optional(
    z
      .enum(FEED_STATES)
      .check(z.describe('which items: absent, the default feed (neither archived nor snoozed)')),
  ),
  category: z.optional(categorySchema.check(z.describe('only items of this category (exact name)'))),
  tag: z.optional(tagSchema.check(z.describe('only items carrying this tag'))),
});
