import { z } from 'zod';

export { filterKeysFor, filterMatches } from './filters';

export const MIN_SECRET_CHARS = 16;
export const MAX_FILTERS = 50;

const SEGMENT = '[A-Za-z0-9_-]+';
/** An exact event type (the same rule POST /events applies), `prefix.*`, or `*`. */
const FILTER = new RegExp(`^(?:\\*|${SEGMENT}(?:\\.${SEGMENT})*(?:\\.\\*)?)$`);

/** Contract §3 "Webhooks": the body of POST /webhooks. */
export const createWebhookSchema = z.strictObject({
  url: z.string().min(1).max(2048),
  secret: z.string().min(MIN_SECRET_CHARS).max(1024),
  event_filters: z
    .array(z.string().min(1).max(130).regex(FILTER, 'must be an event type, `prefix.*` or `*`'))
    .min(1)
    .max(MAX_FILTERS)
    .refine((filters) => new Set(filters).size === filters.length, { message: 'must not repeat a filter' }),
  name: z.string().trim().min(1).max(256),
});

export type CreateWebhookInput = z.output<typeof createWebhookSchema>;

export const listDeliveriesQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(512).optional(),
  status: z.enum(['pending', 'sending', 'retrying', 'succeeded', 'dead_letter']).optional(),
});
