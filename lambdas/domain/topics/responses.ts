// Response schemas of the topic and subscription routes (lambdas/core/response-schemas.ts says why apart).
import { itemsOf, pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';

export const topicSchema = z.strictObject({
  name: z.string(),
  description: z.nullable(z.string()),
  created_at: timestamp,
  subscriber_count: z.int().check(z.gte(0)),
});

export const topicListSchema = pageOf(topicSchema);

/** DELETE /topics/{name}: accepted; the topic is a 404 from now on, its subscriptions go in the background. */
export const topicDeletionSchema = z.strictObject({
  name: z.string(),
  status: z.literal('deleting'),
});

export const subscriptionSchema = z.strictObject({
  id: z.string(),
  topic: z.string(),
  user_id: z.string(),
  created_at: timestamp,
});

export const subscriptionListSchema = itemsOf(subscriptionSchema);
