import { pageLimit } from '../../core/page-limit';
import * as z from '../../core/zod';

/**
 * The query of GET /webhooks/{id}/deliveries, apart from the body of POST /webhooks (schema.ts): a module's
 * schemas are built when it loads, so each route's bundle would carry the other's zod types (7 KiB).
 */
export const DELIVERY_STATUSES = ['pending', 'sending', 'retrying', 'succeeded', 'dead_letter'] as const;

export const listDeliveriesQuerySchema = z.strictObject({
  limit: pageLimit(100, 20),
  cursor: z.optional(z.string().check(z.maxLength(512))),
  status: z.optional(z.enum(DELIVERY_STATUSES)),
});
