// Response schemas of the topic and subscription routes (lambdas/core/response-schemas.ts says why apart).
import { itemsOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';

export const topicSchema = z.strictObject({
  name: z.string(),
  description: z.nullable(z.string()),
  created_at: timestamp,
  subscriber_count: z.int().check(z.gte(0)),
});

export const subscriptionSchema = z.strictObject({
  id: z.string(),
  topic: z.string(),
  user_id: z.string(),
  created_at: timestamp,
});

export const subscriptionListSchema = itemsOf(subscriptionSchema);
