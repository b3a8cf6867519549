// Apart from the broadcast body's schema, so that GET /presence bundles only its own.

import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';
import { channelSchema } from './channel-schema';

/** Query of GET /presence. */
export const presenceScopeQuerySchema = z.strictObject({
  scope: channelSchema(['room']),
  // Connections read per page: a room of up to this many members answers in one page, as before paging.
  limit: pageLimit(1000, 1000),
  cursor: z.optional(z.string().check(z.minLength(1), z.maxLength(2048))),
});
