// Apart from the responses: the handler validates its query with it, and no bundle carries response schemas.
import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';

/** Push records a page at most (and by default). */
const MAX_PUSH_PAGE = 100;

export const listPushesQuerySchema = z.strictObject({
  limit: pageLimit(MAX_PUSH_PAGE, MAX_PUSH_PAGE),
  cursor: z.optional(z.string().check(z.maxLength(128))),
});
