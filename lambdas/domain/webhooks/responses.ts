// Response schemas of the webhook routes (lambdas/core/response-schemas.ts says why they live apart).
import { itemsOf, pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { DELIVERY_STATUSES } from './deliveries-query';

export const webhookSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  event_filters: z.array(z.string()),
  created_at: timestamp,
  enabled: z.boolean(),
  disabled_reason: z.optional(
    z.string().check(z.describe('why the service disabled it (a 410 answer, or failing too long)')),
  ),
});

export const webhookListSchema = itemsOf(webhookSchema);

const attemptSchema = z.strictObject({
  attempt: z
    .int()
    .check(z.gte(1), z.describe('attempt number over the delivery’s life (re-sends continue it)')),
  at: timestamp,
  status_code: z.nullable(z.int()),
  duration_ms: z.number().check(z.gte(0)),
  error: z.nullable(z.string()),
});

export const deliverySchema = z.strictObject({
  id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.array(attemptSchema),
  next_attempt_at: z.nullable(timestamp),
  last_error: z.nullable(z.string()),
  created_at: timestamp,
  updated_at: timestamp,
});

export const deliveryPageSchema = pageOf(deliverySchema);

/** 202 of POST /webhooks/{id}/deliveries/{delivery_id}/retry. */
export const retryAcceptedSchema = z.strictObject({ id: z.string(), status: z.literal('pending') });
