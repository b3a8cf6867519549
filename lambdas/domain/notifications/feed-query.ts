import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';

// Apart from the creation schema: esbuild keeps a module's top-level zod calls, so notifications.create would
// carry this schema and the page limit's coercion unused.

/** The query of GET /notifications: a page of the caller's feed. */
export const feedQuerySchema = z.strictObject({
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(512))),
  limit: pageLimit(100, 20),
});
